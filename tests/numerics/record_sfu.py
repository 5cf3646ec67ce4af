"""Record the H200's special function unit: the tables ``tilescope.engine.sfu`` reads, and samples.

Self-contained (NumPy, torch, Triton): runs on the GPU through the ``device`` tool. Each
instruction runs through ``tl.inline_asm_elementwise`` on every point of its grid — the 2**23
significands of [1, 2) for ``rcp.approx.ftz.f32``, the 2**24 of [1, 4) for ``rsqrt``/``sqrt``, the
2**23 fixed-point fractions k / 2**23 of [0, 1) and of (-1, 0] for ``ex2.approx.ftz.f32`` — and the
difference from the correctly rounded value (float64, rounded to float32) is stored two bits an
entry (``sm90_<table>.npy``: copy them to ``src/tilescope/engine/data/``). For ``ex2`` that value is
``np.exp2``'s here and the engine's deterministic reference there (``make_ex2_reference.py``, which
checks that the two round alike at every grid point). It also writes
``sfu_samples.npz`` (copy it to ``tests/numerics/``): 4,096 random inputs per instruction over
±60 binades (±126 for ``ex2``), the specials (zeros, infinities, NaN, subnormals, the ends of the
range) and 4,096 ``div.full.f32`` pairs, with what the H200 gave, which ``test_sfu.py`` checks the
engine against without a GPU.

    python tests/numerics/record_sfu.py --out $OUT
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
import triton
import triton.language as tl

#: table name -> (instruction, grid, correctly rounded function, offset of the two-bit codes)
GRID = np.arange(2**23, dtype=np.float64)
SIGNIFICANDS = 1 + GRID / 2**23
SIGNIFICANDS_4 = np.concatenate([SIGNIFICANDS, 2 + GRID / 2**22])
TABLES = {
    "rcp": ("rcp.approx.ftz.f32", SIGNIFICANDS, lambda v: 1 / v, 1),
    "rsqrt": ("rsqrt.approx.ftz.f32", SIGNIFICANDS_4, lambda v: 1 / np.sqrt(v), 2),
    "sqrt": ("sqrt.approx.ftz.f32", SIGNIFICANDS_4, np.sqrt, 1),
    "ex2_pos": ("ex2.approx.ftz.f32", GRID / 2**23, np.exp2, 1),
    "ex2_neg": ("ex2.approx.ftz.f32", -GRID / 2**23, np.exp2, 2),
}
SPECIALS = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -2.5, 1e-40, -1e-40, 2**-126, 2**-127, 2**126, 2**127,
     3e38, 1.5, 2**-149, 127.99, 128.0, -126.0, -126.5, -149.0, -150.0],
    np.float32,
)  # fmt: skip


@triton.jit
def _unary(x_ptr, y_ptr, n, ASM: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.inline_asm_elementwise(ASM, "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def _binary(a_ptr, b_ptr, y_ptr, n, ASM: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    y = tl.inline_asm_elementwise(ASM, "=f,f,f", [a, b], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y, mask=mask)


def on_gpu(instruction: str, *operands: np.ndarray) -> np.ndarray:
    """``instruction`` applied elementwise on the GPU to float32 ``operands``."""
    ts = [torch.from_numpy(np.ascontiguousarray(x, np.float32)).cuda() for x in operands]
    y = torch.empty_like(ts[0])
    kernel, regs = (_unary, "$0, $1") if len(ts) == 1 else (_binary, "$0, $1, $2")
    kernel[(triton.cdiv(y.numel(), 1024),)](*ts, y, y.numel(), f"{instruction} {regs};", 1024)
    return y.cpu().numpy()


def bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).view(np.int32).astype(np.int64)


def pack(delta: np.ndarray, offset: int) -> np.ndarray:
    """Differences of -offset .. 3 - offset ulps, four to a byte (the first in the low bits)."""
    codes = delta + offset
    if codes.min() < 0 or codes.max() > 3:
        raise ValueError(f"a difference outside two bits: {delta.min()} .. {delta.max()}")
    c = codes.astype(np.uint8).reshape(-1, 4)
    return c[:, 0] | (c[:, 1] << 2) | (c[:, 2] << 4) | (c[:, 3] << 6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    out = parser.parse_args().out
    for name, (instruction, grid, exact, offset) in TABLES.items():
        got = on_gpu(instruction, grid.astype(np.float32))
        delta = bits(got) - bits(exact(grid).astype(np.float32))
        np.save(out / f"sm90_{name}.npy", pack(delta, offset))
        values, counts = np.unique(delta, return_counts=True)
        print(name, "differences", dict(zip(values.tolist(), counts.tolist(), strict=True)))
    rng = np.random.default_rng(20261202)
    samples = {}
    for op in ("rcp", "rsqrt", "sqrt", "ex2"):
        if op == "ex2":
            x = rng.uniform(-126, 127, 4096)
        else:
            x = np.ldexp(rng.uniform(1, 2, 4096), rng.integers(-60, 60, 4096))
        x = np.concatenate([x.astype(np.float32), SPECIALS])
        samples[f"{op}.x"], samples[f"{op}.y"] = x, on_gpu(f"{op}.approx.ftz.f32", x)
    a, b = (np.ldexp(rng.standard_normal(4096), rng.integers(-40, 40, 4096)).astype(np.float32) for _ in "ab")
    samples["div.a"], samples["div.b"], samples["div.y"] = a, b, on_gpu("div.full.f32", a, b)
    np.savez_compressed(out / "sfu_samples.npz", **samples)


if __name__ == "__main__":
    main()
