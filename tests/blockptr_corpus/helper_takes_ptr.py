"""Row scaling through helper jit functions that take block pointers as arguments."""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def _load_tile(ptr):
    return tl.load(ptr, boundary_check=(0, 1), padding_option="zero")


@triton.jit
def _store_tile(ptr, value):
    tl.store(ptr, value, boundary_check=(0, 1))


@triton.jit
def scale_rows_kernel(
    x_ptr, s_ptr, y_ptr, M, N, stride_xm, stride_ym, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    pid_m = tl.program_id(0)
    x_bp = tl.make_block_ptr(x_ptr, (M, N), (stride_xm, 1), (pid_m * BLOCK_M, 0), (BLOCK_M, BLOCK_N), (1, 0))
    y_bp = tl.make_block_ptr(y_ptr, (M, N), (stride_ym, 1), (pid_m * BLOCK_M, 0), (BLOCK_M, BLOCK_N), (1, 0))
    s_bp = tl.make_block_ptr(s_ptr, (M,), (1,), (pid_m * BLOCK_M,), (BLOCK_M,), (0,))
    s = tl.load(s_bp, boundary_check=(0,))
    for _ in range(0, N, BLOCK_N):
        x = _load_tile(x_bp)
        _store_tile(y_bp, (x * s[:, None]).to(y_ptr.dtype.element_ty))
        x_bp = tl.advance(x_bp, (0, BLOCK_N))
        y_bp = tl.advance(y_bp, (0, BLOCK_N))


def cases():
    return [dict(M=32, N=64), dict(M=27, N=45), dict(M=9, N=130)]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(M=4096, N=4096)


def make_inputs(rng, M, N):
    return {
        "x": rng.standard_normal((M, N)).astype(np.float32),
        "s": rng.standard_normal(M).astype(np.float32),
        "y": rng.standard_normal((M, N)).astype(np.float32),
    }


def launch(kernels, t, M, N):
    kernels.scale_rows_kernel[(triton.cdiv(M, 16),)](
        t["x"], t["s"], t["y"], M, N, t["x"].stride(0), t["y"].stride(0), BLOCK_M=16, BLOCK_N=32
    )


def reference(x, M, N):
    return {"y": x["x"] * x["s"][:, None]}
