"""Int32 overflow in address arithmetic at large sizes, with small real tensors.

Each bug is a 32-bit index that wraps before it reaches a pointer: a large step counter or position
(an ordinary argument value, no large allocation needed) pushes an int32 sum or product past 2**31.
The clean twins do the same arithmetic in int64 (or in uint32 where wrapping is the intent).
"""

import numpy as np
import torch
import triton
import triton.language as tl

from . import SanitizerCase, rand


@triton.jit
def ring_buffer_append(buf_ptr, x_ptr, step, n, CAPACITY: tl.constexpr, BLOCK: tl.constexpr):
    # Appends n values at position `step` of a ring buffer; step is a global counter that has grown large.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    slot = (step + offs) % CAPACITY
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(buf_ptr + slot, x, mask=mask)  # BUG: int32 overflow


@triton.jit
def ring_buffer_append_int64(buf_ptr, x_ptr, step, n, CAPACITY: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    slot = (step.to(tl.int64) + offs) % CAPACITY
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(buf_ptr + slot, x, mask=mask)


def _ring_args(step):
    def make(rng):
        return [rand(rng, 256), rand(rng, 96), step, 96], {"CAPACITY": 256, "BLOCK": 64}

    return make


@triton.jit
def hashed_embedding_lookup(
    ids_ptr, table_ptr, out_ptr, n, dim, TABLE: tl.constexpr, BLOCK: tl.constexpr, BLOCK_D: tl.constexpr
):
    # Multiplicative hashing of feature ids into a small table, written with signed 32-bit math.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ids = tl.load(ids_ptr + offs, mask=mask, other=0)
    h = ids * 40503
    bucket = (h ^ (h >> 15)) % TABLE
    cols = tl.arange(0, BLOCK_D)
    rows = tl.load(  # BUG: int32 overflow
        table_ptr + bucket[:, None] * dim + cols[None, :], mask=mask[:, None]
    )
    tl.store(out_ptr + offs[:, None] * dim + cols[None, :], rows, mask=mask[:, None])


@triton.jit
def hashed_embedding_lookup_unsigned(
    ids_ptr, table_ptr, out_ptr, n, dim, TABLE: tl.constexpr, BLOCK: tl.constexpr, BLOCK_D: tl.constexpr
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ids = tl.load(ids_ptr + offs, mask=mask, other=0).to(tl.uint32)
    h = ids * 40503
    bucket = (h ^ (h >> 15)) % TABLE
    cols = tl.arange(0, BLOCK_D)
    rows = tl.load(table_ptr + bucket[:, None] * dim + cols[None, :], mask=mask[:, None])
    tl.store(out_ptr + offs[:, None] * dim + cols[None, :], rows, mask=mask[:, None])


def _hash_args(rng):
    n, table, dim = 48, 64, 8
    ids = rng.integers(0, 200_000, n).astype(np.int32)  # ids * 40503 passes 2**31 for ids > 53020
    ids[:4] = [7, 70_000, 123_456, 199_999]
    return (
        [torch.from_numpy(ids), rand(rng, table, dim), torch.empty(n, dim), n, dim],
        {"TABLE": table, "BLOCK": 16, "BLOCK_D": 8},
    )


@triton.jit
def rope_cache_lookup(
    pos_ptr,
    cos_ptr,
    out_ptr,
    n,
    pos_offset,
    half,
    MAX_POS: tl.constexpr,
    BLOCK: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    # Rotary tables indexed by (absolute position) % MAX_POS for a very long streaming context.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    pos = tl.load(pos_ptr + offs, mask=mask, other=0) + pos_offset
    row = (pos * 2) % (2 * MAX_POS) // 2
    cols = tl.arange(0, BLOCK_D)
    c = tl.load(cos_ptr + row[:, None] * half + cols[None, :], mask=mask[:, None])  # BUG: int32 overflow
    tl.store(out_ptr + offs[:, None] * half + cols[None, :], c, mask=mask[:, None])


@triton.jit
def rope_cache_lookup_int64(
    pos_ptr,
    cos_ptr,
    out_ptr,
    n,
    pos_offset,
    half,
    MAX_POS: tl.constexpr,
    BLOCK: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    pos = tl.load(pos_ptr + offs, mask=mask, other=0).to(tl.int64) + pos_offset
    row = (pos * 2) % (2 * MAX_POS) // 2
    cols = tl.arange(0, BLOCK_D)
    c = tl.load(cos_ptr + row[:, None] * half + cols[None, :], mask=mask[:, None])
    tl.store(out_ptr + offs[:, None] * half + cols[None, :], c, mask=mask[:, None])


def _rope_args(rng):
    n, max_pos, half = 40, 128, 8
    pos = np.arange(n, dtype=np.int32)
    offset = 2**30 - 20  # (pos + offset) * 2 passes 2**31 for the later positions
    return (
        [torch.from_numpy(pos), rand(rng, max_pos, half), torch.empty(n, half), n, offset, half],
        {"MAX_POS": max_pos, "BLOCK": 16, "BLOCK_D": 8},
    )


@triton.jit
def chunked_scale(x_ptr, n_total, chunk_start, chunk_len, pid_base, alpha, BLOCK: tl.constexpr):
    # A 2**31+ element tensor processed in chunks: x_ptr is the chunk, indices are global, then rebased.
    idx = (pid_base + tl.program_id(0)) * BLOCK + tl.arange(0, BLOCK)
    local = idx - chunk_start
    mask = (idx < n_total) & (local < chunk_len)
    x = tl.load(x_ptr + local, mask=mask)  # BUG: int32 overflow
    tl.store(x_ptr + local, x * alpha, mask=mask)  # BUG: int32 overflow


@triton.jit
def chunked_scale_int64(x_ptr, n_total, chunk_start, chunk_len, pid_base, alpha, BLOCK: tl.constexpr):
    idx = (pid_base + tl.program_id(0)).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    local = idx - chunk_start
    mask = (idx < n_total) & (local < chunk_len)
    x = tl.load(x_ptr + local, mask=mask)
    tl.store(x_ptr + local, x * alpha, mask=mask)


def _chunk_args(rng):
    block, chunk_len = 256, 1024
    chunk_start = 2**31 + 1024  # the chunk lies past element 2**31 (an int64 argument)
    return (
        [rand(rng, chunk_len), 2**31 + 4096, chunk_start, chunk_len, chunk_start // block, 1.5],
        {"BLOCK": block},
    )


CASES = [
    SanitizerCase(
        "ring_buffer_append_wraps",
        ring_buffer_append,
        _ring_args(2**31 - 50),
        (2,),
        True,
        ("int32 overflow",),
    ),
    SanitizerCase("ring_buffer_append_small_step", ring_buffer_append, _ring_args(1000), (2,), False),
    SanitizerCase("ring_buffer_append_int64", ring_buffer_append_int64, _ring_args(2**31 - 50), (2,), False),
    SanitizerCase(
        "hashed_embedding_lookup", hashed_embedding_lookup, _hash_args, (3,), True, ("int32 overflow",)
    ),
    SanitizerCase(
        "hashed_embedding_lookup_unsigned", hashed_embedding_lookup_unsigned, _hash_args, (3,), False
    ),
    SanitizerCase("rope_cache_lookup", rope_cache_lookup, _rope_args, (3,), True, ("int32 overflow",)),
    SanitizerCase("chunked_scale", chunked_scale, _chunk_args, (4,), True, ("int32 overflow",)),
    SanitizerCase("chunked_scale_int64", chunked_scale_int64, _chunk_args, (4,), False),
    SanitizerCase("rope_cache_lookup_int64", rope_cache_lookup_int64, _rope_args, (3,), False),
]
