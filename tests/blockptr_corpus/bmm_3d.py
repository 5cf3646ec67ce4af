"""Batched matmul with rank-3 block pointers (one batch per tile, block shape [1, BM, BK])."""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def bmm_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    BATCH,
    M,
    N,
    K,
    stride_ab,
    stride_am,
    stride_bb,
    stride_bk,
    stride_cb,
    stride_cm,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    tl.static_assert(BLOCK_K >= 16, "tl.dot needs BLOCK_K >= 16")
    tl.static_assert(BLOCK_N >= 16, "tl.dot needs BLOCK_N >= 16")
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    bid = tl.program_id(2)
    a_bp = tl.make_block_ptr(
        a_ptr,
        (BATCH, M, K),
        (stride_ab, stride_am, 1),
        (bid, pid_m * BLOCK_M, 0),
        (1, BLOCK_M, BLOCK_K),
        (2, 1, 0),
    )
    b_bp = tl.make_block_ptr(
        b_ptr,
        (BATCH, K, N),
        (stride_bb, stride_bk, 1),
        (bid, 0, pid_n * BLOCK_N),
        (1, BLOCK_K, BLOCK_N),
        (2, 1, 0),
    )
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(tl.cdiv(K, BLOCK_K)):
        a = tl.reshape(tl.load(a_bp, boundary_check=(0, 1, 2)), (BLOCK_M, BLOCK_K))
        b = tl.reshape(tl.load(b_bp, boundary_check=(0, 1, 2)), (BLOCK_K, BLOCK_N))
        acc += tl.dot(a, b)
        a_bp = tl.advance(a_bp, (0, 0, BLOCK_K))
        b_bp = tl.advance(b_bp, (0, BLOCK_K, 0))
    c_bp = tl.make_block_ptr(
        c_ptr,
        (BATCH, M, N),
        (stride_cb, stride_cm, 1),
        (bid, pid_m * BLOCK_M, pid_n * BLOCK_N),
        (1, BLOCK_M, BLOCK_N),
        (2, 1, 0),
    )
    tl.store(c_bp, tl.reshape(acc, (1, BLOCK_M, BLOCK_N)).to(tl.float16), boundary_check=(0, 1, 2))


def cases():
    return [dict(B=2, M=32, N=32, K=64), dict(B=3, M=20, N=40, K=24), dict(B=1, M=50, N=16, K=48)]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(B=16, M=512, N=512, K=512)


def make_inputs(rng, B, M, N, K):
    return {
        "a": rng.standard_normal((B, M, K)).astype(np.float16),
        "b": rng.standard_normal((B, K, N)).astype(np.float16),
        "c": rng.standard_normal((B, M, N)).astype(np.float16),
    }


def launch(kernels, t, B, M, N, K):
    a, b, c = t["a"], t["b"], t["c"]
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16), B)
    kernels.bmm_kernel[grid](
        a,
        b,
        c,
        B,
        M,
        N,
        K,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        BLOCK_M=16,
        BLOCK_N=16,
        BLOCK_K=16,
    )


def reference(x, B, M, N, K):
    return {"c": x["a"] @ x["b"]}
