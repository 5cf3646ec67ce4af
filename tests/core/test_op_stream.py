"""The op-stream contract (docs/ir.md), checked with a recording client over kernels that use all of it.

Every execution mode (batched with big and small batches, serial, concurrent under three seeds;
with values and addresses-only) must deliver the same records up to order, once each record is
expanded to one row per program: the same memory ops with the same addresses, enabled and
in-bounds lanes, attributes and loops, the same compute records with their shapes, the same faults.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import stream_kernels as sk
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from op_stream import Recorder, fault_rows, per_program

import tilescope
from tilescope.ir import ATOMIC_OPS, Need, OpKind

MODES = [
    dict(mode="batched"),
    dict(mode="batched", batch_size=3),
    dict(mode="serial"),
    dict(mode="concurrent", seed=0, slots=4),
    dict(mode="concurrent", seed=1, slots=2),
    dict(mode="concurrent", seed=2, slots=7),
]


def stream(recorder: Recorder, values: bool) -> tuple[Counter, Counter]:
    ops = Counter(row for rec in recorder.ops for row in per_program(rec, values, recorder))
    faults = Counter(row for f in recorder.faults for row in fault_rows(f, recorder))
    return ops, faults


def _launch(kernel, grid, make_args, meta, mode, needs=(), compute_outputs=None):
    recorder = Recorder(needs)
    args = make_args()
    tilescope.trace(kernel, clients=[recorder], compute_outputs=compute_outputs, **mode)[grid](*args, **meta)
    return recorder, args


def _loops_args():
    x = torch.from_numpy(np.random.default_rng(3).standard_normal(70).astype(np.float32))
    return x, torch.zeros(70), 70


def _atomic_args():
    counters = torch.tensor([0, -1, 100, -1, 0, 5, 0], dtype=torch.int32)
    return counters, torch.zeros(9, dtype=torch.int32), torch.zeros(16, dtype=torch.int32)


def _descriptor_args():
    rng = np.random.default_rng(5)
    a = torch.from_numpy(rng.standard_normal((32, 32)).astype(np.float32))
    idx = torch.from_numpy(rng.permutation(32).astype(np.int32))
    return a, torch.zeros(32, 32), idx, 32, 32


def _fault_args():
    x = torch.from_numpy(np.abs(np.random.default_rng(9).standard_normal(50)).astype(np.float32))
    x[7] = -1.0
    return x, torch.zeros(50), 50


CASES = {
    "loops_and_masks": (sk.loops_and_masks, (5,), _loops_args, dict(BLOCK=16)),
    "every_atomic": (sk.every_atomic, (9,), _atomic_args, dict(BLOCK=16)),
    "descriptor_ops": (sk.descriptor_ops, (4,), _descriptor_args, dict(BM=8, BN=16)),
    "faults": (sk.faults, (4,), _fault_args, dict(BLOCK=16)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_mode_gives_the_same_records(name):
    kernel, grid, make_args, meta = CASES[name]
    reference = None
    for mode in MODES:
        recorder, _ = _launch(kernel, grid, make_args, meta, mode, needs=(Need.VALUES,))
        got = stream(recorder, values=True)
        assert got[0], "no records"
        if reference is None:
            reference = got
        else:
            assert got[0] == reference[0], f"{mode} op records differ from batched"
            assert got[1] == reference[1], f"{mode} faults differ from batched"
    for mode in MODES[:3]:  # addresses-only runs: the same records, without values
        recorder, _ = _launch(
            kernel, grid, make_args, meta, mode, needs=(Need.ADDRESSES_ONLY,), compute_outputs=False
        )
        assert stream(recorder, values=False) == stream_without_values(reference)


def stream_without_values(reference):
    ops, faults = reference
    trimmed = Counter()
    for row, count in ops.items():
        trimmed[row[:15]] += count
    return trimmed, faults


def test_memory_records_carry_the_contract_fields():
    recorder, _ = _launch(sk.every_atomic, (9,), _atomic_args, dict(BLOCK=16), dict(mode="batched"))
    atomics = [r for r in recorder.ops if r.kind is OpKind.ATOMIC]
    assert {r.attrs["op"] for r in atomics} == set(ATOMIC_OPS)
    by_op = {r.attrs["op"]: r for r in atomics}
    assert (by_op["add"].attrs["sem"], by_op["add"].attrs["scope"]) in {
        ("relaxed", "gpu"),
        ("acq_rel", "gpu"),
    }
    assert (by_op["max"].attrs["sem"], by_op["max"].attrs["scope"]) == ("acquire", "cta")
    assert (by_op["or"].attrs["sem"], by_op["or"].attrs["scope"]) == ("acq_rel", "sys")
    assert (by_op["xchg"].attrs["sem"], by_op["xchg"].attrs["scope"]) == ("acq_rel", "gpu")
    assert (by_op["load"].attrs["sem"], by_op["store"].attrs["sem"]) == ("acquire", "release")
    assert all(r.itemsize == 4 and r.dtype == "int32" for r in atomics)
    masked = [r for r in atomics if r.shape == (16,)]
    assert len(masked) == 1 and masked[0].enabled().sum() == sum(range(1, 10))
    assert not any(
        r.kind in (OpKind.LOAD, OpKind.STORE) for r in recorder.ops
    )  # atomic load/store are atomics

    recorder, _ = _launch(sk.descriptor_ops, (4,), _descriptor_args, dict(BM=8, BN=16), dict(mode="batched"))
    descriptor = [r for r in recorder.ops if r.block_shape]
    flags = ("gather", "scatter", "descriptor")
    kinds = Counter((r.kind.value, tuple(sorted(k for k in r.attrs if k in flags))) for r in descriptor)
    assert kinds == {
        ("descriptor_load", ()): 1,
        ("descriptor_store", ()): 1,
        ("descriptor_load", ("gather",)): 1,
        ("descriptor_store", ("scatter",)): 1,
        ("atomic", ("descriptor",)): 1,
    }
    assert all(r.coords is not None for r in descriptor)
    tile = next(r for r in descriptor if r.kind is OpKind.DESCRIPTOR_LOAD and not r.attrs)
    assert tile.block_shape == (8, 16) and np.asarray(tile.coords[0]).ravel().tolist() == [0, 8, 16, 24]

    recorder, _ = _launch(sk.loops_and_masks, (5,), _loops_args, dict(BLOCK=16), dict(mode="batched"))
    loads = [r for r in recorder.ops if r.kind is OpKind.LOAD]
    assert sorted({r.loops[-1][1] for r in loads}) == [0, 1, 2]  # the for loop's iterations
    assert all(len(r.loops) == 1 for r in loads)
    assert any(r.kind is OpKind.BARRIER for r in recorder.ops)
    events = Counter(e.kind.value for e in recorder.loops for _ in e.program_ids)  # per program
    assert events["enter"] == events["exit"] and events["iterate"] > events["enter"]
    elementwise = [r for r in recorder.ops if r.kind is OpKind.ELEMENTWISE and r.attrs["op"] == "mul"]
    assert elementwise and all(r.shape in ((16,), ()) and r.operands for r in elementwise)

    recorder, _ = _launch(sk.faults, (4,), _fault_args, dict(BLOCK=16), dict(mode="batched"))
    load = next(r for r in recorder.ops if r.kind is OpKind.LOAD)
    assert load.in_bounds is not None and (load.enabled() & ~load.in_bounds).sum() == 1  # lane 50 of x
    assert {str(f.kind) for f in recorder.faults} == {"out-of-bounds load", "device assert"}
    assert any(r.kind is OpKind.ASSERT for r in recorder.ops)


def test_concurrent_schedule_replays_with_its_seed():
    def order(seed):
        recorder, _ = _launch(sk.every_atomic, (9,), _atomic_args, dict(BLOCK=16),
                              dict(mode="concurrent", seed=seed, slots=9))  # fmt: skip
        return [(r.step, tuple(r.program_ids[0].tolist())) for r in recorder.ops if r.kind.is_memory]

    first = order(11)
    assert first == order(11)
    assert first != order(12)
    assert len({pid for _, pid in first}) == 9


@settings(max_examples=20, deadline=None)
@given(
    rows=st.integers(1, 24),
    cols=st.integers(1, 40),
    block_pow=st.integers(0, 2),
    seed=st.integers(0, 2**16),
    tail=st.integers(0, 2),
)
def test_batched_and_serial_streams_are_equal(rows, cols, block_pow, seed, tail):
    """Divergent branches, per-program loops and atomics in divergent code: one record set, one fault set."""
    block = triton_next_power_of_2(cols) << block_pow
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(rng.standard_normal((rows, cols)).astype(np.float32))
    streams = []
    for mode in (dict(mode="serial"), dict(mode="batched"), dict(mode="batched", batch_size=3)):
        recorder = Recorder((Need.VALUES,))
        out, hits = torch.zeros(rows, cols), torch.zeros(4, dtype=torch.int32)
        tilescope.trace(sk.divergent_rows, clients=[recorder], **mode)[(rows,)](
            x, out, hits, cols, tail, BLOCK=block
        )
        streams.append(stream(recorder, values=True))
    assert streams[0] == streams[1] == streams[2]


def triton_next_power_of_2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()
