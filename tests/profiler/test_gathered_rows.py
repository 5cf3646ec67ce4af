"""Gathered rows (an embedding lookup) counted per row give the per-lane count's every figure."""

from __future__ import annotations

import numpy as np
import torch
from conftest import profile, site
from hypothesis import given, settings
from hypothesis import strategies as st
from kernels import embedding_kernel

from tilescope.clients.profiler import coalescing
from tilescope.clients.profiler.reuse import Sectors
from tilescope.ir import OpKind, OpRecord, RowAddress


def _record(starts: np.ndarray, cols: np.ndarray, itemsize: int, rows_form: bool, mask=None) -> OpRecord:
    """A load of rows ``starts`` (B, N) plus the shared column block ``cols`` (C,) of byte offsets."""
    batch, n = starts.shape
    rows = starts.reshape(batch, n, 1).astype(np.int64)
    block = cols.reshape(1, 1, -1).astype(np.int64)
    pids = np.stack([np.arange(batch), np.zeros(batch, int), np.zeros(batch, int)], axis=1).astype(np.int32)
    return OpRecord(
        kind=OpKind.LOAD, launch_id=0, seq=0, site=None, program_ids=pids, dtype="fp32", itemsize=itemsize,
        shape=(n, cols.size), address=(rows + block).view(np.uint64), mask=mask, argument="w",
        address_rows=RowAddress(rows, block) if rows_form else None,
    )  # fmt: skip


def _figures(record: OpRecord, shift: int) -> tuple:
    """Traffic, issue and reuse summary of one record, as the profiler takes them."""
    prepared = coalescing.lanes(record, shift)
    issue, traffic = coalescing.analyse(record, prepared, 32, 4)
    sectors = Sectors()
    sectors.add(record, prepared, np.arange(record.program_ids.shape[0], dtype=np.int64))
    grid = (record.program_ids.shape[0], 1, 1)
    return traffic, issue, sectors.summarize(grid, 4), prepared.rows is not None


@settings(max_examples=300, deadline=None)
@given(
    programs=st.integers(1, 9),
    rows=st.sampled_from([1, 2, 3, 4, 8, 16]),
    cols=st.sampled_from([1, 2, 4, 8, 16, 64, 96]),
    itemsize=st.sampled_from([1, 2, 4, 8]),
    vocab=st.integers(1, 40),
    unaligned=st.integers(0, 31),
    shift=st.integers(0, 255),
    seed=st.integers(0, 2**31),
)
def test_rows_match_the_per_lane_count(programs, rows, cols, itemsize, vocab, unaligned, shift, seed):
    rng = np.random.default_rng(seed)
    # rows from few distinct indices (duplicates within and across programs), in no order
    index = rng.integers(0, vocab, (programs, rows))
    starts = 1 << 20 | (unaligned * itemsize) + index * cols * itemsize * int(rng.integers(1, 3))
    block = np.arange(cols) * itemsize
    fast = _figures(_record(starts, block, itemsize, True), shift)
    slow = _figures(_record(starts, block, itemsize, False), shift)
    assert fast[:3] == slow[:3]
    assert not slow[3]
    offsets = starts - starts[:, :1]
    assert fast[3] == (not np.all(offsets == offsets[:1]))  # rows, unless factored after all


@settings(max_examples=100, deadline=None)
@given(
    programs=st.integers(1, 6),
    rows=st.sampled_from([2, 4, 8]),
    cols=st.sampled_from([4, 16, 64]),
    seed=st.integers(0, 2**31),
)
def test_masked_reversed_and_unaligned_rows_are_counted_lane_by_lane(programs, rows, cols, seed):
    rng = np.random.default_rng(seed)
    starts = (1 << 20) + rng.integers(0, 50, (programs, rows)) * cols * 4
    mask = rng.random((programs, rows, cols)) < 0.7
    unaligned = rng.integers(0, 4, starts.shape)
    unaligned.flat[:2] = 0, 1  # two rows a byte apart at least (random ones may all share one residue)
    cases = [
        (starts, np.arange(cols)[::-1] * 4, None),  # columns walked backwards
        (starts, np.arange(cols) * 4, mask),  # a mask
        (starts + unaligned, np.arange(cols) * 4, None),  # rows not element-aligned
    ]
    for first, block, on in cases:
        fast = _figures(_record(first, block, 4, True, on), 0)
        slow = _figures(_record(first, block, 4, False, on), 0)
        assert not fast[3]
        assert fast[:3] == slow[:3]


def test_an_embedding_lookup_moves_whole_rows(rng):
    programs, rows, d, vocab = 64, 16, 64, 3000
    idx = torch.from_numpy(rng.permutation(vocab)[: programs * rows].astype(np.int64))  # no row twice
    w = torch.from_numpy(rng.standard_normal((vocab, d)).astype(np.float32))
    out = torch.full((programs * rows, d), float("nan"))
    launch, _ = profile(embedding_kernel, (programs,), idx, w, out, D=d, ROWS=rows)
    np.testing.assert_array_equal(out.numpy(), w.numpy()[idx.numpy()])
    s = site(launch, "load", "w_ptr")
    # each 64-float row is 256 bytes = 8 sectors (rows of a 256-byte aligned tensor stay aligned),
    # so every request of two whole rows moves 16 sectors and uses them all
    assert s["sectors"] == programs * rows * 8
    assert s["efficiency"] == 1.0
    assert s["requests"] == programs * rows // 2
    assert launch["reuse"]["tensors"]["w_ptr"]["unique_bytes"] == programs * rows * d * 4
