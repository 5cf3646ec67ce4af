"""Rows of the ops table: affine addresses stored as base and strides read back lane for lane, and
only the rows that are not affine list their lanes."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from tilescope.clients.tracer.reader import expand_addresses, fill_carried
from tilescope.clients.tracer.rows import (
    CHECK_LANES,
    UNIFORM_ROWS,
    RowContext,
    affine_rows,
    footed_tables,
    record_rows,
    record_tables,
    tables,
)
from tilescope.clients.tracer.schema import CARRIED, CARRIED_KEY
from tilescope.ir import OpKind, OpRecord, RowAddress


def _record(address: np.ndarray, mask: np.ndarray | None = None) -> OpRecord:
    rows = address.shape[0]
    pids = np.stack([np.arange(rows), np.zeros(rows), np.zeros(rows)], axis=1).astype(np.int32)
    return OpRecord(kind=OpKind.LOAD, launch_id=1, seq=1, site=None, program_ids=pids, dtype="fp32",
                    address=address, mask=mask)


def _table(record: OpRecord, max_bytes: int) -> pa.Table:
    ctx = RowContext(launch=1, op=0, batch=0, site_id=lambda site: -1, keep_values=None)
    return pa.concat_tables([fill_carried(table) for table, _ in record_tables(record, ctx, max_bytes)])


@settings(max_examples=200, deadline=None)
@given(
    rows=st.integers(1, 9),
    block=st.lists(st.integers(1, 5), min_size=0, max_size=3),
    strides=st.lists(st.integers(-(2**40), 2**40), min_size=3, max_size=3),
    varied=st.booleans(),
    broken=st.sets(st.integers(0, 8)),
    max_bytes=st.sampled_from([1, 300, 1 << 20]),
    seed=st.integers(0, 2**16),
)
def test_addresses_read_back_exactly(rows, block, strides, varied, broken, max_bytes, seed):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2**63, rows, dtype=np.uint64)  # with strides, wraps past 2^64 at times
    step = np.asarray(strides[: len(block)], dtype=np.int64)
    steps = step + (rng.integers(0, 3, (rows, len(block))) if varied else 0)
    index = np.indices(block).reshape(len(block), math.prod(block)).astype(np.int64)  # (dims, lanes)
    address = (base[:, None] + (steps @ index).astype(np.uint64)).reshape(rows, *block)
    # the last lane is neither lane 0 nor one step along one dimension (those define the strides)
    breakable = sum(size - 1 for size in block) >= 2
    broken = sorted(r for r in broken if r < rows and breakable)
    for r in broken:
        address[r].reshape(-1)[-1] += np.uint64(1 + rng.integers(0, 7))

    _, _, affine = affine_rows(address)
    assert np.flatnonzero(~affine).tolist() == broken

    table = _table(_record(address), max_bytes)
    stored = table.column("address").is_valid().to_numpy(zero_copy_only=False)
    assert np.flatnonzero(stored).tolist() == broken  # only the broken rows list their lanes
    read = expand_addresses(table).column("address").to_pylist()
    for r in range(rows):
        np.testing.assert_array_equal(np.asarray(read[r], dtype=np.uint64), address[r].reshape(-1))


def test_broadcast_and_transposed_views_are_affine():
    rows, m, n = 6, 64, 32
    data = (np.arange(rows)[:, None, None] * 4096 + np.arange(n)[None, :, None] * 4
            + np.arange(m)[None, None, :] * 256).astype(np.uint64)
    transposed = data.transpose(0, 2, 1)  # the engine's (B, M, N) view of a (B, N, M) buffer
    base, strides, affine = affine_rows(transposed)
    assert affine.all() and (strides == [256, 4]).all() and (base == np.arange(rows) * 4096).all()
    uniform = np.broadcast_to(transposed[:1], transposed.shape)
    assert affine_rows(uniform)[2].all()


def test_large_records_are_checked_in_chunks():
    rows = 3 * CHECK_LANES // 1024 + 1
    address = (np.arange(rows)[:, None] * 8192 + np.arange(1024) * 8).astype(np.uint64)
    address[-1, 5] = 0
    assert np.flatnonzero(~affine_rows(address)[2]).tolist() == [rows - 1]


def test_partial_masks_are_listed_full_masks_are_null():
    address = (np.arange(4)[:, None] * 64 + np.arange(16) * 4).astype(np.uint64)
    mask = np.ones((4, 16), dtype=bool)
    mask[2, 10:] = False
    table = _table(_record(address, mask), 1 << 20)
    assert table.column("active_lanes").to_pylist() == [16, 16, 10, 16]
    masks = table.column("mask").to_pylist()
    assert masks[0] is None and masks[2] == [True] * 10 + [False] * 6


@settings(max_examples=100, deadline=None)
@given(records=st.lists(st.tuples(st.integers(1, 6), st.lists(st.integers(0, 99), max_size=4)), min_size=1,
                        max_size=8), max_bytes=st.sampled_from([1, 300, 1 << 20]))  # fmt: skip
def test_joined_records_keep_each_records_lists(records, max_bytes):
    """Records of different row counts and loop depths joined into tables (a record cut across
    tables when they are small): a table's metadata holds the loop iterations and shape of its
    records, and read back every row holds its own record's."""
    batch = []
    for op, (rows, iterations) in enumerate(records):
        record = _record(np.zeros((rows, op % 3 + 1), dtype=np.uint64))
        record.loops = tuple((None, i) for i in iterations)
        ctx = RowContext(launch=1, op=op, batch=0, site_id=lambda site: -1, keep_values=None)
        batch.append(record_rows(record, ctx))
    parts = [t for t, _ in tables(batch, max_bytes)]
    for part in parts:  # the lists are in the table's metadata, for its own records only
        assert not set(CARRIED) & set(part.column_names)
        ops = json.loads(part.schema.metadata[CARRIED_KEY.encode()])
        assert sorted(map(int, ops)) == sorted(set(part.column("op").to_pylist()))
    table = pa.concat_tables([fill_carried(t) for t in parts])
    expected = [(its, [op % 3 + 1]) for op, (rows, its) in enumerate(records) for _ in range(rows)]
    assert list(zip(table.column("loop_iterations").to_pylist(), table.column("shape").to_pylist(),
                    strict=True)) == expected  # fmt: skip


