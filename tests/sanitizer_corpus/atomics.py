"""Atomics: histogram bins past the end, split-K accumulation, segment reductions, per-program locks."""

import numpy as np
import torch
import triton
import triton.language as tl

from . import SanitizerCase


@triton.jit
def histogram_unclamped(x_ptr, hist_ptr, n, NBINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    bins = (x * NBINS).to(tl.int32)  # x == 1.0 lands in bin NBINS
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)  # BUG: out-of-bounds atomic


@triton.jit
def histogram(x_ptr, hist_ptr, n, NBINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    bins = tl.minimum((x * NBINS).to(tl.int32), NBINS - 1)
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)


def _hist_args(rng):
    x = rng.random(300).astype(np.float32)
    x = x / x.max()  # normalised to [0, 1]: the maximum is exactly 1.0
    return [torch.from_numpy(x), torch.zeros(16, dtype=torch.int32), 300], {"NBINS": 16, "BLOCK": 128}


@triton.jit
def split_k_accumulate_mask_wrong_dim(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    SPLIT_K: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(pid_k * BLOCK_K, K, SPLIT_K * BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(
            a_ptr + offs_m[:, None] * K + offs_k[None, :],
            mask=(offs_m[:, None] < M) & (offs_k[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            b_ptr + offs_k[:, None] * N + offs_n[None, :],
            mask=(offs_k[:, None] < K) & (offs_n[None, :] < N),
            other=0.0,
        )
        acc += tl.dot(a, b)
    mask = offs_n[None, :] < N  # missing the M edge
    tl.atomic_add(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=mask)  # BUG: out-of-bounds atomic


@triton.jit
def split_k_accumulate(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    SPLIT_K: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(pid_k * BLOCK_K, K, SPLIT_K * BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(
            a_ptr + offs_m[:, None] * K + offs_k[None, :],
            mask=(offs_m[:, None] < M) & (offs_k[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            b_ptr + offs_k[:, None] * N + offs_n[None, :],
            mask=(offs_k[:, None] < K) & (offs_n[None, :] < N),
            other=0.0,
        )
        acc += tl.dot(a, b)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.atomic_add(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=mask)


def _split_k_args(rng):
    M, N, K = 20, 16, 64
    a = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float32))
    b = torch.from_numpy(rng.standard_normal((K, N)).astype(np.float32))
    return [a, b, torch.zeros(M, N), M, N, K], {"SPLIT_K": 2, "BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}


@triton.jit
def segment_max(x_ptr, seg_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    seg = tl.load(seg_ptr + offs, mask=mask, other=0)
    tl.atomic_max(out_ptr + seg, x, mask=mask)  # BUG: out-of-bounds atomic


@triton.jit
def segment_max_skip_unassigned(x_ptr, seg_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    seg = tl.load(seg_ptr + offs, mask=mask, other=0)
    tl.atomic_max(out_ptr + seg, x, mask=mask & (seg >= 0))


def _segment_args(rng):
    n, n_seg = 100, 7
    seg = np.sort(rng.integers(0, n_seg, n)).astype(np.int32)
    seg[[3, 64, 65]] = -1  # unassigned elements
    x = rng.standard_normal(n).astype(np.float32)
    return [torch.from_numpy(x), torch.from_numpy(seg), torch.full((n_seg,), -1e30), n], {"BLOCK": 32}


@triton.jit
def ticket_lock_per_program(lock_ptr, counter_ptr):
    # Each program takes its own lock slot; the host allocated one slot too few.
    pid = tl.program_id(0)
    while tl.atomic_cas(lock_ptr + pid, 0, 1) == 1:  # BUG: out-of-bounds atomic
        pass
    tl.atomic_add(counter_ptr + pid, 1)  # BUG: out-of-bounds atomic
    tl.atomic_xchg(lock_ptr + pid, 0)  # BUG: out-of-bounds atomic


def _lock_args(slots):
    def make(rng):
        return [
            torch.zeros(slots, dtype=torch.int32),
            torch.from_numpy(rng.integers(1, 9, slots).astype(np.int32)),
        ], {}

    return make


CASES = [
    SanitizerCase(
        "histogram_unclamped", histogram_unclamped, _hist_args, (3,), True, ("out-of-bounds atomic",)
    ),
    SanitizerCase("histogram", histogram, _hist_args, (3,), False),
    SanitizerCase(
        "split_k_accumulate_mask_wrong_dim",
        split_k_accumulate_mask_wrong_dim,
        _split_k_args,
        (2, 2),
        True,
        ("out-of-bounds atomic",),
    ),
    SanitizerCase("split_k_accumulate", split_k_accumulate, _split_k_args, (2, 2), False),
    SanitizerCase(
        "segment_max_unassigned", segment_max, _segment_args, (4,), True, ("out-of-bounds atomic",)
    ),
    SanitizerCase("segment_max_skip_unassigned", segment_max_skip_unassigned, _segment_args, (4,), False),
    SanitizerCase(
        "ticket_lock_one_slot_short",
        ticket_lock_per_program,
        _lock_args(5),
        (6,),
        True,
        ("out-of-bounds atomic",),
    ),
    SanitizerCase("ticket_lock_per_program", ticket_lock_per_program, _lock_args(6), (6,), False),
]
