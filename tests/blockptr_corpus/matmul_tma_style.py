"""Matmul written for TMA: contiguous rows (literal unit strides), every load boundary-checked."""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def matmul_tma_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_bk,
    stride_cm,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    tl.static_assert(BLOCK_K >= 16, "BLOCK_K must be at least 16 for tl.dot")
    tl.static_assert(BLOCK_N >= 16, "BLOCK_N must be at least 16 for tl.dot")
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (stride_am, 1), (pid_m * BLOCK_M, 0), (BLOCK_M, BLOCK_K), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (stride_bk, 1), (0, pid_n * BLOCK_N), (BLOCK_K, BLOCK_N), (1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        a = tl.load(a_bp, boundary_check=(0, 1))
        b = tl.load(b_bp, boundary_check=(0, 1))
        acc = tl.dot(a, b, acc)
        a_bp = tl.advance(a_bp, (0, BLOCK_K))
        b_bp = tl.advance(b_bp, (BLOCK_K, 0))
    c_bp = tl.make_block_ptr(
        c_ptr, (M, N), (stride_cm, 1), (pid_m * BLOCK_M, pid_n * BLOCK_N), (BLOCK_M, BLOCK_N), (1, 0)
    )
    tl.store(c_bp, acc.to(tl.float16), boundary_check=(0, 1))


def cases():
    return [dict(M=64, N=64, K=64), dict(M=40, N=48, K=88), dict(M=100, N=24, K=16)]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(M=2048, N=2048, K=2048)


def make_inputs(rng, M, N, K):
    return {
        "a": rng.standard_normal((M, K)).astype(np.float16),
        "b": rng.standard_normal((K, N)).astype(np.float16),
        "c": rng.standard_normal((M, N)).astype(np.float16),
    }


def launch(kernels, t, M, N, K):
    a, b, c = t["a"], t["b"], t["c"]
    grid = (triton.cdiv(M, 32) * triton.cdiv(N, 32),)
    kernels.matmul_tma_kernel[grid](
        a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32
    )


def reference(x, M, N, K):
    return {"c": x["a"] @ x["b"]}
