"""Data-dependent addresses: embedding gathers, padding ids, index scatter, CSR row pointers."""

import numpy as np
import torch
import triton
import triton.language as tl

from . import SanitizerCase, rand


@triton.jit
def embedding_gather(ids_ptr, weight_ptr, out_ptr, n_ids, dim, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    offs_t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_d = tl.arange(0, BLOCK_D)
    t_mask = offs_t < n_ids
    ids = tl.load(ids_ptr + offs_t, mask=t_mask, other=0)
    mask = t_mask[:, None] & (offs_d[None, :] < dim)
    rows = tl.load(weight_ptr + ids[:, None] * dim + offs_d[None, :], mask=mask)  # BUG: out-of-bounds load
    tl.store(out_ptr + offs_t[:, None] * dim + offs_d[None, :], rows, mask=mask)


def _embedding_args(bad_id):
    def make(rng):
        vocab, dim, n = 50, 24, 40
        ids = rng.integers(0, vocab, n)
        if bad_id is not None:
            ids[29] = bad_id  # one token id past the vocabulary (e.g. a tokenizer with added tokens)
        weight = rand(rng, vocab, dim)
        return [torch.from_numpy(ids), weight, torch.empty(n, dim), n, dim], {"BLOCK_T": 16, "BLOCK_D": 32}

    return make


@triton.jit
def embedding_gather_padding_unchecked(
    ids_ptr, weight_ptr, out_ptr, n_ids, dim, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr
):
    # ids use -1 for padding; the kernel forgets to skip them.
    offs_t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_d = tl.arange(0, BLOCK_D)
    t_mask = offs_t < n_ids
    ids = tl.load(ids_ptr + offs_t, mask=t_mask, other=0)
    mask = t_mask[:, None] & (offs_d[None, :] < dim)
    rows = tl.load(  # BUG: out-of-bounds load
        weight_ptr + ids[:, None] * dim + offs_d[None, :], mask=mask, other=0.0
    )
    tl.store(out_ptr + offs_t[:, None] * dim + offs_d[None, :], rows, mask=mask)


@triton.jit
def embedding_gather_padding(
    ids_ptr, weight_ptr, out_ptr, n_ids, dim, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr
):
    offs_t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_d = tl.arange(0, BLOCK_D)
    t_mask = offs_t < n_ids
    ids = tl.load(ids_ptr + offs_t, mask=t_mask, other=0)
    mask = t_mask[:, None] & (offs_d[None, :] < dim)
    rows = tl.load(
        weight_ptr + ids[:, None] * dim + offs_d[None, :], mask=mask & (ids[:, None] >= 0), other=0.0
    )
    tl.store(out_ptr + offs_t[:, None] * dim + offs_d[None, :], rows, mask=mask)


def _padding_args(rng):
    vocab, dim, n = 30, 16, 36
    ids = rng.integers(0, vocab, n).astype(np.int32)
    ids[-5:] = -1
    return [torch.from_numpy(ids), rand(rng, vocab, dim), torch.empty(n, dim), n, dim], {
        "BLOCK_T": 16,
        "BLOCK_D": 16,
    }


@triton.jit
def index_copy_rows(src_ptr, index_ptr, dst_ptr, n_rows, dst_rows, dim, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    target = tl.load(index_ptr + row)
    x = tl.load(src_ptr + row * dim + cols, mask=cols < dim)
    tl.store(dst_ptr + target * dim + cols, x, mask=cols < dim)  # BUG: out-of-bounds store


@triton.jit
def index_copy_rows_checked(src_ptr, index_ptr, dst_ptr, n_rows, dst_rows, dim, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    target = tl.load(index_ptr + row)
    x = tl.load(src_ptr + row * dim + cols, mask=cols < dim)
    ok = (target >= 0) & (target < dst_rows)
    tl.store(dst_ptr + target * dim + cols, x, mask=(cols < dim) & ok)


def _index_copy_args(rng):
    n, dst_rows, dim = 8, 12, 20
    index = rng.permutation(dst_rows)[:n]
    index[5] = dst_rows + 2  # stale index from a larger destination
    src = rand(rng, n, dim)
    return [src, torch.from_numpy(index), rand(rng, dst_rows, dim), n, dst_rows, dim], {"BLOCK_D": 32}


@triton.jit
def csr_spmv_row_end_inclusive(row_ptr, col_ptr, val_ptr, x_ptr, y_ptr, n_rows, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = tl.load(row_ptr + row)
    end = tl.load(row_ptr + row + 1)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for k in range(start, end + 1, BLOCK):
        offs = k + tl.arange(0, BLOCK)
        mask = offs <= end
        cols = tl.load(col_ptr + offs, mask=mask, other=0)  # BUG: out-of-bounds load
        vals = tl.load(val_ptr + offs, mask=mask, other=0.0)  # BUG: out-of-bounds load
        acc += vals * tl.load(x_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def csr_spmv(row_ptr, col_ptr, val_ptr, x_ptr, y_ptr, n_rows, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = tl.load(row_ptr + row)
    end = tl.load(row_ptr + row + 1)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for k in range(start, end, BLOCK):
        offs = k + tl.arange(0, BLOCK)
        mask = offs < end
        cols = tl.load(col_ptr + offs, mask=mask, other=0)
        vals = tl.load(val_ptr + offs, mask=mask, other=0.0)
        acc += vals * tl.load(x_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


def _csr_args(rng):
    n_rows, n_cols = 6, 40
    counts = rng.integers(3, 20, n_rows)
    row_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    nnz = int(row_ptr[-1])
    cols = rng.integers(0, n_cols, nnz).astype(np.int32)
    return (
        [
            torch.from_numpy(row_ptr),
            torch.from_numpy(cols),
            rand(rng, nnz),
            rand(rng, n_cols),
            torch.empty(n_rows),
            n_rows,
        ],
        {"BLOCK": 8},
    )


CASES = [
    SanitizerCase(
        "embedding_gather_bad_id", embedding_gather, _embedding_args(50), (3,), True, ("out-of-bounds load",)
    ),
    SanitizerCase("embedding_gather", embedding_gather, _embedding_args(None), (3,), False),
    SanitizerCase(
        "embedding_gather_padding_unchecked",
        embedding_gather_padding_unchecked,
        _padding_args,
        (3,),
        True,
        ("out-of-bounds load",),
    ),
    SanitizerCase("embedding_gather_padding", embedding_gather_padding, _padding_args, (3,), False),
    SanitizerCase("index_copy_rows", index_copy_rows, _index_copy_args, (8,), True, ("out-of-bounds store",)),
    SanitizerCase("index_copy_rows_checked", index_copy_rows_checked, _index_copy_args, (8,), False),
    SanitizerCase(
        "csr_spmv_row_end_inclusive",
        csr_spmv_row_end_inclusive,
        _csr_args,
        (6,),
        True,
        ("out-of-bounds load",),
    ),
    SanitizerCase("csr_spmv", csr_spmv, _csr_args, (6,), False),
]
