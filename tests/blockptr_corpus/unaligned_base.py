"""Copy-and-scale of a window at an arbitrary element: block pointer bases are not 16-byte aligned."""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def window_scale_kernel(
    x_ptr, y_ptr, row0, col0, H, W, stride_x, stride_y, alpha, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr
):
    pid_h = tl.program_id(0)
    pid_w = tl.program_id(1)
    x_bp = tl.make_block_ptr(
        x_ptr + row0 * stride_x + col0,
        (H, W),
        (stride_x, 1),
        (pid_h * BLOCK_H, pid_w * BLOCK_W),
        (BLOCK_H, BLOCK_W),
        (1, 0),
    )
    y_bp = tl.make_block_ptr(
        y_ptr + 1, (H, W), (stride_y, 1), (pid_h * BLOCK_H, pid_w * BLOCK_W), (BLOCK_H, BLOCK_W), (1, 0)
    )
    tl.store(y_bp, tl.load(x_bp, boundary_check=(0, 1)) * alpha, boundary_check=(0, 1))


def cases():
    return [
        dict(R=40, C=40, r0=3, c0=5, H=32, W=32),
        dict(R=50, C=37, r0=1, c0=1, H=45, W=33),
        dict(R=9, C=70, r0=0, c0=7, H=9, W=60),
    ]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(R=4096, C=4096, r0=3, c0=5, H=4000, W=4000)


def make_inputs(rng, R, C, r0, c0, H, W):
    return {
        "x": rng.standard_normal((R, C)).astype(np.float32),
        "y": rng.standard_normal(H * W + 1).astype(np.float32),
    }


def launch(kernels, t, R, C, r0, c0, H, W):
    grid = (triton.cdiv(H, 16), triton.cdiv(W, 16))
    kernels.window_scale_kernel[grid](t["x"], t["y"], r0, c0, H, W, C, W, 1.5, BLOCK_H=16, BLOCK_W=16)


def reference(x, R, C, r0, c0, H, W):
    y = x["y"].copy()
    y[1:] = (x["x"][r0 : r0 + H, c0 : c0 + W] * 1.5).reshape(-1)
    return {"y": y}