def test_filling_leaves_a_table_whose_rows_each_hold_their_lists():
    """A part of format 3 or older repeats each record's lists on every row: read back unchanged,
    records with a null list (no address graph) included."""
    lists = pa.array([[1, 2], [1, 2], None, None, [3]], pa.list_(pa.int32()))
    table = pa.table({"op": pa.array([0, 0, 1, 1, 2], pa.int64()), "address_sites": lists, "shape": lists})
    assert fill_carried(table).equals(table)
    carried = pa.array([[8], None, None], lists.type)  # format 4: op 4's second row, op 5 (no list)
    table = pa.table({"op": pa.array([4, 4, 5], pa.int64()), "shape": carried})
    assert fill_carried(table).column("shape").to_pylist() == [[8], [8], None]


@settings(max_examples=150, deadline=None)
@given(
    programs=st.integers(1, 5),
    shape=st.lists(st.integers(1, 4), min_size=2, max_size=3),
    lead=st.integers(1, 2),
    steps=st.lists(st.integers(-64, 64), min_size=3, max_size=3),
    gather=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_row_form_reads_back_exactly(programs, shape, lead, steps, gather, seed):
    """Per-row pointers from data on the leading axes plus a shared block on the trailing ones (the
    engine's row form) read back lane for lane; an affine block is written as row offsets, a
    gathered one lists its lanes."""
    lead = min(lead, len(shape) - 1)
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 2**40, (programs, *shape[:lead], *[1] * (len(shape) - lead))) * 4
    trailing = [1] * lead + shape[lead:]
    block = sum(np.arange(n).reshape([-1 if d == i else 1 for i in range(len(shape))]) * steps[d]
                for d, n in enumerate(trailing))[None] * 4  # fmt: skip
    block = np.broadcast_to(block, (1, *trailing)).astype(np.int64)
    if gather:
        block = block + rng.integers(0, 8, block.shape) * 4
    record = _record(np.zeros((programs, 0), np.uint64))
    record.address, record.shape = None, tuple(shape)
    record.address_rows = RowAddress(rows, block)
    table = _table(record, 1 << 20)
    expected = RowAddress(rows, block).materialize().reshape(programs, -1)
    got = expand_addresses(table).column("address").to_pylist()
    np.testing.assert_array_equal(np.array(got, dtype=np.uint64), expected)
    affine = not gather or bool(np.all(affine_rows(np.broadcast_to(block, (1, *shape)).view(np.uint64))[2]))
    in_rows = affine and math.prod(shape[:lead]) > 1 and any(n > 1 for n in trailing[lead:])
    assert table.column("address_rows").is_valid().to_numpy(zero_copy_only=False).all() == in_rows


