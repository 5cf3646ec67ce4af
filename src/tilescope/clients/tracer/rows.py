"""One op record -> rows of the ``ops`` table: one row per program, lanes as list columns.

A row whose addresses are affine over the block (lane ``i`` at ``base + Σ i_d × stride_d``: what
``tl.arange`` arithmetic produces) is written as its base and strides, a few numbers however big
the block. A gather the engine kept in row form (``OpRecord.address_rows``: per-row pointers from
data plus a shared affine block, an embedding lookup's ``w + idx[:, None] * D + cols[None, :]``)
adds one offset per block row (``address_rows``), not one address per lane; only other rows list
every lane. Rows are cut into slices of at most ``max_bytes`` of Arrow data, so converting a record
never holds more than one slice beside the engine's own arrays.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ...ir import OpRecord, itemsize
from . import arrow
from .schema import CARRIED_KEY, FOOTER, OPS_SCHEMA, ROW_SCHEMA

_TYPES = {f.name: f.type for f in OPS_SCHEMA}

#: lanes the affine check compares at a time: bounds its scratch memory to a few MiB
CHECK_LANES = 1 << 16
#: Arrow bytes of a row besides its lanes (ids, pids, site lists), for cutting slices
ROW_BYTES = 128
#: rows a record needs for its :data:`~.schema.UNIFORM` columns to go in the footer when they are
#: the same on every row (a smaller record's rows hold their own)
UNIFORM_ROWS = 32


@dataclass(frozen=True)
class RowContext:
    """Where a record sits in the trace: launch number, op position, committed batch, site ids;
    ``memo`` keeps what is worked out once per object for the launch (see :func:`_memo` and :func:`_once`)."""

    launch: int
    op: int
    batch: int
    site_id: Callable[[object], int]
    keep_values: np.ndarray | None  # (B,) rows whose values are written; None: no values
    memo: dict = field(default_factory=dict)



@dataclass
class Rows:
    """One record's rows as NumPy columns, waiting to be joined with other records' into a table.

    ``constants``: the one value of every row for each per-record number column; ``numbers``: a
    value per row for each other primitive column; ``texts``: one string (or None) per record for
    each text column; ``same``: the one list of every row for each carried list column (None:
    every row null); ``lists``: per other list column, the items of every row in row order and each
    row's count (None: every row null); ``valid``: rows of a list column that are not null.
    ``op`` is expanded to rows once per table, for all its records together; the other per-record
    columns (:data:`FOOTER`) go in the table's metadata (:func:`tables`).
    """

    n: int
    constants: dict[str, int]
    numbers: dict[str, np.ndarray]
    texts: dict[str, str | None]
    same: dict[str, tuple[int, ...] | None]
    lists: dict[str, tuple[np.ndarray, np.ndarray] | None]
    valid: dict[str, np.ndarray]
    weight: np.ndarray
    uniform: dict = field(default_factory=dict)


_NUMBERS = ("pid_x", "pid_y", "pid_z", "active_lanes", "bytes", "address_base")
_LISTS = ("address_strides", "address_rows", "address", "mask", "values", "coords")


def _items(items: list[int] | None) -> tuple[int, ...] | None:
    return None if items is None else tuple(int(i) for i in items)


def _lanes(
    data: np.ndarray | None, width: int, keep: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """Every kept row's lanes (``width`` each); rows outside ``keep`` take none (and are null)."""
    if data is None or (keep is not None and not keep.any()):
        return None
    rows = data.shape[0]
    block = data.reshape(rows, -1) if keep is None or keep.all() else data[keep].reshape(-1, width)
    counts = np.full(rows, width, dtype=np.int64) if keep is None else np.where(keep, width, 0)
    return np.array(block, copy=True).reshape(-1), counts


