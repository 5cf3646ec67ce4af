"""Loops with independent iterations run at once, as rows of the batch, and change nothing.

Kernels written like real code whose loops carry no value from one iteration to the next (a
grouped MoE GEMM over each expert's row blocks, the normalize-and-store pass of a ragged
layernorm, a persistent grid-stride loop) must give the serial run's outputs, findings, op records
and loop events in every mode. Loops whose iterations meet through memory (a running sum stored
block by block), run atomics, or decide per row fall back to iteration by iteration, with the same
results.
"""

from __future__ import annotations

import inspect
from collections import Counter

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from hypothesis import given, settings
from hypothesis import strategies as st
from op_stream import Recorder
from test_op_stream import stream

import tilescope
from tilescope.frontends.triton.independent import independent_loops
from tilescope.ir import Need, OpKind

MODES = (dict(mode="serial"), dict(mode="batched"), dict(mode="batched", batch_size=3))


@triton.jit
def grouped_gemm(x_ptr, w_ptr, out_ptr, offsets_ptr, K, N,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):  # fmt: skip
    expert = tl.program_id(0)
    pid_n = tl.program_id(1)
    start = tl.load(offsets_ptr + expert)
    end = tl.load(offsets_ptr + expert + 1)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    for m in range(start, end, BM):  # independent: each row block computes and stores its own tile
        offs_m = m + tl.arange(0, BM)
        mask_m = offs_m < end
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):  # carried: acc
            a = tl.load(x_ptr + offs_m[:, None] * K + (k + offs_k)[None, :], mask=mask_m[:, None], other=0.0)
            b = tl.load(w_ptr + expert * K * N + (k + offs_k)[:, None] * N + offs_n[None, :])
            acc += tl.dot(a, b, input_precision="ieee")
        if tl.sum(acc) > 0:  # a branch that differs per row block
            acc = acc * 2.0
        tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=mask_m[:, None])


def _moe(rng, experts, tokens, k=32, n=32):
    counts = rng.integers(0, tokens + 1, experts)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    total = int(offsets[-1])
    x = rng.standard_normal((total, k)).astype(np.float32)
    w = (rng.standard_normal((experts, k, n)) / np.sqrt(k)).astype(np.float32)
    ref = np.zeros((total, n))
    for e in range(experts):
        rows = slice(offsets[e], offsets[e + 1])
        part = x[rows].astype(np.float64) @ w[e]
        for m in range(0, counts[e], 8):  # the kernel doubles (8, 16) tiles with a positive sum
            for c in range(0, n, 16):
                tile = part[m : m + 8, c : c + 16]
                part[m : m + 8, c : c + 16] = tile * 2 if tile.sum() > 0 else tile
        ref[rows] = part
    return [torch.from_numpy(a) for a in (x, w, offsets)], ref, total


def _run_moe(args, total, n, mode, recorder):
    x, w, offsets = args
    out = torch.full((total, n), float("nan"))
    experts = offsets.shape[0] - 1
    tilescope.trace(grouped_gemm, clients=[recorder], **mode)[(experts, n // 16)](
        x, w, out, offsets, x.shape[1], n, BM=8, BN=16, BK=16
    )
    return out


@settings(max_examples=8, deadline=None)
@given(experts=st.integers(1, 6), tokens=st.integers(0, 60), seed=st.integers(0, 2**16))
def test_grouped_gemm_rows_match_serial(experts, tokens, seed):
    rng = np.random.default_rng(seed)
    args, ref, total = _moe(rng, experts, tokens)
    results = []
    for mode in MODES:
        recorder = Recorder((Need.VALUES,))
        out = _run_moe(args, total, 32, mode, recorder)
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5)
        events = Counter((e.kind, e.site.line, e.iteration, tuple(map(tuple, e.program_ids.tolist())), tuple(
            (s.line, i) for s, i in e.loops)) for e in recorder.loops)  # fmt: skip
        results.append((out, stream(recorder, values=True), events))
    for out, ops, events in results[1:]:
        assert torch.equal(out, results[0][0])
        assert ops == results[0][1]
        assert _per_program_events(events) == _per_program_events(results[0][2])


