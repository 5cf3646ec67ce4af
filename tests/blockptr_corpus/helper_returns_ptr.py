"""Elementwise a + b where a helper jit function builds and returns the block pointers."""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def _tile_ptr(base, M, N, stride_m, pid_m, pid_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    return tl.make_block_ptr(
        base,
        shape=(M, N),
        strides=(stride_m, 1),
        offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
        block_shape=(BLOCK_M, BLOCK_N),
        order=(1, 0),
    )


@triton.jit
def add_kernel(
    a_ptr, b_ptr, c_ptr, M, N, stride_am, stride_bm, stride_cm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a = tl.load(_tile_ptr(a_ptr, M, N, stride_am, pid_m, pid_n, BLOCK_M, BLOCK_N), boundary_check=(0, 1))
    b_tile = _tile_ptr(b_ptr, M, N, stride_bm, pid_m, pid_n, BLOCK_M, BLOCK_N)
    b = tl.load(b_tile, boundary_check=(0, 1))
    c_tile = _tile_ptr(c_ptr, M, N, stride_cm, pid_m, pid_n, BLOCK_M, BLOCK_N)
    tl.store(c_tile, a + b, boundary_check=(0, 1))


def cases():
    return [dict(M=32, N=32), dict(M=33, N=47), dict(M=5, N=100)]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(M=4096, N=4096)


def make_inputs(rng, M, N):
    return {name: rng.standard_normal((M, N)).astype(np.float32) for name in ("a", "b", "c")}


def launch(kernels, t, M, N):
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    kernels.add_kernel[grid](
        t["a"],
        t["b"],
        t["c"],
        M,
        N,
        t["a"].stride(0),
        t["b"].stride(0),
        t["c"].stride(0),
        BLOCK_M=16,
        BLOCK_N=16,
    )


def reference(x, M, N):
    return {"c": x["a"] + x["b"]}
