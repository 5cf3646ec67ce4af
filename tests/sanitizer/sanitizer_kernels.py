"""Small kernels for the sanitizer's unit tests (kept in a file so diagnostics can show their source)."""

import triton
import triton.language as tl


@triton.jit
def copy_tail(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs <= n)
    tl.store(y_ptr + offs, x + 1.0, mask=offs <= n)


@triton.jit
def matmul_rows_unmasked(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        kk = k + tl.arange(0, BK)
        a = tl.load(a_ptr + offs_m[:, None] * K + kk[None, :], mask=kk[None, :] < K, other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + offs_n[None, :], mask=(kk[:, None] < K) & (offs_n[None, :] < N))
        acc += tl.dot(a, b)
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=c_mask)


@triton.jit
def scale_rows(x_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
    tl.store(x_ptr + row * n_cols + cols, x * 2.0, mask=cols < n_cols)


@triton.jit
def wide_offsets(x_ptr, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * stride + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0)


@triton.jit
def checked_ids(ids_ptr, n, vocab, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ids = tl.load(ids_ptr + offs, mask=offs < n, other=0)
    tl.device_assert(ids < vocab, "token id out of range")


@triton.jit
def uses_inline_asm(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(x_ptr + offs, y)


@triton.jit
def bump(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


@triton.jit
def narrow_descriptor(x_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[stride_m, 1],
                                     block_shape=[BLOCK_M, BLOCK_N])
    tile = desc.load([tl.program_id(0) * BLOCK_M, 0])
    desc.store([tl.program_id(0) * BLOCK_M, 0], tile + 1.0)
