"""Scale-and-copy between two rank-5 tensors of different layouts (output is a permuted view)."""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def copy5d_kernel(
    x_ptr,
    y_ptr,
    S0,
    S1,
    S2,
    S3,
    S4,
    xs0,
    xs1,
    xs2,
    xs3,
    xs4,
    ys0,
    ys1,
    ys2,
    ys3,
    ys4,
    alpha,
    B3: tl.constexpr,
    B4: tl.constexpr,
):
    pid = tl.program_id(0)
    i2 = pid % S2
    i1 = (pid // S2) % S1
    i0 = pid // (S2 * S1)
    x_bp = tl.make_block_ptr(
        x_ptr,
        (S0, S1, S2, S3, S4),
        (xs0, xs1, xs2, xs3, xs4),
        (i0, i1, i2, 0, 0),
        (1, 1, 1, B3, B4),
        (4, 3, 2, 1, 0),
    )
    y_bp = tl.make_block_ptr(
        y_ptr,
        (S0, S1, S2, S3, S4),
        (ys0, ys1, ys2, ys3, ys4),
        (i0, i1, i2, 0, 0),
        (1, 1, 1, B3, B4),
        (3, 4, 2, 1, 0),
    )
    for _ in range(0, S3, B3):
        x = tl.load(x_bp, boundary_check=(3, 4), padding_option="zero")
        tl.store(y_bp, x * alpha, boundary_check=(3, 4))
        x_bp = tl.advance(x_bp, (0, 0, 0, B3, 0))
        y_bp = tl.advance(y_bp, (0, 0, 0, B3, 0))


def cases():
    return [dict(S=(2, 2, 2, 16, 8)), dict(S=(1, 3, 2, 13, 5)), dict(S=(2, 1, 1, 40, 3))]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(S=(8, 8, 8, 64, 64))


def make_inputs(rng, S):
    return {
        "x": rng.standard_normal(S).astype(np.float32),
        "y": rng.standard_normal((S[0], S[1], S[2], S[4], S[3])).astype(np.float32),
    }


def launch(kernels, t, S):
    x, y = t["x"], t["y"].transpose(3, 4)  # y viewed as S, last two dims swapped in memory
    kernels.copy5d_kernel[(S[0] * S[1] * S[2],)](x, y, *S, *x.stride(), *y.stride(), 0.5, B3=8, B4=8)


def reference(x, S):
    return {"y": np.swapaxes(x["x"] * 0.5, 3, 4)}
