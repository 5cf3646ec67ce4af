"""Predicated execution changes no result, no finding and no op record.

Divergent kernels written like real code (per-program loop bounds, flags, loops inside branches,
branches inside loops, atomics inside divergent loops, while loops with data-dependent trip counts)
run batched (one big batch and small ones) and serially; outputs, sanitizer findings and op streams
must be identical. Loops over local values run however long they are; only loops that wait on
memory switch to concurrent execution.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from hypothesis import given, settings
from hypothesis import strategies as st
from test_op_stream import Recorder, stream

import tilescope
from tilescope.ir import Need, OpKind


@triton.jit
def nested_ragged(x_ptr, lens_ptr, out_ptr, hits_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    n = tl.load(lens_ptr + row)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):  # per-row trip count
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0)
        if tl.sum(x, axis=0) > 0:  # a branch inside a divergent loop
            total += x
            tl.atomic_add(hits_ptr + row % 4, 1)  # an atomic inside it
        else:
            total -= x * 0.5
        for rep in range(row % 3):  # a loop inside the loop, its own per-row count
            total = total * 0.75 + rep
    flag = tl.sum(total, axis=0) > 1.0
    if flag:
        count = 0
        while count < row % 5:  # a while loop inside a branch
            total = total + 1.0
            count += 1
        tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), total)
    else:
        tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), -total)


@triton.jit
def bisect_steps(values_ptr, n, queries_ptr, out_ptr, steps_ptr):
    pid = tl.program_id(0)
    q = tl.load(queries_ptr + pid)
    lo = 0
    hi = n
    steps = 0
    while lo < hi:  # data-dependent trip count
        mid = (lo + hi) // 2
        right = tl.load(values_ptr + mid) < q
        lo = tl.where(right, mid + 1, lo)
        hi = tl.where(right, hi, mid)
        steps += 1
    tl.store(out_ptr + pid, lo)
    tl.store(steps_ptr + pid, steps)


def _ragged_args(rng, rows, width):
    lens = rng.integers(0, width + 1, rows).astype(np.int32)
    x = torch.from_numpy(rng.standard_normal((rows, width)).astype(np.float32))
    return x, torch.from_numpy(lens)


MODES = (dict(mode="serial"), dict(mode="batched"), dict(mode="batched", batch_size=3))


@settings(max_examples=15, deadline=None)
@given(
    rows=st.integers(1, 30), width=st.integers(1, 70), block_pow=st.integers(3, 5), seed=st.integers(0, 2**16)
)
def test_nested_divergence_is_exact_in_every_mode(rows, width, block_pow, seed):
    block = 1 << block_pow
    rng = np.random.default_rng(seed)
    x, lens = _ragged_args(rng, rows, width)
    results = []
    for mode in MODES:
        recorder = Recorder((Need.VALUES,))
        out, hits = torch.zeros(rows, block), torch.zeros(4, dtype=torch.int32)
        tilescope.trace(nested_ragged, clients=[recorder], **mode)[(rows,)](
            x, lens, out, hits, width, BLOCK=block
        )
        results.append((out, hits, stream(recorder, values=True)))
    for out, hits, ops in results[1:]:
        assert torch.equal(out, results[0][0]) and torch.equal(hits, results[0][1])
        assert ops == results[0][2]


@settings(max_examples=10, deadline=None)
@given(queries=st.integers(1, 200), n=st.integers(1, 5000), seed=st.integers(0, 2**16))
def test_binary_search_matches_numpy_in_every_mode(queries, n, seed):
    rng = np.random.default_rng(seed)
    values = torch.from_numpy(np.sort(rng.standard_normal(n)).astype(np.float32))
    q = torch.from_numpy(rng.standard_normal(queries).astype(np.float32))
    want = np.searchsorted(values.numpy(), q.numpy())
    streams = []
    for mode in MODES:
        recorder = Recorder()
        out, steps = torch.full((queries,), -1, dtype=torch.int32), torch.zeros(queries, dtype=torch.int32)
        tilescope.trace(bisect_steps, clients=[recorder], **mode)[(queries,)](values, n, q, out, steps)
        assert out.numpy().tolist() == want.tolist()
        streams.append(stream(recorder, values=False))
    assert streams[0] == streams[1] == streams[2]


@triton.jit(debug=True)
def ragged_with_bug(x_ptr, lens_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    n = tl.load(lens_ptr + row)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols <= n, other=0.0)  # BUG: reads one past the row
    tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), acc)


def test_findings_inside_divergent_loops_are_the_serial_ones():
    rng = np.random.default_rng(4)
    x, lens = _ragged_args(rng, 40, 60)
    lens[-1] = 60  # the last row is full: its extra lane lands past the end of x
    reports = []
    for mode in MODES:
        launcher = tilescope.trace(ragged_with_bug, clients="sanitizer", **mode)
        launcher[(40,)](x, lens, torch.zeros(40, 32), 60, BLOCK=32)
        reports.append([f.to_dict() for f in launcher.reports[0].findings])
    assert reports[0] == reports[1] == reports[2]
    (finding,) = reports[0]
    assert finding["kind"] == "out-of-bounds load" and finding["details"]["first_element"] == (40, 0)
    assert finding["program_ids"] == [[39, 0, 0]] and finding["details"]["iteration"] == 1


@triton.jit
def collatz_steps(start_ptr, out_ptr):
    pid = tl.program_id(0)
    x = tl.load(start_ptr + pid)
    steps = 0
    while x != 1:  # a long loop over local values: no other program is involved
        x = tl.where(x % 2 == 0, x // 2, 3 * x + 1)
        steps += 1
    tl.store(out_ptr + pid, steps)


@triton.jit
def count_up(out_ptr, n):
    i = 0
    total = 0
    while i < n:
        total += i % 7
        i += 1
    tl.store(out_ptr, total)


def test_long_local_loops_are_not_deadlocks():
    out = torch.zeros(1, dtype=torch.int64)
    tilescope.trace(count_up)[(1,)](out, 10_000)  # five times the default spin_limit
    assert out.item() == sum(i % 7 for i in range(10_000))
    starts = torch.tensor([27, 97, 871, 6171], dtype=torch.int64)
    steps = torch.zeros(4, dtype=torch.int64)
    tilescope.trace(collatz_steps, spin_limit=10)[(4,)](starts, steps)
    assert steps.tolist() == [111, 118, 178, 261]


@triton.jit
def wait_for_last(flag_ptr, out_ptr):
    pid = tl.program_id(0)
    if pid < tl.num_programs(0) - 1:  # the waiting side runs first when the branch is predicated
        while tl.atomic_add(flag_ptr, 0) == 0:
            pass
        tl.store(out_ptr + pid, 2)
    else:
        tl.store(out_ptr + pid, 1)
        tl.atomic_xchg(flag_ptr, 1)


def test_loops_that_wait_on_memory_still_switch_to_concurrent(monkeypatch):
    flag, out = torch.zeros(1, dtype=torch.int32), torch.zeros(6, dtype=torch.int32)
    recorder = Recorder()
    tilescope.trace(wait_for_last, clients=[recorder], spin_limit=50)[(6,)](flag, out)
    assert out.tolist() == [2, 2, 2, 2, 2, 1]
    assert any(r.step is not None for r in recorder.ops if r.kind is OpKind.ATOMIC)  # ran interleaved


def test_spin_limit_is_checked():
    with pytest.raises(tilescope.LaunchError, match="spin_limit must be a positive int"):
        tilescope.trace(count_up, spin_limit=0)
