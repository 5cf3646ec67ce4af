"""Add a per-head bias to a [B, H, T, D] activation with rank-4 block pointers; D is covered exactly."""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def head_bias_kernel(
    x_ptr, bias_ptr, y_ptr, B, H, T, stride_b, stride_h, stride_t, D: tl.constexpr, BLOCK_T: tl.constexpr
):
    tl.static_assert(D >= 16, "head dim below 16 is not supported")
    pid_t = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    x_bp = tl.make_block_ptr(
        x_ptr,
        (B, H, T, D),
        (stride_b, stride_h, stride_t, 1),
        (b, h, pid_t * BLOCK_T, 0),
        (1, 1, BLOCK_T, D),
        (3, 2, 1, 0),
    )
    y_bp = tl.make_block_ptr(
        y_ptr,
        (B, H, T, D),
        (stride_b, stride_h, stride_t, 1),
        (b, h, pid_t * BLOCK_T, 0),
        (1, 1, BLOCK_T, D),
        (3, 2, 1, 0),
    )
    bias_bp = tl.make_block_ptr(bias_ptr, (H, D), (D, 1), (h, 0), (1, D), (1, 0))
    x = tl.load(x_bp, boundary_check=(0, 1, 2))
    bias = tl.load(bias_bp, boundary_check=(0,))
    y = x + tl.reshape(bias, (1, 1, 1, D))
    tl.store(y_bp, y, boundary_check=(0, 1, 2))


def cases():
    return [dict(B=2, H=2, T=32, D=16), dict(B=1, H=3, T=21, D=32), dict(B=2, H=1, T=5, D=16)]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(B=8, H=16, T=2048, D=64)


def make_inputs(rng, B, H, T, D):
    return {
        "x": rng.standard_normal((B, H, T, D)).astype(np.float32),
        "bias": rng.standard_normal((H, D)).astype(np.float32),
        "y": rng.standard_normal((B, H, T, D)).astype(np.float32),
    }


def launch(kernels, t, B, H, T, D):
    x = t["x"]
    kernels.head_bias_kernel[(triton.cdiv(T, 16), B * H)](
        x, t["bias"], t["y"], B, H, T, x.stride(0), x.stride(1), x.stride(2), D=D, BLOCK_T=16
    )


def reference(x, B, H, T, D):
    return {"y": x["x"] + x["bias"][None, :, None, :]}