def test_attrs_text_is_worked_out_once_per_typed_value():
    """Attrs that compare equal but print differently (1, 1.0, True) keep their own text."""
    ctx = RowContext(launch=1, op=0, batch=0, site_id=lambda site: -1, keep_values=None)
    address = np.arange(4, dtype=np.uint64).reshape(2, 2) * 4
    texts = []
    for attrs in ({"k": 1}, {"k": 1.0}, {"k": True}, {"k": 1}, {"k": [1, 2]}):
        record = OpRecord(kind=OpKind.LOAD, launch_id=1, seq=1, site=None, dtype="fp32", address=address,
                          program_ids=np.zeros((2, 3), np.int32), attrs=attrs)  # fmt: skip
        texts.append(record_rows(record, ctx).texts["attrs"])
    assert texts == ['{"k": 1}', '{"k": 1.0}', '{"k": true}', '{"k": 1}', '{"k": [1, 2]}']


@settings(max_examples=120, deadline=None)
@given(
    records=st.lists(
        st.tuples(
            st.sampled_from([1, 5, UNIFORM_ROWS - 1, UNIFORM_ROWS, 80]),  # rows
            st.sampled_from(["none", "full", "partial", "some rows"]),  # mask
            st.booleans(),  # pid_y varies
            st.booleans(),  # every row the same strides (else one row's differ)
            st.booleans(),  # one row not affine (its lanes listed)
        ),
        min_size=1,
        max_size=5,
    ),
    max_bytes=st.sampled_from([300, 4096, 1 << 20]),
    inline=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_uniform_columns_read_back_on_every_row(tmp_path_factory, records, max_bytes, inline, seed):
    """Records joined into part files, some of them with pid_y, pid_z, active lanes, bytes and strides
    the same on every row (those go in the footer when the record has enough rows), some not: read
    back, every row holds the values of its own program, lane for lane."""
    from tilescope.clients.tracer.parts import PartWriter
    from tilescope.clients.tracer.reader import read_part

    rng = np.random.default_rng(seed)
    directory = tmp_path_factory.mktemp("parts")
    writer = PartWriter(directory, row_group_bytes=max_bytes, inline_bytes=(1 << 40) if inline else 0)
    writer.begin()
    expected = []
    for op, (rows, masking, varied_y, same_strides, listed) in enumerate(records):
        block = (2, 8)
        pids = np.stack([rng.permutation(rows), rng.integers(0, 3, rows) if varied_y else np.full(rows, 2),
                         np.full(rows, 1)], axis=1).astype(np.int32)  # fmt: skip
        steps = np.tile([64, 4], (rows, 1))
        if not same_strides:
            steps[rng.integers(rows)] = [128, 8]
        index = np.indices(block).reshape(2, -1)
        base = rng.integers(0, 2**40, rows).astype(np.uint64) * np.uint64(4)
        address = (base[:, None] + (steps @ index).astype(np.uint64)).reshape(rows, *block)
        broken = int(rng.integers(rows)) if listed else -1
        if listed:
            address[broken, 1, 7] += np.uint64(4)
        mask = None
        if masking == "full":
            mask = np.ones((rows, *block), dtype=bool)
        elif masking == "partial":
            mask = rng.random((rows, *block)) < 0.5
        elif masking == "some rows":
            mask = np.ones((rows, *block), dtype=bool)
            mask[rng.integers(rows), 0, 3:] = False
        record = OpRecord(kind=OpKind.LOAD, launch_id=1, seq=op, site=None, program_ids=pids, dtype="fp32",
                          address=address, mask=mask)  # fmt: skip
        ctx = RowContext(launch=1, op=op, batch=0, site_id=lambda site: -1, keep_values=None)
        rows_of = record_rows(record, ctx)
        writer.add(lambda r=rows_of: ((t, c) for t, _, c in footed_tables([r], max_bytes)), rows,
                   int(rows_of.weight.sum()))
        lanes = np.ones((rows, 16), dtype=bool) if mask is None else mask.reshape(rows, -1)
        for r in range(rows):
            active = int(lanes[r].sum())
            expected.append({
                "op": op, "pid_x": int(pids[r, 0]), "pid_y": int(pids[r, 1]), "pid_z": 1,
                "active_lanes": active, "bytes": 4 * active, "address_base": int(address[r, 0, 0]),
                "address_strides": None if r == broken else [int(s) for s in steps[r]],
                "address": [int(a) for a in address[r].reshape(-1)],
                "mask": None if active == 16 else lanes[r].tolist(),
            })  # fmt: skip
    writer.commit()
    writer.close()
    parts = sorted(directory.glob("part-*.parquet"))
    table = expand_addresses(pa.concat_tables([read_part(p) for p in parts]))
    got = table.select(list(expected[0])).to_pylist()
    assert got == expected