def record_rows(record: OpRecord, ctx: RowContext) -> Rows:
    """The rows of one op record: one per program.

    A row's ``mask`` is null when every lane of it is enabled, its ``address`` null when its
    addresses are affine or in row form (then ``address_base``, ``address_strides`` and
    ``address_rows`` give them).
    """
    pids = record.program_ids
    rows = pids.shape[0]
    shape: tuple[int, ...] = ()
    lanes = 0
    address = base = strides = offsets = listed = mask = partial = values = None
    active = None
    proven = _factored(record, rows, ctx) or _row_form(record, rows, ctx)
    if proven is not None:  # one shared block: check it once, every program is it plus its offsets
        shape, base, strides, offsets = proven
        lanes = math.prod(shape)
        listed = np.zeros(rows, dtype=bool)
    elif record.addresses() is not None:
        shape = tuple(record.address.shape[1:])
        lanes = math.prod(shape)
        address = _programs(record.address)
        base, strides, affine = (_rows(a, rows) for a in affine_rows(address))
        address, listed = _rows(address, rows), ~affine
    some_partial = some_listed = False
    if record.address is not None or proven is not None:
        active, partial = _active(record.mask, rows, lanes)
        some_partial = bool(partial.any())
        mask = _rows(_programs(record.mask), rows) if some_partial else None
        if record.values is not None and ctx.keep_values is not None:
            values = _rows(_programs(record.values), rows)
    each = None  # the active lanes of every row, when a record of many rows goes without the columns
    if active is None:  # every row has all its lanes (a compute op: none)
        if rows >= UNIFORM_ROWS:
            each = lanes
        else:
            active = np.full(rows, lanes, dtype=np.int64)
    if listed is not None:
        some_listed = proven is None and bool(listed.any())
    kept = ctx.keep_values if values is not None else None
    weight = _weights(rows, lanes, listed if some_listed else None, partial if some_partial else None, kept,
                      0 if offsets is None else offsets.shape[1])
    attrs = record.attrs
    raw_coords = record.coords
    if raw_coords is None and "coords" in attrs:
        attrs = dict(attrs)
        raw_coords = attrs.pop("coords")
    coords = None
    if raw_coords is not None:
        coords = np.stack([np.broadcast_to(np.asarray(c).reshape(-1), (rows,)) for c in raw_coords], axis=1)
    constants = {"launch": ctx.launch, "op": ctx.op, "batch": ctx.batch, "site": ctx.site_id(record.site)}
    numbers = {
        "pid_x": pids[:, 0],
        "pid_y": pids[:, 1],
        "pid_z": pids[:, 2],
        "active_lanes": active,
        "bytes": None if active is None else active * itemsize(record.dtype),
        "address_base": base,
    }
    texts = {
        "kind": record.kind.value,
        "argument": record.argument,
        "dtype": record.dtype,
        "attrs": _attrs_text(attrs, ctx) if attrs else None,
    }
    same = {
        "shape": shape,  # ints: an array's shape, or one made of them
        **_loop_lists(record.loops, ctx),
        "address_sites": _graph_sites(record.address_node, ctx),
        "mask_sites": _graph_sites(record.mask_node, ctx),
    }
    affine = ~listed if some_listed else None  # rows with strides (None: all)
    lists = {
        "address_strides": _lanes(strides, len(shape), affine),
        "address_rows": _lanes(offsets, 0 if offsets is None else offsets.shape[1], None),
        "address": _lanes(address, lanes, listed),
        "mask": _lanes(mask, lanes, None if mask is None else partial),
        "values": _lanes(values, lanes, ctx.keep_values if values is not None else None),
        "coords": _lanes(coords, 0 if coords is None else coords.shape[1], None),
    }
    valid = {}
    for name, keep in (("address_strides", affine), ("address", listed),
                       ("mask", None if mask is None else partial),
                       ("values", ctx.keep_values if values is not None else None)):  # fmt: skip
        if keep is not None and lists[name] is not None:
            valid[name] = np.asarray(keep, dtype=bool)
    full = not some_partial  # every row has all its lanes (or none: compute ops)
    uniform = _uniform(numbers, lists, rows, strides if affine is None else None, full, proven is not None,
                       None if each is None else (each, each * itemsize(record.dtype)))
    return Rows(rows, constants, numbers, texts, same, lists, valid, weight, uniform)


