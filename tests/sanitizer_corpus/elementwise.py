"""Elementwise kernels: off-by-one masks, missing tail masks, negative offsets, 2-D masks."""

import torch
import triton
import triton.language as tl

from . import SanitizerCase, rand


@triton.jit
def add_off_by_one(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs <= n_elements
    x = tl.load(x_ptr + offs, mask=mask)  # BUG: out-of-bounds load
    y = tl.load(y_ptr + offs, mask=mask)  # BUG: out-of-bounds load
    tl.store(out_ptr + offs, x + y, mask=mask)  # BUG: out-of-bounds store


@triton.jit
def add_masked(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def _add_args(n):
    def make(rng):
        x, y = rand(rng, n), rand(rng, n)
        return [x, y, torch.empty_like(x), n], {"BLOCK": 64}

    return make


@triton.jit
def axpy_unmasked_tail(x_ptr, y_ptr, alpha, n_elements, BLOCK: tl.constexpr):
    # Written for n a multiple of BLOCK; only the last program runs past the end.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # BUG: out-of-bounds load
    y = tl.load(y_ptr + offs)  # BUG: out-of-bounds load
    tl.store(y_ptr + offs, alpha * x + y)  # BUG: out-of-bounds store


@triton.jit
def axpy_masked_tail(x_ptr, y_ptr, alpha, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, alpha * x + y, mask=mask)


def _axpy_args(rng):
    n = 200
    return [rand(rng, n), rand(rng, n), 0.5, n], {"BLOCK": 64}


@triton.jit
def diff_left_neighbour(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    cur = tl.load(x_ptr + offs, mask=mask)
    prev = tl.load(x_ptr + offs - 1, mask=mask, other=0.0)  # BUG: out-of-bounds load
    tl.store(out_ptr + offs, cur - prev, mask=mask)


@triton.jit
def diff_left_neighbour_guarded(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    cur = tl.load(x_ptr + offs, mask=mask)
    prev = tl.load(x_ptr + offs - 1, mask=mask & (offs > 0), other=0.0)
    tl.store(out_ptr + offs, cur - prev, mask=mask)


def _diff_args(rng):
    n = 150
    x = rand(rng, n)
    return [x, torch.empty_like(x), n], {"BLOCK": 64}


@triton.jit
def gelu_2d_row_mask_only(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ptrs = x_ptr + offs_m[:, None] * stride_m + offs_n[None, :]
    mask = offs_m[:, None] < M
    x = tl.load(ptrs, mask=mask)  # BUG: out-of-bounds load
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs_m[:, None] * stride_m + offs_n[None, :], y, mask=mask)  # BUG: out-of-bounds store


@triton.jit
def gelu_2d(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ptrs = x_ptr + offs_m[:, None] * stride_m + offs_n[None, :]
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(ptrs, mask=mask)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs_m[:, None] * stride_m + offs_n[None, :], y, mask=mask)


def _gelu_args(rng):
    M, N = 40, 50
    x = rand(rng, M, N)
    return [x, torch.empty_like(x), M, N, x.stride(0)], {"BLOCK_M": 16, "BLOCK_N": 32}


@triton.jit
def cast_store_wrong_bound(x_ptr, out_ptr, n_in, n_out, BLOCK: tl.constexpr):
    # Downcast into a shorter output buffer, but the store mask checks the input length.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n_in)
    tl.store(out_ptr + offs, x.to(tl.float16), mask=offs < n_in)  # BUG: out-of-bounds store


@triton.jit
def cast_store(x_ptr, out_ptr, n_in, n_out, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n_in)
    tl.store(out_ptr + offs, x.to(tl.float16), mask=offs < n_out)


def _cast_args(rng):
    x = rand(rng, 130)
    return [x, torch.empty(100, dtype=torch.float16), 130, 100], {"BLOCK": 64}


CASES = [
    SanitizerCase(
        "add_off_by_one",
        add_off_by_one,
        _add_args(100),
        (2,),
        True,
        ("out-of-bounds load", "out-of-bounds store"),
    ),
    SanitizerCase("add_masked", add_masked, _add_args(100), (2,), False),
    SanitizerCase("add_masked_exact", add_masked, _add_args(128), (2,), False),
    SanitizerCase(
        "axpy_unmasked_tail",
        axpy_unmasked_tail,
        _axpy_args,
        (4,),
        True,
        ("out-of-bounds load", "out-of-bounds store"),
    ),
    SanitizerCase("axpy_masked_tail", axpy_masked_tail, _axpy_args, (4,), False),
    SanitizerCase(
        "diff_left_neighbour", diff_left_neighbour, _diff_args, (3,), True, ("out-of-bounds load",)
    ),
    SanitizerCase("diff_left_neighbour_guarded", diff_left_neighbour_guarded, _diff_args, (3,), False),
    SanitizerCase(
        "gelu_2d_row_mask_only",
        gelu_2d_row_mask_only,
        _gelu_args,
        (3, 2),
        True,
        ("out-of-bounds load", "out-of-bounds store"),
    ),
    SanitizerCase("gelu_2d", gelu_2d, _gelu_args, (3, 2), False),
    SanitizerCase(
        "cast_store_wrong_bound", cast_store_wrong_bound, _cast_args, (3,), True, ("out-of-bounds store",)
    ),
    SanitizerCase("cast_store", cast_store, _cast_args, (3,), False),
]
