"""Row maxima over column tiles loaded with padding_option="nan"; padding becomes -inf before the max."""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def rowmax_kernel(x_ptr, out_ptr, M, N, stride_xm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    tl.static_assert(BLOCK_N >= 16, "BLOCK_N must be at least 16")
    pid = tl.program_id(0)
    x_bp = tl.make_block_ptr(x_ptr, (M, N), (stride_xm, 1), (pid * BLOCK_M, 0), (BLOCK_M, BLOCK_N), (1, 0))
    best = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    for _ in range(0, N, BLOCK_N):
        x = tl.load(x_bp, boundary_check=(0, 1), padding_option="nan")
        x = tl.where(x != x, float("-inf"), x)  # NaN marks padding
        best = tl.maximum(best, tl.max(x, axis=1))
        x_bp = tl.advance(x_bp, (0, BLOCK_N))
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(out_ptr + rows, best, mask=rows < M)


def cases():
    return [dict(M=32, N=64), dict(M=19, N=52), dict(M=4, N=20)]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(M=4096, N=4096)


def make_inputs(rng, M, N):
    return {
        "x": (rng.standard_normal((M, N)) - 5).astype(np.float32),
        "out": rng.standard_normal(M).astype(np.float32),
    }


def launch(kernels, t, M, N):
    kernels.rowmax_kernel[(triton.cdiv(M, 16),)](
        t["x"], t["out"], M, N, t["x"].stride(0), BLOCK_M=16, BLOCK_N=16
    )


def reference(x, M, N):
    return {"out": x["x"].max(axis=1)}
