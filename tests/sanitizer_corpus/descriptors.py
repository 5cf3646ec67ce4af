"""Tensor descriptors: broken TMA rules, descriptor extents past the allocation, padding past the shape."""

import numpy as np
import torch
import triton
import triton.language as tl

from . import SanitizerCase, rand


@triton.jit
def desc_scale(x_ptr, y_ptr, M, N, stride_xm, stride_ym, alpha, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(  # BUG: descriptor rule
        x_ptr,
        shape=[M, N],
        strides=[stride_xm, 1],
        block_shape=[BLOCK_M, BLOCK_N],
    )
    y_desc = tl.make_tensor_descriptor(  # BUG: descriptor rule
        y_ptr,
        shape=[M, N],
        strides=[stride_ym, 1],
        block_shape=[BLOCK_M, BLOCK_N],
    )
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    x = x_desc.load([off_m, off_n])
    y_desc.store([off_m, off_n], x * alpha)


def _scale_args(x_of):
    def make(rng):
        x = x_of(rng)
        M, N = x.shape
        y = torch.empty(M, x.stride(0))[:, :N]  # same row pitch as the input
        return [x, y, M, N, x.stride(0), y.stride(0), 2.0], {"BLOCK_M": 16, "BLOCK_N": 16}

    return make


def _misaligned(rng):
    buf = rand(rng, 24 * 32 + 1)
    return buf[1:].view(24, 32)  # 4 bytes past a 64-byte aligned allocation


def _aligned_offset(rng):
    buf = rand(rng, 24 * 32 + 4)
    return buf[4:].view(24, 32)  # 16 bytes past it: still aligned


def _odd_row_stride(rng):
    return rand(rng, 24, 33)  # row stride 132 bytes


def _padded_row_stride(rng):
    return rand(rng, 24, 36)[:, :33]  # row stride 144 bytes, 33 live columns


@triton.jit
def desc_rowwise_narrow_block(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    desc = tl.make_tensor_descriptor(  # BUG: descriptor rule
        x_ptr,
        shape=[M, N],
        strides=[stride_m, 1],
        block_shape=[BLOCK_M, BLOCK_N],
    )
    off_m = tl.program_id(0) * BLOCK_M
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for off_n in range(0, N, BLOCK_N):
        acc += desc.load([off_m, off_n])
    rows = off_m + tl.arange(0, BLOCK_M)
    tl.store(out_ptr + rows, tl.sum(acc, axis=1), mask=rows < M)


def _narrow_args(block_n):
    def make(rng):
        x = rand(rng, 32, 16)
        return [x, torch.empty(32), 32, 16, x.stride(0)], {"BLOCK_M": 16, "BLOCK_N": block_n}

    return make


@triton.jit
def desc_copy_chunk(src_ptr, dst_ptr, rows, cols, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    src = tl.make_tensor_descriptor(
        src_ptr, shape=[rows, cols], strides=[stride, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    dst = tl.make_tensor_descriptor(
        dst_ptr, shape=[rows, cols], strides=[stride, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    tile = src.load([off_m, off_n])  # BUG: out-of-bounds load
    dst.store([off_m, off_n], tile)


def _chunk_args(parent_rows):
    # src is rows 40.. of a 64-row matrix; the buggy launch passes the parent's row count as the shape.
    def make(rng):
        full = rand(rng, 64, 32)
        src = full[40:]
        dst = torch.empty(64, 32)
        return [src, dst, parent_rows, 32, 32], {"BLOCK_M": 16, "BLOCK_N": 16}

    return make


@triton.jit
def desc_store_padded_rows(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    # The output descriptor uses M rounded up to a whole block, past the end of y.
    M_pad = tl.cdiv(M, BLOCK_M) * BLOCK_M
    y_desc = tl.make_tensor_descriptor(
        y_ptr, shape=[M_pad, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    off_m = tl.program_id(0) * BLOCK_M
    x = x_desc.load([off_m, 0])
    y_desc.store([off_m, 0], tl.exp(x))  # BUG: out-of-bounds store


@triton.jit
def desc_store_rows(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    off_m = tl.program_id(0) * BLOCK_M
    x = x_desc.load([off_m, 0])
    y_desc.store([off_m, 0], tl.exp(x))


def _store_rows_args(rng):
    M, N = 40, 16
    return [rand(rng, M, N), torch.empty(M, N), M, N], {"BLOCK_M": 16, "BLOCK_N": 16}


@triton.jit
def desc_column_major_b(
    b_ptr, out_ptr, K, N, stride_bk, stride_bn, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr
):
    # b is a transposed (column-major) view; a descriptor needs the last stride to be 1.
    desc = tl.make_tensor_descriptor(  # BUG: descriptor rule
        b_ptr,
        shape=[K, N],
        strides=[stride_bk, stride_bn],
        block_shape=[BLOCK_K, BLOCK_N],
    )
    off_n = tl.program_id(0) * BLOCK_N
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc += tl.sum(desc.load([k, off_n]), axis=0)
    cols = off_n + tl.arange(0, BLOCK_N)
    tl.store(out_ptr + cols, acc, mask=cols < N)


def _column_major_args(transposed):
    def make(rng):
        K, N = 32, 48
        b = rand(rng, N, K).t() if transposed else rand(rng, K, N)
        return [b, torch.empty(N), K, N, b.stride(0), b.stride(1)], {"BLOCK_K": 16, "BLOCK_N": 16}

    return make


@triton.jit
def desc_gather_rows(table_ptr, idx_ptr, out_ptr, n_rows, dim, BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    # Rows past the descriptor's shape are padding (zeros): legal, no finding, as long as the shape fits.
    desc = tl.make_tensor_descriptor(
        table_ptr, shape=[n_rows, dim], strides=[dim, 1], block_shape=[1, BLOCK_D]
    )
    offs = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    idx = tl.load(idx_ptr + offs)
    rows = desc.gather(idx, 0)  # BUG: out-of-bounds load
    tl.store(out_ptr + offs[:, None] * BLOCK_D + tl.arange(0, BLOCK_D)[None, :], rows)


def _gather_args(shape_rows):
    def make(rng):
        table_rows, dim = 20, 16
        idx = rng.integers(0, table_rows, 16).astype(np.int32)
        idx[[3, 12]] = [table_rows + 1, table_rows + 6]  # past the table: padding when the shape is right
        return (
            [rand(rng, table_rows, dim), torch.from_numpy(idx), torch.empty(16, dim), shape_rows, dim],
            {"BLOCK_R": 8, "BLOCK_D": 16},
        )

    return make


CASES = [
    SanitizerCase(
        "desc_base_misaligned", desc_scale, _scale_args(_misaligned), (2, 2), True, ("descriptor rule",)
    ),
    SanitizerCase("desc_base_aligned_offset", desc_scale, _scale_args(_aligned_offset), (2, 2), False),
    SanitizerCase(
        "desc_row_stride_not_16_bytes",
        desc_scale,
        _scale_args(_odd_row_stride),
        (2, 3),
        True,
        ("descriptor rule",),
    ),
    SanitizerCase("desc_row_stride_padded", desc_scale, _scale_args(_padded_row_stride), (2, 3), False),
    SanitizerCase(
        "desc_block_last_dim_8_bytes",
        desc_rowwise_narrow_block,
        _narrow_args(2),
        (2,),
        True,
        ("descriptor rule",),
    ),
    SanitizerCase("desc_block_last_dim_16_bytes", desc_rowwise_narrow_block, _narrow_args(4), (2,), False),
    SanitizerCase(
        "desc_shape_of_parent", desc_copy_chunk, _chunk_args(64), (4, 2), True, ("out-of-bounds load",)
    ),
    SanitizerCase("desc_shape_of_chunk", desc_copy_chunk, _chunk_args(24), (4, 2), False),
    SanitizerCase(
        "desc_store_padded_rows",
        desc_store_padded_rows,
        _store_rows_args,
        (3,),
        True,
        ("out-of-bounds store",),
    ),
    SanitizerCase("desc_store_rows", desc_store_rows, _store_rows_args, (3,), False),
    SanitizerCase(
        "desc_column_major_b", desc_column_major_b, _column_major_args(True), (3,), True, ("descriptor rule",)
    ),
    SanitizerCase("desc_row_major_b", desc_column_major_b, _column_major_args(False), (3,), False),
    SanitizerCase(
        "desc_gather_shape_too_large", desc_gather_rows, _gather_args(32), (2,), True, ("out-of-bounds load",)
    ),
    SanitizerCase("desc_gather_rows_padding", desc_gather_rows, _gather_args(20), (2,), False),
]
