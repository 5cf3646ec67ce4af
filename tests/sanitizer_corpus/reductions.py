"""Row reductions: off-by-one column masks, unmasked last chunk of a loop, wrong output index."""

import numpy as np
import torch
import triton
import triton.language as tl

from . import SanitizerCase, rand


def _rand(rng, *shape, dtype=np.float32):
    return rand(rng, *shape, dtype=dtype, offset=1.0)


@triton.jit
def softmax_cols_off_by_one(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols <= n_cols
    x = tl.load(  # BUG: out-of-bounds load
        in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf")
    )
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y, mask=mask)  # BUG: out-of-bounds store


@triton.jit
def softmax_rows(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y, mask=mask)


def _softmax_args(rng):
    x = _rand(rng, 6, 50)
    out = torch.empty_like(x)
    return [out, x, x.stride(0), out.stride(0), 50], {"BLOCK": 64}


@triton.jit
def row_sum_chunked_unmasked(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride_row + cols)  # BUG: out-of-bounds load
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def row_sum_chunked(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def _row_sum_args(rng):
    x = _rand(rng, 5, 100)
    return [x, torch.empty(5), 100, x.stride(0)], {"BLOCK": 32}


@triton.jit
def column_mean_shifted_output(x_ptr, out_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for r0 in range(0, n_rows, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        x = tl.load(
            x_ptr + rows[:, None] * n_cols + cols[None, :],
            mask=(rows[:, None] < n_rows) & (cols[None, :] < n_cols),
            other=0.0,
        )
        acc += tl.sum(x, axis=0)
    # Output written one slot to the right (a leftover of a "count in slot 0" layout).
    tl.store(out_ptr + cols + 1, acc / n_rows, mask=cols < n_cols)  # BUG: out-of-bounds store


@triton.jit
def column_mean(x_ptr, out_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for r0 in range(0, n_rows, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        x = tl.load(
            x_ptr + rows[:, None] * n_cols + cols[None, :],
            mask=(rows[:, None] < n_rows) & (cols[None, :] < n_cols),
            other=0.0,
        )
        acc += tl.sum(x, axis=0)
    tl.store(out_ptr + cols, acc / n_rows, mask=cols < n_cols)


def _col_mean_args(rng):
    x = _rand(rng, 37, 24)
    return [x, torch.empty(24), 37, 24], {"BLOCK_R": 16, "BLOCK_C": 16}


@triton.jit
def rms_norm_weight_unmasked(x_ptr, w_ptr, out_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols)  # BUG: out-of-bounds load
    tl.store(out_ptr + row * stride + cols, x / rms * w, mask=mask)


@triton.jit
def rms_norm(x_ptr, w_ptr, out_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride + cols, x / rms * w, mask=mask)


def _rms_args(rng):
    x = _rand(rng, 4, 48)
    return [x, _rand(rng, 48), torch.empty_like(x), x.stride(0), 48, 1e-6], {"BLOCK": 64}


CASES = [
    SanitizerCase(
        "softmax_cols_off_by_one",
        softmax_cols_off_by_one,
        _softmax_args,
        (6,),
        True,
        ("out-of-bounds load", "out-of-bounds store"),
    ),
    SanitizerCase("softmax_rows", softmax_rows, _softmax_args, (6,), False),
    SanitizerCase(
        "row_sum_chunked_unmasked",
        row_sum_chunked_unmasked,
        _row_sum_args,
        (5,),
        True,
        ("out-of-bounds load",),
    ),
    SanitizerCase("row_sum_chunked", row_sum_chunked, _row_sum_args, (5,), False),
    SanitizerCase(
        "column_mean_shifted_output",
        column_mean_shifted_output,
        _col_mean_args,
        (2,),
        True,
        ("out-of-bounds store",),
    ),
    SanitizerCase("column_mean", column_mean, _col_mean_args, (2,), False),
    SanitizerCase(
        "rms_norm_weight_unmasked", rms_norm_weight_unmasked, _rms_args, (4,), True, ("out-of-bounds load",)
    ),
    SanitizerCase("rms_norm", rms_norm, _rms_args, (4,), False),
]
