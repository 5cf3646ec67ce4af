"""The conformance cases of the Gluon kernels: inputs, how to launch, float64 reference, tolerance.

Shared by the CPU tests (``test_conformance.py``) and the H200 golden run (``golden.py``), which
must see the same inputs; nothing here imports tilescope.
"""

from __future__ import annotations

import torch

from tests.frontends.gluon import kernels as gk

SEED = 20261202
ONE_ROUNDING = 2.0**-23


#: explicit layouts whose reduction order differs from Triton's coalescing rule (8 elements per thread,
#: lanes and warps split along the reduced axis, a column-major block); atol: the dtype's rounding of
#: each add (bf16 and fp16 add in their dtype)
SUM_LAYOUTS = [
    ("bf16", 1, ([1, 8], [8, 4], [4, 1], [1, 0]), 0.5),
    ("bf16", 0, ([2, 1], [16, 2], [2, 2], [0, 1]), 0.5),
    ("fp16", 1, ([1, 2], [1, 32], [1, 4], [1, 0]), 0.1),
    ("fp32", 0, ([4, 1], [8, 4], [1, 4], [0, 1]), 1e-4),
]


def normal(gen, *shape, dtype=torch.float32):
    # non-zero inputs: a zero would hide a lane that was never written
    x = torch.randn(*shape, generator=gen)
    x[x.abs() < 1e-3] = 0.5
    return x.to(dtype)


def f64(t):
    return t.double().numpy()


def cases(gen, device="cpu"):
    """(name, run the kernel with ``run``, float64 reference, rtol, atol) per conformance kernel;
    inputs are drawn on the CPU (the same on every machine), the kernels run on ``device``."""
    x, y = normal(gen, 1000), normal(gen, 1000)
    s = normal(gen, 37, 100)
    ln_x, w, b = normal(gen, 30, 64), normal(gen, 64), normal(gen, 64)
    t = normal(gen, 70, 45)
    m = normal(gen, 500)  # 500 = 7 full TMA boxes of 64 and one the tensor clips
    pa, pb = normal(gen, 100, 200), normal(gen, 100, 200)  # partial boxes along both dimensions
    r = normal(gen, 100, 64)  # 100 rows: the last 32-row box is clipped
    half = torch.float16
    A, B, Bt = (
        normal(gen, 100, 96, dtype=half),
        normal(gen, 96, 80, dtype=half),
        normal(gen, 80, 96, dtype=half),
    )
    # drawn after the others, so that adding them left the earlier cases' inputs (and goldens) as they were
    sums = {"bf16": normal(gen, 64, 128, dtype=torch.bfloat16), "fp16": normal(gen, 32, 256, dtype=half),
            "fp32": normal(gen, 128, 64)}  # fmt: skip
    e = torch.exp(s.double() - s.double().max(1, keepdim=True).values)
    mean, var = ln_x.double().mean(1, keepdim=True), ln_x.double().var(1, unbiased=False, keepdim=True)
    ln_ref = ((ln_x.double() - mean) / torch.sqrt(var + 1e-5) * w.double() + b.double()).numpy()

    def on(*tensors):
        return [t.to(device) for t in tensors]

    return [
        ("vector_add", lambda run: gk.vector_add(*on(x, y), run), f64(x) + f64(y), ONE_ROUNDING, 0),
        ("softmax", lambda run: gk.softmax(*on(s), run), (e / e.sum(1, keepdim=True)).numpy(), 1e-5, 1e-7),
        ("layer_norm", lambda run: gk.layer_norm(*on(ln_x, w, b), run), ln_ref, 1e-5, 1e-5),
        ("transpose", lambda run: gk.transpose(*on(t), run), f64(t).T, 0, 0),
        ("memcpy_1d_tma", lambda run: gk.memcpy_1d_tma(*on(m), run), f64(m), 0, 0),
        ("copy_rows[device descriptors]", lambda run: gk.copy_rows(*on(r), run, BLOCK_M=32), f64(r), 0, 0),
        ("scale_tma", lambda run: gk.scale_tma(*on(m), run), 2 * f64(m), 0, 0),  # x * 2 is exact
        *[(f"add_tma_pipelined[{n}]", lambda run, n=n: gk.add_tma_pipelined(*on(pa, pb), run, num_buffers=n),
           f64(pa) + f64(pb), ONE_ROUNDING, 0) for n in (1, 2, 3)],
        *[(f"add_warp_specialized[{n}]", lambda run, n=n: gk.add_warp_specialized(*on(pa, pb), run,
                                                                                   NUM_BUFFERS=n),
           f64(pa) + f64(pb), ONE_ROUNDING, 0) for n in (1, 2, 3)],
        ("blocked_mma", lambda run: gk.blocked_mma(*on(A, B), run), f64(A) @ f64(B), 0, 1e-4),
        *[(f"block_sum[{dt},axis={axis}]", lambda run, dt=dt, axis=axis, lay=lay: gk.block_sum(
            *on(sums[dt]), axis, lay, run), f64(sums[dt]).sum(axis), 0, tol)
          for dt, axis, lay, tol in SUM_LAYOUTS],
        ("blocked_mma[TRANSPOSE_B]", lambda run: gk.blocked_mma(*on(A, Bt), run, TRANSPOSE_B=True),
         f64(A) @ f64(Bt).T, 0, 1e-4),
    ]  # fmt: skip
