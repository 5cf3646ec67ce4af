"""Row-wise dot products sum_j a[i, j] * b[i, j], carrying a tuple of two block pointers through the loop."""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def rowdot_kernel(
    a_ptr, b_ptr, out_ptr, M, N, stride_am, stride_bm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    pid = tl.program_id(0)
    ptrs = (
        tl.make_block_ptr(a_ptr, (M, N), (stride_am, 1), (pid * BLOCK_M, 0), (BLOCK_M, BLOCK_N), (1, 0)),
        tl.make_block_ptr(b_ptr, (M, N), (stride_bm, 1), (pid * BLOCK_M, 0), (BLOCK_M, BLOCK_N), (1, 0)),
    )
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for _ in range(0, N, BLOCK_N):
        a = tl.load(ptrs[0], boundary_check=(0, 1))
        b = tl.load(ptrs[1], boundary_check=(0, 1))
        acc += tl.sum(a * b, axis=1)
        ptrs = (tl.advance(ptrs[0], (0, BLOCK_N)), tl.advance(ptrs[1], (0, BLOCK_N)))
    out_bp = tl.make_block_ptr(out_ptr, (M,), (1,), (pid * BLOCK_M,), (BLOCK_M,), (0,))
    tl.store(out_bp, acc, boundary_check=(0,))


def cases():
    return [dict(M=32, N=64), dict(M=30, N=70), dict(M=7, N=17)]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(M=4096, N=4096)


def make_inputs(rng, M, N):
    return {
        "a": rng.standard_normal((M, N)).astype(np.float32),
        "b": rng.standard_normal((M, N)).astype(np.float32),
        "out": rng.standard_normal(M).astype(np.float32),
    }


def launch(kernels, t, M, N):
    kernels.rowdot_kernel[(triton.cdiv(M, 16),)](
        t["a"], t["b"], t["out"], M, N, t["a"].stride(0), t["b"].stride(0), BLOCK_M=16, BLOCK_N=32
    )


def reference(x, M, N):
    return {"out": (x["a"] * x["b"]).sum(axis=1)}