def _uniform(numbers: dict, lists: dict, rows: int, strides: np.ndarray | None, full: bool,
             shared: bool, each: tuple[int, int] | None = None) -> dict:
    """The :data:`~.schema.UNIFORM` columns of a record of :data:`UNIFORM_ROWS` rows or more whose
    value is the same on all its ``rows`` (taken out of ``numbers`` and ``lists``): ``strides`` the
    rows' strides when every row has them (None otherwise); ``full``: every row has the same active
    lanes (all of them); ``shared``: the strides are one shared block's, the same on every row;
    ``each``: every row's active lanes and bytes, when ``numbers`` goes without those columns."""
    found: dict = {}
    if rows < UNIFORM_ROWS:  # a few cells per column: cheaper to write than to look for
        return found
    for name in ("pid_y", "pid_z"):
        column = numbers[name]  # one column at a time: a reduction along a strided axis is ~30x slower
        if not (column != column[0]).any():
            found[name] = int(column[0])
            numbers[name] = None
    active = numbers["active_lanes"]
    if each is not None:
        found["active_lanes"], found["bytes"] = each
    elif full or not (active != active[0]).any():
        found["active_lanes"], found["bytes"] = int(active[0]), int(numbers["bytes"][0])
        numbers["active_lanes"] = numbers["bytes"] = None
    if strides is not None and lists["address_strides"] is not None:
        if shared or not (strides != strides[:1]).any():
            found["address_strides"] = strides[0].tolist()
            lists["address_strides"] = None
    return found


def tables(batch: list[Rows], max_bytes: int) -> Iterator[tuple[pa.Table, int]]:
    """Tables of :data:`ROW_SCHEMA` holding the rows of ``batch`` in order, each with its size in bytes
    (about ``max_bytes`` at most, one row at least). A table's records' per-record columns
    (:data:`FOOTER`) are in its schema metadata (:data:`CARRIED_KEY`, JSON by op), not in columns:
    Parquet would encode an item or a null for every row."""
    for table, nbytes, carried in footed_tables(batch, max_bytes):
        metadata = {**ROW_SCHEMA.metadata, CARRIED_KEY.encode(): json.dumps(carried).encode()}
        yield filled(table, ROW_SCHEMA.with_metadata(metadata)), nbytes


def footed_tables(batch: list[Rows], max_bytes: int) -> Iterator[tuple[pa.Table, int, dict[str, list]]]:
    """The tables of :func:`tables`, each with its size and its records' footer entries (by op, as
    :data:`CARRIED_KEY` holds them) beside it instead of in its metadata: a part file's writer joins
    the entries of its tables and encodes them once. A table holds only the columns of
    :data:`ROW_SCHEMA` that some record of ``batch`` has (in its order): the others are null on
    every row, and a part file leaves them out anyway."""
    if not batch:
        return
    weight = batch[0].weight if len(batch) == 1 else np.concatenate([r.weight for r in batch])
    whole = _columns(batch)
    schema = pa.schema([f for f in ROW_SCHEMA if f.name in whole])
    ends = np.cumsum([r.n for r in batch])
    total = int(weight.size)
    for lo, hi in _slices(weight, max_bytes):
        n = hi - lo
        columns = whole if (lo, hi) == (0, total) else {name: c.slice(lo, n) for name, c in whole.items()}
        first, last = np.searchsorted(ends, [lo, hi - 1], side="right")
        carried = {str(r.constants["op"]): _footer(r) for r in batch[first : last + 1]}
        table = pa.Table.from_arrays(list(columns.values()), schema=schema)
        yield table, int(weight[lo:hi].sum()), carried


