"""Views of a larger storage: the view's extent counts, not the storage's; neighbours in one buffer."""

import torch
import triton
import triton.language as tl

from . import SanitizerCase, rand


@triton.jit
def smooth_rows_halo(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    # 3-tap vertical smoothing; the row above row 0 is read without a guard.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    up = tl.load(x_ptr + (row - 1) * n_cols + cols, mask=mask, other=0.0)  # BUG: out-of-bounds load
    mid = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    down = tl.load(x_ptr + (row + 1) * n_cols + cols, mask=mask & (row + 1 < n_rows), other=0.0)
    tl.store(out_ptr + row * n_cols + cols, (up + 2.0 * mid + down) * 0.25, mask=mask)


@triton.jit
def smooth_rows(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    up = tl.load(x_ptr + (row - 1) * n_cols + cols, mask=mask & (row > 0), other=0.0)
    mid = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    down = tl.load(x_ptr + (row + 1) * n_cols + cols, mask=mask & (row + 1 < n_rows), other=0.0)
    tl.store(out_ptr + row * n_cols + cols, (up + 2.0 * mid + down) * 0.25, mask=mask)


def _halo_args(rng):
    # The input is rows 4..11 of a larger frame: the row above exists in the storage, not in the view.
    frame = rand(rng, 16, 20)
    x = frame[4:12]
    return [x, torch.empty(8, 20), 8, 20], {"BLOCK": 32}


@triton.jit
def column_block_copy_unmasked(src_ptr, dst_ptr, n_rows, n_cols, stride_src, BLOCK: tl.constexpr):
    # Reads whole BLOCK-wide rows: past n_cols it reads the storage's other columns, and past the view's end.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(src_ptr + row * stride_src + cols)  # BUG: out-of-bounds load
    tl.store(dst_ptr + row * n_cols + cols, x, mask=cols < n_cols)


@triton.jit
def column_block_copy(src_ptr, dst_ptr, n_rows, n_cols, stride_src, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(src_ptr + row * stride_src + cols, mask=cols < n_cols)
    tl.store(dst_ptr + row * n_cols + cols, x, mask=cols < n_cols)


def _column_args(rng):
    big = rand(rng, 10, 64)
    src = big[:, 8:30]  # a (10, 22) column slice with row stride 64
    return [src, torch.empty(10, 22), 10, 22, src.stride(0)], {"BLOCK": 32}


@triton.jit
def qkv_bias_add_whole_width(q_ptr, k_ptr, v_ptr, bias_ptr, n, BLOCK: tl.constexpr):
    # q, k, v are three slices of one fused buffer. The q update uses the fused width (3 * n):
    # its pointer is derived from q_ptr but lands inside k and v.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < 3 * n
    q = tl.load(q_ptr + offs, mask=mask)  # BUG: out-of-bounds load
    b = tl.load(bias_ptr + offs, mask=mask)
    tl.store(q_ptr + offs, q + b, mask=mask)  # BUG: out-of-bounds store


@triton.jit
def qkv_bias_add(q_ptr, k_ptr, v_ptr, bias_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    for part in tl.static_range(3):
        mask = offs < n
        if part == 0:
            base = q_ptr
        elif part == 1:
            base = k_ptr
        else:
            base = v_ptr
        x = tl.load(base + offs, mask=mask)
        b = tl.load(bias_ptr + part * n + offs, mask=mask)
        tl.store(base + offs, x + b, mask=mask)


def _qkv_args(rng):
    n = 40
    fused = rand(rng, 3 * n)
    q, k, v = fused[:n], fused[n : 2 * n], fused[2 * n :]
    return [q, k, v, rand(rng, 3 * n), n], {"BLOCK": 64}


@triton.jit
def add_bias_assumes_contiguous(x_ptr, bias_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # bias is an expanded (M, N) view with row stride 0; the kernel indexes it as if it were contiguous.
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    idx = offs_m[:, None] * N + offs_n[None, :]
    x = tl.load(x_ptr + idx, mask=mask)
    b = tl.load(bias_ptr + idx, mask=mask)  # BUG: out-of-bounds load
    tl.store(out_ptr + idx, x + b, mask=mask)


@triton.jit
def add_bias_strided(
    x_ptr, bias_ptr, out_ptr, M, N, stride_bm, stride_bn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    idx = offs_m[:, None] * N + offs_n[None, :]
    x = tl.load(x_ptr + idx, mask=mask)
    b = tl.load(bias_ptr + offs_m[:, None] * stride_bm + offs_n[None, :] * stride_bn, mask=mask)
    tl.store(out_ptr + idx, x + b, mask=mask)


def _bias_args(strided):
    def make(rng):
        M, N = 24, 16
        x = rand(rng, M, N)
        bias = rand(rng, N).expand(M, N)
        args = [x, bias, torch.empty(M, N), M, N]
        if strided:
            args += [bias.stride(0), bias.stride(1)]
        return args, {"BLOCK_M": 16, "BLOCK_N": 16}

    return make


@triton.jit
def last_token_gather(hidden_ptr, out_ptr, seq_len, dim, stride_b, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    row = hidden_ptr + b * stride_b + (seq_len - 1) * dim
    x = tl.load(row + cols, mask=cols < dim)
    tl.store(out_ptr + b * dim + cols, x, mask=cols < dim)


@triton.jit
def last_token_gather_past_view(hidden_ptr, out_ptr, seq_len, dim, stride_b, BLOCK: tl.constexpr):
    # Takes the token *after* the last one, which exists in the storage (padding) but not in the view.
    b = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    row = hidden_ptr + b * stride_b + seq_len * dim
    x = tl.load(row + cols, mask=cols < dim)  # BUG: out-of-bounds load
    tl.store(out_ptr + b * dim + cols, x, mask=cols < dim)


def _tokens_args(rng):
    batch, max_len, seq_len, dim = 3, 12, 7, 16
    full = rand(rng, batch, max_len, dim)
    hidden = full[:, :seq_len]
    return [hidden, torch.empty(batch, dim), seq_len, dim, hidden.stride(0)], {"BLOCK": 16}


CASES = [
    SanitizerCase("smooth_rows_halo", smooth_rows_halo, _halo_args, (8,), True, ("out-of-bounds load",)),
    SanitizerCase("smooth_rows", smooth_rows, _halo_args, (8,), False),
    SanitizerCase(
        "column_block_copy_unmasked",
        column_block_copy_unmasked,
        _column_args,
        (10,),
        True,
        ("out-of-bounds load",),
    ),
    SanitizerCase("column_block_copy", column_block_copy, _column_args, (10,), False),
    SanitizerCase(
        "qkv_bias_add_whole_width",
        qkv_bias_add_whole_width,
        _qkv_args,
        (2,),
        True,
        ("out-of-bounds load", "out-of-bounds store"),
    ),
    SanitizerCase("qkv_bias_add", qkv_bias_add, _qkv_args, (1,), False),
    SanitizerCase(
        "add_bias_assumes_contiguous",
        add_bias_assumes_contiguous,
        _bias_args(False),
        (2,),
        True,
        ("out-of-bounds load",),
    ),
    SanitizerCase("add_bias_strided", add_bias_strided, _bias_args(True), (2,), False),
    SanitizerCase("last_token_gather", last_token_gather, _tokens_args, (3,), False),
    SanitizerCase(
        "last_token_gather_past_view",
        last_token_gather_past_view,
        _tokens_args,
        (3,),
        True,
        ("out-of-bounds load",),
    ),
]