def _per_program_events(events: Counter) -> Counter:
    """Loop events expanded to one row per program (batches group programs differently)."""
    rows = Counter()
    for (kind, line, iteration, pids, loops), count in events.items():
        for pid in pids:
            rows[(kind, line, iteration, pid, loops)] += count
    return rows


def test_grouped_gemm_runs_its_row_blocks_at_once():
    rng = np.random.default_rng(7)
    args, ref, total = _moe(rng, 4, 40)
    recorder = Recorder()
    _run_moe(args, total, 32, dict(mode="batched"), recorder)
    memory = [r for r in recorder.ops if r.kind in (OpKind.LOAD, OpKind.STORE) and r.loops]
    first_store = next(i for i, r in enumerate(memory) if r.kind is OpKind.STORE)
    # every row block's first load ran before any row block stored: one pass over all blocks
    blocks = {(tuple(p), r.loops[0][1]) for r in memory[:first_store] for p in r.program_ids.tolist()}
    assert len(blocks) == sum(-(-int(n) // 8) for n in np.diff(args[2].numpy())) * 2


@triton.jit
def ragged_scale_shift(x_ptr, offsets_ptr, w_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = tl.load(offsets_ptr + row)
    end = tl.load(offsets_ptr + row + 1)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(start, end, BLOCK):  # carried: total
        cols = off + tl.arange(0, BLOCK)
        total += tl.load(x_ptr + cols, mask=cols < end, other=0.0)
    mean = tl.sum(total, axis=0) / (end - start).to(tl.float32)
    for off in range(start, end, BLOCK):  # independent
        cols = off + tl.arange(0, BLOCK)
        mask = cols <= end  # BUG: one lane past the row; past the end of x on the last row
        x = tl.load(x_ptr + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols - start, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols - start, mask=mask, other=0.0)
        tl.store(out_ptr + cols, (x - mean) * w + b, mask=mask)


def _ragged(rng, rows, top, last):
    lengths = rng.integers(1, top, rows)
    lengths[-1] = last
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    x = rng.standard_normal(int(offsets[-1])).astype(np.float32)
    w = rng.standard_normal(top + 1).astype(np.float32)
    b = rng.standard_normal(top + 1).astype(np.float32)
    return [torch.from_numpy(a) for a in (x, offsets, w, b)]


def test_findings_inside_rows_are_the_serial_ones():
    args = _ragged(np.random.default_rng(3), 30, 90, last=37)  # the last row's lane 37 lies past x
    reports = []
    for mode in MODES:
        launcher = tilescope.trace(ragged_scale_shift, clients="sanitizer", **mode)
        launcher[(30,)](*args, torch.zeros(args[0].shape[0] + 1), BLOCK=16)
        reports.append([f.to_dict() for f in launcher.reports[0].findings])
    assert reports[0] == reports[1] == reports[2]
    (finding,) = [f for f in reports[0] if f["kind"] == "out-of-bounds load"]
    assert finding["program_ids"] == [[29, 0, 0]] and finding["details"]["iteration"] == 37 // 16
    source, first = inspect.getsourcelines(ragged_scale_shift.fn)
    bug = first + next(i for i, line in enumerate(source) if "x = tl.load(x_ptr + cols, mask=mask" in line)
    assert finding["line"] == bug


@triton.jit
def blockwise_running_sum(x_ptr, counts_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    # independent names, but each block reads the block the iteration before stored
    for i in range(1, tl.load(counts_ptr + row)):
        prev = tl.load(x_ptr + row * stride + (i - 1) * BLOCK + offs)
        cur = tl.load(x_ptr + row * stride + i * BLOCK + offs)
        tl.store(x_ptr + row * stride + i * BLOCK + offs, prev + cur)


@triton.jit
def block_histogram(x_ptr, counts_ptr, hist_ptr, stride, BINS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    for i in range(0, tl.load(counts_ptr + row)):  # independent names, but atomics
        v = tl.load(x_ptr + row * stride + i * BLOCK + offs)
        tl.atomic_add(hist_ptr + v % BINS, 1)


def test_iterations_that_meet_through_memory_run_one_by_one():
    rng = np.random.default_rng(5)
    counts = torch.from_numpy(rng.integers(0, 9, 12).astype(np.int32))
    x = rng.standard_normal((12, 8 * 16)).astype(np.float32)
    want = x.reshape(12, 8, 16).copy()
    for r, n in enumerate(counts.tolist()):
        want[r, :n] = np.cumsum(want[r, :n], axis=0)
    for mode in MODES:
        got = torch.from_numpy(x.copy())
        tilescope.trace(blockwise_running_sum, **mode)[(12,)](got, counts, 8 * 16, BLOCK=16)
        np.testing.assert_allclose(got.numpy().reshape(12, 8, 16), want, rtol=1e-6)
    values = torch.from_numpy(rng.integers(0, 1000, (12, 8 * 16)).astype(np.int32))
    want_hist = np.bincount(
        np.concatenate([values[r, : n * 16].numpy() % 10 for r, n in enumerate(counts.tolist())]),
        minlength=10,
    )
    for mode in MODES:
        hist = torch.zeros(10, dtype=torch.int32)
        tilescope.trace(block_histogram, **mode)[(12,)](values, counts, hist, 8 * 16, BINS=10, BLOCK=16)
        assert hist.tolist() == want_hist.tolist()


@triton.jit
def persistent_scale(x_ptr, out_ptr, n_tiles, scale, NUM_SMS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for tile in tl.range(pid, n_tiles, NUM_SMS):  # a persistent kernel's grid-stride loop
        offs = tile * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        if pid % 2 == 0:  # a branch that differs per program inside the loop
            y = x * scale
        else:
            y = x - scale
        tl.store(out_ptr + offs, y)


def test_persistent_loop_rows_match_serial():
    rng = np.random.default_rng(11)
    x = torch.from_numpy(rng.standard_normal(37 * 32).astype(np.float32))
    tiles = np.arange(37) % 8  # program of each tile
    want = x.numpy().reshape(37, 32).astype(np.float64)
    want = np.where((tiles % 2 == 0)[:, None], want * 1.5, want - 1.5).reshape(-1)
    streams = []
    for mode in MODES:
        recorder = Recorder((Need.VALUES,))
        out = torch.zeros_like(x)
        tilescope.trace(persistent_scale, clients=[recorder], **mode)[(8,)](
            x, out, 37, 1.5, NUM_SMS=8, BLOCK=32
        )
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
        streams.append(stream(recorder, values=True))
    assert streams[0] == streams[1] == streams[2]


def _loops_of(source: str) -> list[bool]:
    import ast

    fn = ast.parse(source).body[0]
    found = independent_loops(fn)
    return [id(n) in found for n in ast.walk(fn) if isinstance(n, ast.For)]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def k(n):\n    for i in range(n):\n        a = i * 2\n        b = a + 1\n", [True]),
        ("def k(n):\n    acc = 0\n    for i in range(n):\n        acc += i\n", [False]),  # carried
        ("def k(n):\n    for i in range(n):\n        a = i\n    b = a\n", [False]),  # read after the loop
        ("def k(n, c):\n    for i in range(n):\n        if c:\n            a = i\n        b = a\n", [False]),
        (
            "def k(n, c):\n    for i in range(n):\n        if c:\n            a = i\n        else:\n"
            "            a = 0\n        b = a\n",
            [True],
        ),  # fmt: skip
        ("def k(n):\n    for i in range(n):\n        if i:\n            return\n", [False]),
        ("def k(n):\n    for i in tl.static_range(4):\n        a = i\n", [False]),  # unrolled
        (
            "def k(n):\n    for i in range(n):\n        acc = 0\n        for j in range(n):\n"
            "            acc += j\n",
            [True, False],
        ),  # fmt: skip
    ],
)
def test_independence_is_read_from_the_source(source, expected):
    assert _loops_of(source) == expected