def filled(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """The columns of ``schema`` from ``table`` (with the schema's metadata), null where it lacks one."""
    names = table.column_names
    if all(name in names for name in schema.names):
        return table.select(schema.names).replace_schema_metadata(schema.metadata)
    n = table.num_rows
    columns = [table.column(f.name) if f.name in names else pa.nulls(n, f.type) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def _footer(rows: Rows) -> list:
    """The :data:`FOOTER` columns of one record's rows, in order, then its uniform ones (an object)."""
    entry = [rows.constants[n] if n in rows.constants else rows.texts[n] if n in rows.texts else rows.same[n]
             for n in FOOTER]  # fmt: skip
    entry.append(rows.uniform)
    return entry


def record_tables(record: OpRecord, ctx: RowContext, max_bytes: int) -> Iterator[tuple[pa.Table, int]]:
    """Tables of :data:`ROW_SCHEMA` holding one record (see :func:`record_rows` and :func:`tables`)."""
    yield from tables([record_rows(record, ctx)], max_bytes)


def _columns(batch: list[Rows]) -> dict[str, pa.Array]:
    """The columns of the joined rows that some record has, as Arrow arrays, in :data:`ROW_SCHEMA` order."""
    columns: dict[str, pa.Array] = {}
    counts = np.array([r.n for r in batch], dtype=np.int64)
    n = int(counts.sum())
    ops = np.repeat([r.constants["op"] for r in batch], counts)
    columns["op"] = arrow.numeric(ops, _TYPES["op"], owned=True)
    for name in _NUMBERS:
        parts = [r.numbers[name] for r in batch]
        ty = _TYPES[name]
        given = [p for p in parts if p is not None]
        if not given:
            continue
        if len(given) < len(parts):  # rows of the records without the column are null
            valid = np.repeat(np.array([p is not None for p in parts]), counts)
            flat = np.zeros(n, dtype=ty.to_pandas_dtype())
            flat[valid] = np.concatenate(given)
            columns[name] = pa.Array.from_buffers(
                ty, n, [arrow.booleans(valid).buffers()[1], arrow.numeric(flat, ty, owned=True).buffers()[1]]
            )
        else:
            fresh = len(parts) > 1  # a concatenation is a fresh array; a record's own column is the engine's
            columns[name] = arrow.numeric(np.concatenate(parts) if fresh else parts[0], ty, owned=fresh)
    for name in _LISTS:
        column = _list_column(name, batch, counts, n)
        if column is not None:
            columns[name] = column
    return columns


def _list_column(name: str, batch: list[Rows], counts: np.ndarray, n: int) -> pa.Array | None:
    """List column ``name`` of the joined rows; None when no record has it."""
    ty = _TYPES[name]
    parts = [r.lists[name] for r in batch]
    items = [p[0] for p in parts if p is not None]
    if not items:
        return None
    valid = None
    if len(items) < len(parts) or any(name in r.valid for r in batch):
        has = np.array([p is not None for p in parts])
        valid = np.repeat(has, counts)
        lengths = np.zeros(n, dtype=np.int64)
        lengths[valid] = np.concatenate([p[1] for p in parts if p is not None])
        ends = np.cumsum(counts)
        for i, r in enumerate(batch):
            if has[i] and name in r.valid:
                valid[ends[i] - r.n : ends[i]] = r.valid[name]
    else:
        lengths = np.concatenate([p[1] for p in parts]) if len(parts) > 1 else parts[0][1]
    flat = np.concatenate(items) if len(items) > 1 else items[0]
    if ty.value_type == pa.bool_():
        values = arrow.booleans(flat)
    else:  # the items are copies (:func:`_lanes`) or a concatenation of them
        values = arrow.numeric(flat, ty.value_type, owned=True)
    return arrow.lists(lengths, values, ty, valid)


def affine_rows(address: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of ``address`` (P, *block): lane 0's address, the byte stride of each block dimension,
    and whether every lane sits at ``base + Σ index_d × stride_d`` (modulo 2^64, as the reader rebuilds it).
    """
    a = address.view(np.int64)
    rows, block = a.shape[0], a.shape[1:]
    lanes = math.prod(block)
    if lanes == 0:
        return np.zeros(rows, np.uint64), np.zeros((rows, len(block)), np.int64), np.zeros(rows, bool)
    base = a[(slice(None),) + (0,) * len(block)]
    strides = np.zeros((rows, len(block)), dtype=np.int64)
    if lanes == 1:  # a scalar access (or a block of one lane): every row is its base
        return base.view(np.uint64), strides, np.ones(rows, dtype=bool)
    for d, size in enumerate(block):
        if size > 1:
            strides[:, d] = a[(slice(None),) + (0,) * d + (1,) + (0,) * (len(block) - d - 1)] - base
    affine = np.ones(rows, dtype=bool)
    uniform = bool((strides == strides[:1]).all())
    axes = tuple(range(1, a.ndim))
    shaped = [(-1,) + (1,) * d + (size,) + (1,) * (len(block) - d - 1) for d, size in enumerate(block)]
    lane_offsets = (
        sum(
            (np.arange(size, dtype=np.int64) * strides[0, d]).reshape(shaped[d][1:])
            for d, size in enumerate(block)
        )
        if uniform
        else None
    )
    step = max(1, CHECK_LANES // lanes)
    for lo in range(0, rows, step):
        hi = min(rows, lo + step)
        rel = a[lo:hi] - base[lo:hi].reshape((-1,) + (1,) * len(block))
        if uniform:
            affine[lo:hi] = (rel == lane_offsets).all(axis=axes)
            continue
        for d, size in enumerate(block):
            rel -= (strides[lo:hi, d, None] * np.arange(size, dtype=np.int64)).reshape(shaped[d])
        affine[lo:hi] = ~rel.any(axis=axes)
    return base.view(np.uint64), strides, affine


def _factored(record: OpRecord, rows: int, ctx: RowContext):
    """(block shape, per-row base, per-row strides, None) of a factored address whose shared block
    is affine."""
    aff = record.address_affine
    if record.address is not None or aff is None:
        return None
    form = _once(ctx, aff.block, lambda: _block_form(aff.block, aff.lanes))
    if form is None:
        return None  # a gather-like block: list the lanes (``addresses()`` materializes them)
    shape, origin, strides = form
    scalar = aff.scalar if aff.scalar.shape == (rows,) else np.broadcast_to(aff.scalar, (rows,))
    per_program = scalar.astype(np.int64) + origin
    return shape, per_program.view(np.uint64), np.repeat(strides, rows, axis=0), None


def _row_form(record: OpRecord, rows: int, ctx: RowContext):
    """(block shape, per-row base, per-row strides, per-row offsets ``(rows, R)``) of an address in
    row form whose per-row numbers vary only on the leading block axes and whose shared block is
    affine and varies on the trailing ones (so every line along the last axis lies in one block row):
    lane ``j`` is at ``base + Σ i_d × stride_d + offsets[j // (lanes / R)]``, R the lanes of the
    leading axes. None for any other form, and when the per-row numbers are one per program (the
    access is then affine or not, lane by lane)."""
    form = record.address_rows
    if form is None or form.rows.ndim != form.block.ndim or math.prod(form.rows.shape[1:]) <= 1:
        return None
    shape = tuple(np.broadcast_shapes(form.rows.shape[1:], form.block.shape[1:]))
    varies = [n > 1 for n in form.block.shape[1:]]
    if shape != tuple(record.shape) or not any(varies):
        return None  # no shared block to factor out: every lane its own row
    k = varies.index(True)
    if any(n > 1 for n in form.rows.shape[1 + k :]):
        return None
    block = _once(ctx, form.block, lambda: _block_form(form.block))
    if block is None:
        return None
    _, origin, strides = block
    starts = np.broadcast_to(form.rows, (form.rows.shape[0], *shape[:k], *form.rows.shape[1 + k :]))
    starts = _rows(starts.reshape(starts.shape[0], -1), rows).astype(np.int64)
    base = (starts[:, 0] + origin).view(np.uint64)
    return shape, base, np.broadcast_to(strides, (rows, strides.shape[1])), starts - starts[:, :1]


def _block_form(
    block: np.ndarray, lanes: tuple | None = None
) -> tuple[tuple[int, ...], int, np.ndarray] | None:
    """(shape, lane 0's offset, strides) of a shared address block (1, *S) that is affine, else None;
    ``lanes``: the block's origin and steps when the engine knew them (``AffineAddress.lanes``)."""
    if lanes is not None and block.size:
        return tuple(block.shape[1:]), int(lanes[0]), np.array([lanes[1]], dtype=np.int64).reshape(1, -1)
    base, strides, affine = affine_rows(np.ascontiguousarray(block).view(np.uint64))
    if not affine[0]:
        return None
    return tuple(block.shape[1:]), int(base.view(np.int64)[0]), strides


def _programs(array: np.ndarray) -> np.ndarray:
    """``array`` with a program axis of 1 when it is a broadcast view (every program the same)."""
    return array[:1] if array.shape[0] > 1 and array.strides[0] == 0 else array


def _rows(array: np.ndarray, rows: int) -> np.ndarray:
    """``array`` with its program axis stretched to ``rows`` (uniform values have an axis of 1)."""
    return np.broadcast_to(array, (rows, *array.shape[1:])) if array.shape[0] != rows else array


def _active(mask: np.ndarray | None, rows: int, lanes: int) -> tuple[np.ndarray | None, np.ndarray]:
    """Enabled lanes per row (None: all ``lanes`` of every row), and which rows have some lane disabled."""
    if mask is None or mask.all():
        return None, np.zeros(rows, dtype=bool)
    mask = _programs(mask)
    active = _rows(np.count_nonzero(mask, axis=tuple(range(1, mask.ndim))).astype(np.int64), rows)
    return active, active < lanes


def _weights(rows: int, lanes: int, listed: np.ndarray | None, partial: np.ndarray | None,
             kept: np.ndarray | None, offsets: int) -> np.ndarray:
    """Arrow bytes of each of a record's ``rows``: :data:`ROW_BYTES`, then per lane 8 for a row that
    lists its addresses (``listed``), 1 for a row with a mask (``partial``) and 8 for a row whose
    values are kept (``kept``), and 8 per row offset. Rows that weigh the same share one number."""
    if listed is None and partial is None and kept is None:
        return np.broadcast_to(np.int64(ROW_BYTES + 8 * offsets), (rows,))
    per_lane = np.zeros(rows, dtype=np.int64)
    for flags, size in ((listed, 8), (partial, 1), (kept, 8)):
        if flags is not None:
            per_lane += size * flags
    return ROW_BYTES + 8 * offsets + lanes * per_lane


def _slices(weight: np.ndarray, max_bytes: int) -> Iterator[tuple[int, int]]:
    """Row ranges ``[lo, hi)`` of at most ``max_bytes`` total weight each (one row at least)."""
    ends = np.cumsum(weight)
    lo = 0
    while lo < len(weight):
        start = ends[lo - 1] if lo else 0
        hi = max(lo + 1, int(np.searchsorted(ends, start + max_bytes, side="right")))
        yield lo, hi
        lo = hi


def _memo(ctx: RowContext, key: object, compute: Callable[[], object]) -> object:
    """``compute()`` (never None), worked out once per ``key`` for the launch."""
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.memo[key] = compute()
    return found


def _once(ctx: RowContext, obj: object, compute: Callable[[], object]) -> object:
    """``compute()``, worked out once per ``obj`` for the launch: the records of one op split by loop
    iteration share its expression graph and address block. Keyed by id, holding ``obj`` so that
    an id is never reused while its entry lives; the objects are never changed once recorded."""
    return _memo(ctx, id(obj), lambda: (obj, compute()))[1]


def _graph_sites(node, ctx: RowContext) -> np.ndarray | None:
    """The ids of the sites of expression graph ``node`` (nearest first; None for no graph)."""
    if node is None:
        return None
    return _once(ctx, node, lambda: _items([ctx.site_id(s) for s in node.sites()]))


def _loop_lists(loops: tuple, ctx: RowContext) -> dict[str, np.ndarray]:
    """``loop_sites`` and ``loop_iterations`` of a record's enclosing ``loops``, worked out once per
    loop nest and iterations for the launch."""
    key = ("loops", *((id(site), i) for site, i in loops))

    def entry() -> tuple:  # holds ``loops``, so that no id in its key is reused while it lives
        return loops, {"loop_sites": _items([ctx.site_id(s) for s, _ in loops]),
                       "loop_iterations": _items([i for _, i in loops])}  # fmt: skip

    return _memo(ctx, key, entry)[1]


_PLAIN = (str, int, float, bool, type(None))


def _attrs_text(attrs: dict, ctx: RowContext) -> str:
    """A record's ``attrs`` as the JSON text of its column (sorted keys); worked out once per launch
    for attrs of plain values (a dot's ``k`` and precision, a reduction's axis)."""
    if not all(type(v) in _PLAIN for v in attrs.values()):
        return json.dumps(attrs, default=str, sort_keys=True)
    key = ("attrs", *((k, type(v), v) for k, v in attrs.items()))  # typed: 1, 1.0 and True differ
    return _memo(ctx, key, lambda: json.dumps(attrs, default=str, sort_keys=True))
