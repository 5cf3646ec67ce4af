"""Complex multiply on interleaved [M, 2] float32 data: the tile's last dimension is 8 bytes (< 16)."""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def complex_mul_kernel(x_ptr, y_ptr, z_ptr, M, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    x_bp = tl.make_block_ptr(x_ptr, (M, 2), (2, 1), (pid * BLOCK_M, 0), (BLOCK_M, 2), (1, 0))
    y_bp = tl.make_block_ptr(y_ptr, (M, 2), (2, 1), (pid * BLOCK_M, 0), (BLOCK_M, 2), (1, 0))
    z_bp = tl.make_block_ptr(z_ptr, (M, 2), (2, 1), (pid * BLOCK_M, 0), (BLOCK_M, 2), (1, 0))
    x = tl.load(x_bp, boundary_check=(0,))
    y = tl.load(y_bp, boundary_check=(0,))
    xr, xi = tl.split(x)
    yr, yi = tl.split(y)
    z = tl.join(xr * yr - xi * yi, xr * yi + xi * yr)
    tl.store(z_bp, z, boundary_check=(0,))


def cases():
    return [dict(M=64), dict(M=45), dict(M=3)]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(M=4194304)


def make_inputs(rng, M):
    return {name: rng.standard_normal((M, 2)).astype(np.float32) for name in ("x", "y", "z")}


def launch(kernels, t, M):
    kernels.complex_mul_kernel[(triton.cdiv(M, 16),)](t["x"], t["y"], t["z"], M, BLOCK_M=16)


def reference(x, M):
    a = x["x"][:, 0] + 1j * x["x"][:, 1]
    b = x["y"][:, 0] + 1j * x["y"][:, 1]
    return {"z": np.stack([(a * b).real, (a * b).imag], axis=1)}
