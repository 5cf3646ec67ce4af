"""Program-dependent and data-dependent control flow: only some programs take the buggy path."""

import numpy as np
import torch
import triton
import triton.language as tl

from . import SanitizerCase, rand


@triton.jit
def copy_with_tail_program(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # Full blocks take the fast unmasked path; the last program handles the tail, off by one.
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if pid < tl.num_programs(0) - 1:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))
    else:
        mask = offs <= n
        x = tl.load(x_ptr + offs, mask=mask)  # BUG: out-of-bounds load
        tl.store(y_ptr + offs, x, mask=mask)  # BUG: out-of-bounds store


@triton.jit
def copy_with_tail_program_fixed(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if pid < tl.num_programs(0) - 1:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))
    else:
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def _tail_args(rng):
    n = 150
    return [rand(rng, n), torch.empty(n), n], {"BLOCK": 64}


@triton.jit
def bidirectional_scan_pairs(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Even programs read forward, odd programs read the mirrored block (n - i instead of n - 1 - i).
    pid = tl.program_id(0)
    offs = (pid // 2) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if pid % 2 == 0:
        x = tl.load(x_ptr + offs, mask=mask)
    else:
        x = tl.load(x_ptr + (n - offs), mask=mask)  # BUG: out-of-bounds load
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), x, mask=mask)


@triton.jit
def bidirectional_scan_pairs_fixed(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = (pid // 2) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if pid % 2 == 0:
        x = tl.load(x_ptr + offs, mask=mask)
    else:
        x = tl.load(x_ptr + (n - 1 - offs), mask=mask)
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), x, mask=mask)


def _pairs_args(rng):
    n = 100
    return [rand(rng, n), torch.empty(8 * 32), n], {"BLOCK": 32}


@triton.jit
def persistent_row_scale(
    x_ptr, scale_ptr, M, N, NUM_SMS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    # Persistent loop over row tiles; the tile count is rounded up once too often.
    start = tl.program_id(0)
    num_tiles = M // BLOCK_M + 1
    cols = tl.arange(0, BLOCK_N)
    for tile in range(start, num_tiles, NUM_SMS):
        rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)
        s = tl.load(scale_ptr + rows)  # BUG: out-of-bounds load
        ptrs = x_ptr + rows[:, None] * N + cols[None, :]
        x = tl.load(ptrs, mask=cols[None, :] < N)  # BUG: out-of-bounds load
        tl.store(ptrs, x * s[:, None], mask=cols[None, :] < N)  # BUG: out-of-bounds store


