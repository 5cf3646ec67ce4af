"""Only the names code after a divergent ``if`` or loop may read are merged or frozen per program.

A predicated branch merges, and a loop some programs left freezes, each name its statements assign
whose value a later read can see; an iteration's temporaries (offsets, masks, loaded tiles) are
neither, and skipping them changes no result. The analysis is read from the source
(``independent.carried_names``); the kernels here are written like real ragged code and run
batched and serially, against NumPy.
"""

from __future__ import annotations

import ast

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from hypothesis import given, settings
from hypothesis import strategies as st
from test_op_stream import Recorder, stream
from test_predication import MODES, _ragged_args

import tilescope
from tilescope.frontends.triton.independent import carried_names
from tilescope.ir import Need


def _carried(source: str) -> list[frozenset[str] | None]:
    """The carried names of each ``if``/``for``/``while`` of the one function in ``source``, in walk order."""
    fn = ast.parse(source).body[0]
    found = carried_names(fn)
    return [found[id(n)] for n in ast.walk(fn) if isinstance(n, (ast.If, ast.For, ast.While))]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # a K loop: the accumulator is carried, the offsets and the tile are the iteration's own
        (
            "def k(n):\n    acc = 0\n    for i in range(n):\n        offs = i * 4\n        t = offs + 1\n"
            "        acc += t\n    return acc\n",
            [{"acc"}],
        ),  # fmt: skip
        # read after the loop: the last iteration's value leaves it
        ("def k(n):\n    for i in range(n):\n        last = i * 2\n    return last\n", [{"last"}]),
        # read before it is assigned: the previous iteration's value
        (
            "def k(n):\n    prev = 0\n    for i in range(n):\n        d = i - prev\n        prev = i\n",
            [{"prev"}],
        ),  # fmt: skip
        # assigned on one side only, read after the branch in the same iteration: carried by the loop
        (
            "def k(n, c):\n    for i in range(n):\n        if c:\n            a = i\n        b = a\n",
            [{"a"}, {"a"}],
        ),  # fmt: skip
        # both sides assign it before it is read: the branch merges it, the loop does not carry it
        (
            "def k(n, c):\n    s = 0\n    for i in range(n):\n        if c:\n            a = i\n"
            "        else:\n            a = 0\n        s += a\n    return s\n",
            [{"s"}, {"a"}],
        ),  # fmt: skip
        # a branch's own temporary is not merged
        (
            "def k(c):\n    if c:\n        t = 1\n        y = t\n    else:\n        y = 2\n    return y\n",
            [{"y"}],
        ),
        # a while loop's test reads what the body assigns; the step is a temporary
        (
            "def k(q):\n    lo = 0\n    hi = 8\n    while lo < hi:\n        mid = (lo + hi) // 2\n"
            "        lo = mid + 1\n    return lo\n",
            [{"lo"}],
        ),  # fmt: skip
        # an inner loop's value read after it: carried by both (the inner loop may not run, and then
        # the outer body reads the previous outer iteration's value)
        (
            "def k(n):\n    acc = 0\n    for i in range(n):\n        for j in range(n):\n            t = j\n"
            "        acc += t\n    return acc\n",
            [{"acc", "t"}, {"t"}],
        ),  # fmt: skip
        # an inner loop's own temporary: carried by neither
        (
            "def k(n):\n    acc = 0\n    for i in range(n):\n        for j in range(n):\n            t = j\n"
            "            acc += t\n    return acc\n",
            [{"acc"}, {"acc"}],
        ),  # fmt: skip
        # statements the analysis does not follow keep every name
        (
            "def k(n):\n    for i in range(n):\n        t = i\n        if t:\n            return\n",
            [None, None],
        ),
    ],
)
def test_carried_names_are_read_from_the_source(source, expected):
    found = _carried(source)
    assert [None if f is None else set(f) for f in found] == expected


@triton.jit
def ragged_row_stats(x_ptr, lens_ptr, out_ptr, last_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    n = tl.load(lens_ptr + row)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    peak = tl.full([BLOCK], float("-inf"), tl.float32)
    prev = tl.zeros([BLOCK], dtype=tl.float32)
    rise = tl.zeros([BLOCK], dtype=tl.float32)
    seen = tl.zeros([BLOCK], dtype=tl.float32)
    echo = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):  # per-row trip count
        cols = start + tl.arange(0, BLOCK)  # the iteration's own temporaries: cols, mask, x, big
        mask = cols < n
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        big = tl.where(mask, x, float("-inf"))
        if tl.max(big, axis=0) > 1.0:  # divergent: the branch's temporary `scaled` is not merged
            scaled = x * 2.0
            total += scaled
            echo += seen  # `seen` is read only here, before this side assigns it: still merged
            seen = x
        else:
            total += x
        rise += tl.where(mask, x - prev, 0.0)  # reads the previous iteration's tile
        prev = x
        peak = tl.maximum(peak, big)
        last = start  # read after the loop
    base = out_ptr + row * 4 * BLOCK + tl.arange(0, BLOCK)
    tl.store(base, total)
    tl.store(base + BLOCK, peak)
    tl.store(base + 2 * BLOCK, rise)
    tl.store(base + 3 * BLOCK, echo)
    if n > 0:
        tl.store(last_ptr + row, last)


def _reference(x: np.ndarray, lens: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    rows = x.shape[0]
    out = np.zeros((rows, 4, block))
    last = np.full(rows, -1)
    for r in range(rows):
        total, peak, prev, rise = np.zeros(block), np.full(block, -np.inf), np.zeros(block), np.zeros(block)
        seen, echo = np.zeros(block), np.zeros(block)
        for start in range(0, int(lens[r]), block):
            cols = start + np.arange(block)
            mask = cols < lens[r]
            tile = np.where(mask, x[r, np.minimum(cols, x.shape[1] - 1)], 0.0).astype(np.float64)
            big = np.where(mask, tile, -np.inf)
            if big.max() > 1.0:
                total += tile * 2.0
                echo += seen
                seen = tile
            else:
                total += tile
            rise += np.where(mask, tile - prev, 0.0)
            prev = tile
            peak = np.maximum(peak, big)
            last[r] = start
        out[r] = total, peak, rise, echo
    return out, last


@settings(max_examples=12, deadline=None)
@given(
    rows=st.integers(1, 24), width=st.integers(1, 90), block_pow=st.integers(2, 5), seed=st.integers(0, 2**16)
)
def test_ragged_loops_with_temporaries_match_numpy_in_every_mode(rows, width, block_pow, seed):
    block = 1 << block_pow
    x, lens = _ragged_args(np.random.default_rng(seed), rows, width)
    want, want_last = _reference(x.numpy(), lens.numpy(), block)
    streams = []
    for mode in MODES:
        recorder = Recorder((Need.VALUES,))
        out = torch.zeros(rows, 4, block)
        last = torch.full((rows,), -1, dtype=torch.int32)
        launcher = tilescope.trace(ragged_row_stats, clients=[recorder], **mode)
        launcher[(rows,)](x, lens, out, last, width, BLOCK=block)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
        assert last.numpy().tolist() == want_last.tolist()
        streams.append(stream(recorder, values=True))
    assert streams[0] == streams[1] == streams[2]
