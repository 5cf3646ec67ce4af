"""The launch API: Triton's call shape, decorator forms, autotune, heuristics, grids, nested jit calls."""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl
from hypothesis import given, settings
from hypothesis import strategies as st

import tilescope


@triton.jit
def _scale(x, alpha):
    return x * alpha


@triton.jit
def scale_kernel(x_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, _scale(tl.load(x_ptr + offs, mask=mask), alpha), mask=mask)


def test_nested_jit_helper_and_callable_grid():
    x = torch.randn(1000)
    out = torch.empty(1000)
    grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731
    tilescope.trace(scale_kernel)[grid](x, out, 2.5, 1000, BLOCK=128)
    torch.testing.assert_close(out, x * 2.5)


@tilescope.trace
@triton.jit
def decorated_above(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1)


@triton.jit
@tilescope.trace
def decorated_below(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) - 1)


def test_decorator_above_and_below_triton_jit():
    x = torch.randn(32)
    out = torch.empty(32)
    decorated_above[(1,)](x, out, BLOCK=32)
    torch.testing.assert_close(out, x + 1)
    decorated_below[(1,)](x, out, BLOCK=32)  # Triton's own launch is routed to the engine
    torch.testing.assert_close(out, x - 1)


@triton.autotune(
    configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 128})],
    key=["n"],
    reset_to_zero=["out_ptr"],
)
@triton.jit
def accumulate_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_add(out_ptr + offs % 4, tl.load(x_ptr + offs, mask=mask), mask=mask)


def test_autotune_all_runs_every_config_and_resets_between_them():
    x = torch.randn(1000, dtype=torch.float64).float()
    out = torch.zeros(4)
    seen = []

    class Count(tilescope.Client):
        def on_launch_start(self, launch):
            seen.append(launch.meta["BLOCK"])

    grid = lambda m: (triton.cdiv(1000, m["BLOCK"]),)  # noqa: E731
    tilescope.trace(accumulate_kernel, clients=[Count()], autotune="all")[grid](x, out, 1000)
    assert seen == [32, 128]
    want = torch.tensor([x[i::4].double().sum().item() for i in range(4)], dtype=torch.float64)
    torch.testing.assert_close(out.double(), want, rtol=1e-5, atol=1e-5)  # not doubled: reset between configs


def test_autotune_chosen_config():
    x = torch.randn(100)
    out = torch.zeros(4)
    tilescope.trace(accumulate_kernel, config=1)[lambda m: (triton.cdiv(100, m["BLOCK"]),)](x, out, 100)
    want = torch.tensor([x[i::4].double().sum().item() for i in range(4)], dtype=torch.float64)
    torch.testing.assert_close(out.double(), want, rtol=1e-5, atol=1e-5)


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def heuristic_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 3)
    else:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < n)


def test_heuristics_are_applied():
    for n in (256, 250):
        x = torch.randn(n)
        out = torch.empty(n)
        tilescope.trace(heuristic_kernel)[(triton.cdiv(n, 64),)](x, out, n, BLOCK=64)
        torch.testing.assert_close(out, x * 3)


@triton.jit
def branchy_rows(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    total = tl.sum(x, axis=0)
    if row % 3 == 1:
        x = x - total
    elif total > 0:
        x = x * 2.0
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(row % 4):
        acc += x * (i + 1)
    tl.store(out_ptr + row * n_cols + cols, acc + x, mask=mask)


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(1, 40), cols=st.integers(1, 70), block_pow=st.integers(0, 3), seed=st.integers(0, 2**16)
)
def test_batched_equals_serial(rows, cols, block_pow, seed):
    """Splitting a batch on divergent branches and loops must give what one-program-at-a-time gives."""
    block = max(triton.next_power_of_2(cols), 1) << block_pow
    x = torch.from_numpy(np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32))
    outs = []
    for mode, batch in (("serial", 1), ("batched", 4096), ("batched", 3)):
        out = torch.full((rows, cols), float("nan"))
        tilescope.trace(branchy_rows, mode=mode, batch_size=batch)[(rows,)](x, out, cols, BLOCK=block)
        outs.append(out)
    assert torch.equal(outs[0], outs[1]) and torch.equal(outs[0], outs[2])
