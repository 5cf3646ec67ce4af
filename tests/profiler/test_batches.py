"""Requests and sector runs counted in batches (many records' programs at once) give the figures a
lane-by-lane count gives, record by record."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilescope.clients.profiler import coalescing, reuse
from tilescope.clients.profiler.coalescing import Layout, Pending, Traffic, requests
from tilescope.clients.profiler.reuse import Sectors
from tilescope.ir import OpKind, OpRecord


def _by_lane(flat: np.ndarray, enabled: np.ndarray | None, itemsize: int, groups: np.ndarray) -> Traffic:
    """:func:`requests` the slow way: every program's every instruction, with Python sets."""
    on = np.ones(flat.shape, bool) if enabled is None else enabled
    found = Traffic(lanes=flat.size, active=int(on.sum()))
    for program, lanes in zip(flat.tolist(), on.tolist(), strict=True):
        for instruction in groups.tolist():
            mine = [program[i] for i in instruction if i >= 0 and lanes[i]]
            if mine:
                found.requests += 1
                found.sectors += len({a >> coalescing.SECTOR_SHIFT for a in mine})
                found.lines += len({a >> coalescing.LINE_SHIFT for a in mine})
                found.useful_bytes += len(set(mine)) * itemsize
    return found


def _lanes(rng, batch: int, lanes: int, itemsize: int, order: str) -> np.ndarray:
    """``(batch, lanes)`` byte addresses: scattered, in address order, or one row repeated."""
    if order == "scattered":
        index = rng.integers(0, 4 * lanes, (batch, lanes))
    elif order == "sorted":
        index = np.sort(rng.integers(0, 4 * lanes, (batch, lanes)), axis=1)
    else:  # contiguous, per-program offsets
        index = rng.integers(0, 64, (batch, 1)) + np.arange(lanes)
    return (1 << 20) + index.astype(np.int64) * itemsize


def _mask(rng, batch: int, lanes: int, kind: str) -> np.ndarray | None:
    if kind == "none":
        return None
    if kind == "tail":
        return np.arange(lanes) < rng.integers(0, lanes + 1, (batch, 1))
    mask = rng.random((batch, lanes)) < 0.7
    mask[0] = False  # a program with no lane enabled: no request issued
    return mask


@settings(max_examples=150, deadline=None)
@given(
    batch=st.integers(1, 12),
    block=st.sampled_from([(32,), (8,), (256,), (4, 16), (16, 4)]),
    itemsize=st.sampled_from([1, 2, 4, 8]),
    order=st.sampled_from(["scattered", "sorted", "contiguous"]),
    mask=st.sampled_from(["none", "tail", "random"]),
    vector=st.sampled_from([1, 2, 4]),
    copies=st.booleans(),
    seed=st.integers(0, 2**31),
)
def test_requests_match_the_lane_by_lane_count(batch, block, itemsize, order, mask, vector, copies, seed):
    rng = np.random.default_rng(seed)
    lanes = int(np.prod(block))
    layout = Layout.default(block, len(block) - 1, vector, 32, 4)
    # a block smaller than the layout with copies: every warp's instructions repeat
    groups = layout.instructions(block, vector, copies=copies)
    flat = _lanes(rng, batch, lanes, itemsize, order)
    enabled = _mask(rng, batch, lanes, mask)
    assert requests(flat, enabled, itemsize, groups) == _by_lane(flat, enabled, itemsize, groups)


def test_held_requests_total_the_record_by_record_traffic(rng, monkeypatch):
    monkeypatch.setattr(coalescing, "PENDING_LANES", 100)  # counted several times along the way
    groups = Layout.default((32,), 0, 1, 32, 4).instructions((32,), 1, copies=True)
    pending, expected = Pending(), Traffic()
    for k in range(12):
        flat = _lanes(rng, k % 5 + 1, 32, 4, ["scattered", "sorted"][k % 2])
        enabled = _mask(rng, flat.shape[0], 32, ["none", "tail", "random"][k % 3])
        pending.add(flat, enabled, 4, groups)
        expected.add(requests(flat, enabled, 4, groups))
    assert pending.total() == expected
    assert Pending().total() == Traffic()


def _record(addresses: np.ndarray, mask: np.ndarray | None, first: int) -> OpRecord:
    """A load of per-lane ``(B, L)`` addresses by programs ``first, first + 1, ...``."""
    batch = addresses.shape[0]
    pids = np.zeros((batch, 3), np.int32)
    pids[:, 0] = np.arange(first, first + batch)
    return OpRecord(kind=OpKind.LOAD, launch_id=0, seq=0, site=None, program_ids=pids, dtype="fp32",
                    itemsize=4, shape=(addresses.shape[1],), address=addresses.view(np.uint64), mask=mask,
                    argument="x")  # fmt: skip


def _reuse(records: list[OpRecord], programs: int) -> dict:
    sectors = Sectors()
    for record in records:
        linear = record.program_ids[:, 0].astype(np.int64)
        sectors.add(record, coalescing.lanes(record), linear)
    return sectors.summarize((programs, 1, 1), 4)


@pytest.mark.parametrize("order", ["scattered", "sorted", "contiguous"])
def test_held_lanes_give_the_reuse_of_records_one_by_one(rng, monkeypatch, order):
    records, pairs = [], set()
    for k in range(30):  # a loop's iterations: a few programs each, 30 programs in all
        addresses = _lanes(rng, 3, 16, 4, order)
        mask = _mask(rng, 3, 16, ["none", "tail", "random"][k % 3])
        records.append(_record(addresses, mask, k % 10 * 3))
        on = np.ones(addresses.shape, bool) if mask is None else mask
        for program, lanes, keep in zip(range(k % 10 * 3, k % 10 * 3 + 3), addresses.tolist(), on.tolist(),
                                        strict=True):  # fmt: skip
            pairs |= {(program, a >> coalescing.SECTOR_SHIFT) for a, o in zip(lanes, keep, strict=True) if o}
    held = _reuse(records, 30)
    monkeypatch.setattr(reuse, "PENDING_LANES", 1)  # every record's lanes cut into runs at once
    assert _reuse(records, 30) == held
    sectors = [s for _, s in pairs]
    figures = held["tensors"]["x"]
    assert figures["program_bytes"] == len(pairs) * coalescing.SECTOR
    assert figures["unique_bytes"] == len(set(sectors)) * coalescing.SECTOR
    assert figures["max_programs_per_byte"] == max(sectors.count(s) for s in set(sectors))
