"""RMSNorm over [M, D] rows, BLOCK_M rows per program; D is a constexpr so the column dimension is exact."""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, M, stride_xm, stride_ym, eps, D: tl.constexpr, BLOCK_M: tl.constexpr):
    tl.static_assert(D >= 16, "rmsnorm kernel needs D >= 16")
    pid = tl.program_id(0)
    x_bp = tl.make_block_ptr(x_ptr, (M, D), (stride_xm, 1), (pid * BLOCK_M, 0), (BLOCK_M, D), (1, 0))
    w_bp = tl.make_block_ptr(w_ptr, (D,), (1,), (0,), (D,), (0,))
    y_bp = tl.make_block_ptr(y_ptr, (M, D), (stride_ym, 1), (pid * BLOCK_M, 0), (BLOCK_M, D), (1, 0))
    x = tl.load(x_bp, boundary_check=(0,)).to(tl.float32)
    w = tl.load(w_bp)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=1) / D + eps)
    tl.store(y_bp, (x * rstd[:, None] * w[None, :]).to(tl.float16), boundary_check=(0,))


def cases():
    return [dict(M=32, D=64), dict(M=27, D=32), dict(M=3, D=16)]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(M=65536, D=128)


def make_inputs(rng, M, D):
    return {
        "x": rng.standard_normal((M, D)).astype(np.float16),
        "w": rng.standard_normal(D).astype(np.float32),
        "y": rng.standard_normal((M, D)).astype(np.float16),
    }


def launch(kernels, t, M, D):
    kernels.rmsnorm_kernel[(triton.cdiv(M, 8),)](
        t["x"], t["w"], t["y"], M, t["x"].stride(0), t["y"].stride(0), 1e-6, D=D, BLOCK_M=8
    )


def reference(x, M, D):
    rstd = 1 / np.sqrt((x["x"] ** 2).mean(axis=1) + 1e-6)
    return {"y": x["x"] * rstd[:, None] * x["w"]}