@triton.jit
def persistent_row_scale_fixed(
    x_ptr, scale_ptr, M, N, NUM_SMS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    start = tl.program_id(0)
    num_tiles = tl.cdiv(M, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    for tile in range(start, num_tiles, NUM_SMS):
        rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)
        s = tl.load(scale_ptr + rows, mask=rows < M)
        ptrs = x_ptr + rows[:, None] * N + cols[None, :]
        x = tl.load(ptrs, mask=(rows[:, None] < M) & (cols[None, :] < N))
        tl.store(ptrs, x * s[:, None], mask=(rows[:, None] < M) & (cols[None, :] < N))


def _persistent_args(rng):
    M, N = 64, 20
    return [rand(rng, M, N), rand(rng, M), M, N], {"NUM_SMS": 3, "BLOCK_M": 8, "BLOCK_N": 32}


@triton.jit
def moe_expert_bias(
    tok_expert_ptr, flags_ptr, bias_ptr, out_ptr, n_tok, dim, n_experts, BLOCK_D: tl.constexpr
):
    # Data-dependent branch: tokens routed to "shared" experts (flag set) add a bias row indexed by
    # expert id + 1 (the shared bias table has no slot for the +1 of the last expert).
    tok = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    e = tl.load(tok_expert_ptr + tok)
    acc = tl.load(out_ptr + tok * dim + cols, mask=cols < dim)
    if tl.load(flags_ptr + e) != 0:
        acc += tl.load(bias_ptr + (e + 1) * dim + cols, mask=cols < dim)  # BUG: out-of-bounds load
    tl.store(out_ptr + tok * dim + cols, acc, mask=cols < dim)


@triton.jit
def moe_expert_bias_fixed(
    tok_expert_ptr, flags_ptr, bias_ptr, out_ptr, n_tok, dim, n_experts, BLOCK_D: tl.constexpr
):
    tok = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    e = tl.load(tok_expert_ptr + tok)
    acc = tl.load(out_ptr + tok * dim + cols, mask=cols < dim)
    if tl.load(flags_ptr + e) != 0:
        acc += tl.load(bias_ptr + e * dim + cols, mask=cols < dim)
    tl.store(out_ptr + tok * dim + cols, acc, mask=cols < dim)


def _moe_args(rng):
    n_tok, dim, n_experts = 12, 16, 4
    experts = rng.integers(0, n_experts, n_tok).astype(np.int32)
    experts[[2, 9]] = n_experts - 1
    flags = np.array([0, 1, 0, 1], dtype=np.int32)  # experts 1 and 3 are shared
    return (
        [
            torch.from_numpy(experts),
            torch.from_numpy(flags),
            rand(rng, n_experts, dim),
            rand(rng, n_tok, dim),
            n_tok,
            dim,
            n_experts,
        ],
        {"BLOCK_D": 16},
    )


@triton.jit
def dynamic_chunks_while(x_ptr, out_ptr, lengths_ptr, max_len, BLOCK: tl.constexpr):
    # Sums each row of a ragged batch stored with row pitch max_len, chunk by chunk while inside the row.
    row = tl.program_id(0)
    length = tl.load(lengths_ptr + row)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    start = 0
    while start < length:
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(  # BUG: out-of-bounds load
            x_ptr + row * max_len + offs, mask=offs <= length, other=0.0
        )
        start += BLOCK
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def dynamic_chunks_while_fixed(x_ptr, out_ptr, lengths_ptr, max_len, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    length = tl.load(lengths_ptr + row)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    start = 0
    while start < length:
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * max_len + offs, mask=offs < length, other=0.0)
        start += BLOCK
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def _ragged_args(rng):
    rows, max_len = 4, 40
    lengths = np.array([17, 40, 3, 40], dtype=np.int32)
    return [rand(rng, rows, max_len), torch.empty(rows), torch.from_numpy(lengths), max_len], {"BLOCK": 16}


CASES = [
    SanitizerCase(
        "copy_with_tail_program",
        copy_with_tail_program,
        _tail_args,
        (3,),
        True,
        ("out-of-bounds load", "out-of-bounds store"),
    ),
    SanitizerCase("copy_with_tail_program_fixed", copy_with_tail_program_fixed, _tail_args, (3,), False),
    SanitizerCase(
        "bidirectional_scan_pairs", bidirectional_scan_pairs, _pairs_args, (8,), True, ("out-of-bounds load",)
    ),
    SanitizerCase("bidirectional_scan_pairs_fixed", bidirectional_scan_pairs_fixed, _pairs_args, (8,), False),
    SanitizerCase(
        "persistent_row_scale",
        persistent_row_scale,
        _persistent_args,
        (3,),
        True,
        ("out-of-bounds load", "out-of-bounds store"),
    ),
    SanitizerCase("persistent_row_scale_fixed", persistent_row_scale_fixed, _persistent_args, (3,), False),
    SanitizerCase("moe_expert_bias", moe_expert_bias, _moe_args, (12,), True, ("out-of-bounds load",)),
    SanitizerCase("moe_expert_bias_fixed", moe_expert_bias_fixed, _moe_args, (12,), False),
    SanitizerCase(
        "dynamic_chunks_while", dynamic_chunks_while, _ragged_args, (4,), True, ("out-of-bounds load",)
    ),
    SanitizerCase("dynamic_chunks_while_fixed", dynamic_chunks_while_fixed, _ragged_args, (4,), False),
]
