"""``tl.device_assert`` failures. These kernels are declared ``@triton.jit(debug=True)``: asserts only
exist in debug builds, and a sanitizer must honour the kernel's (or the launch's) debug flag."""

import numpy as np
import torch
import triton
import triton.language as tl

from . import SanitizerCase, rand


@triton.jit(debug=True)
def gather_rows_checked(
    ids_ptr, table_ptr, out_ptr, n, vocab, dim, BLOCK: tl.constexpr, BLOCK_D: tl.constexpr
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ids = tl.load(ids_ptr + offs, mask=mask, other=0)
    tl.device_assert((ids >= 0) & (ids < vocab), "token id out of range")  # BUG: device assert
    cols = tl.arange(0, BLOCK_D)
    rows = tl.load(  # BUG: out-of-bounds load
        table_ptr + ids[:, None] * dim + cols[None, :], mask=mask[:, None]
    )
    tl.store(out_ptr + offs[:, None] * dim + cols[None, :], rows, mask=mask[:, None])


def _gather_args(bad):
    def make(rng):
        n, vocab, dim = 24, 40, 8
        ids = rng.integers(0, vocab, n)
        if bad:
            ids[[5, 17]] = [vocab, vocab + 3]
        return (
            [torch.from_numpy(ids), rand(rng, vocab, dim), torch.empty(n, dim), n, vocab, dim],
            {"BLOCK": 16, "BLOCK_D": 8},
        )

    return make


@triton.jit(debug=True)
def blocked_scale_divisible(x_ptr, n, alpha, BLOCK: tl.constexpr):
    # The unmasked body relies on the host padding n to a multiple of BLOCK, and says so.
    tl.device_assert(n % BLOCK == 0, "n must be a multiple of BLOCK")  # BUG: device assert
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # BUG: out-of-bounds load
    tl.store(x_ptr + offs, x * alpha)  # BUG: out-of-bounds store


def _blocked_args(n):
    def make(rng):
        return [rand(rng, n), n, 3.0], {"BLOCK": 32}

    return make


@triton.jit(debug=True)
def probabilities_normalised(p_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    p = tl.load(p_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.device_assert(p >= 0, "negative probability", mask=mask)  # BUG: device assert
    total = tl.sum(p, axis=0)
    tl.store(out_ptr + row * n_cols + cols, p / total, mask=mask)


def _prob_args(negative):
    def make(rng):
        p = rng.random((5, 12)).astype(np.float32) + 0.01
        if negative:
            p[3, 7] = -0.25
            p[4, 0] = -1.0
        return [torch.from_numpy(p), torch.empty(5, 12), 5, 12], {"BLOCK": 16}

    return make


CASES = [
    SanitizerCase(
        "gather_rows_checked_bad_ids",
        gather_rows_checked,
        _gather_args(True),
        (2,),
        True,
        ("device assert", "out-of-bounds load"),
    ),
    SanitizerCase("gather_rows_checked", gather_rows_checked, _gather_args(False), (2,), False),
    SanitizerCase(
        "blocked_scale_not_divisible",
        blocked_scale_divisible,
        _blocked_args(100),
        (4,),
        True,
        ("device assert", "out-of-bounds load", "out-of-bounds store"),
    ),
    SanitizerCase("blocked_scale_divisible", blocked_scale_divisible, _blocked_args(128), (4,), False),
    SanitizerCase(
        "probabilities_negative", probabilities_normalised, _prob_args(True), (5,), True, ("device assert",)
    ),
    SanitizerCase("probabilities_normalised", probabilities_normalised, _prob_args(False), (5,), False),
]
