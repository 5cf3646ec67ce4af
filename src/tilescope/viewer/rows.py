"""One launch's op rows as NumPy columns, and their lanes as byte offsets into a tensor argument.

Reads the Parquet part files directly, only the columns the viewer uses and only those a part
has, so a trace whose ops table gained columns still reads (and one of format 2, which lacks
``address_rows``). Rows stored as a base address and strides (the affine form), with or without
one offset per block row (the row form of format 3: a gather's rows), are taken group by group
(one block shape and stride vector at a time) as lines along their innermost dimension (first
lane, step, per-lane mask), so a caller can map a whole line at once; rows that list their lanes
are taken as they are; nothing is expanded lane by lane in Python.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..clients.tracer import TraceError
from ..clients.tracer.reader import fill_carried
from ..clients.tracer.schema import CARRIED_KEY, FOOTER, OPS_SCHEMA, UNIFORM

#: op kinds whose rows carry addresses, and which of them read and write memory
MEMORY_KINDS = frozenset({"load", "store", "atomic", "descriptor_load", "descriptor_store", "transfer"})
WRITE_KINDS = frozenset({"store", "descriptor_store", "atomic"})
READ_KINDS = frozenset({"load", "descriptor_load", "atomic", "transfer"})

_COLUMNS = [
    "op",
    "kind",
    "site",
    "pid_x",
    "pid_y",
    "pid_z",
    "argument",
    "dtype",
    "shape",
    "loop_sites",
    "loop_iterations",
    "active_lanes",
    "bytes",
    "address_base",
    "address_strides",
    "address_rows",
    "address",
    "mask",
    "attrs",
]
_REQUIRED = {"op", "kind", "site", "pid_x", "pid_y", "pid_z", "shape", "active_lanes", "bytes"}


@dataclass
class Rows:
    """The op rows of one launch, in trace order (NumPy columns plus the list columns in Arrow)."""

    op: np.ndarray  # int64
    kind: np.ndarray  # int32 code into ``kinds``
    kinds: list[str]
    writes: np.ndarray  # bool: the row writes memory (a store kind, or a transfer whose attrs say so)
    site: np.ndarray  # int32
    program: np.ndarray  # int64 linear program id (x fastest)
    argument: np.ndarray  # int32 code into ``arguments`` (-1: none)
    arguments: list[str]
    dtype: np.ndarray  # int32 code into ``dtypes``
    dtypes: list[str]
    shape: np.ndarray  # int64 (n, rank) padded with -1
    lanes: np.ndarray  # int64 lanes of the block
    active: np.ndarray  # int64 enabled lanes
    nbytes: np.ndarray  # int64
    loop_sites: np.ndarray  # int32 (n, depth) padded with -1
    loop_iterations: np.ndarray  # int32 (n, depth) padded with -1
    table: pa.Table  # address and mask columns: address_base, address_strides, address_rows, address, mask
    part: np.ndarray  # int32 part file of each row
    part_row: np.ndarray  # int64 row within its part file
    parts: list[Path]

    def __len__(self) -> int:
        return len(self.op)


def read_rows(parts: list[Path], grid: tuple[int, int, int]) -> Rows:
    """The rows of one launch from its part files (``grid`` numbers the programs)."""
    tables, part_index, part_row = [], [], []
    for i, part in enumerate(parts):
        table = _read(part)
        tables.append(table)
        part_index.append(np.full(table.num_rows, i, dtype=np.int32))
        part_row.append(np.arange(table.num_rows, dtype=np.int64))
    if tables:
        names = set.intersection(*(set(t.column_names) for t in tables))
        table = pa.concat_tables(
            [t.select([c for c in _COLUMNS if c in names]) for t in tables], promote_options="permissive"
        )
    else:
        table = pa.table({c: pa.array([], pa.int64()) for c in _REQUIRED})
    n = table.num_rows
    gx, gy, _ = grid
    x, y, z = (_ints(table, c, n) for c in ("pid_x", "pid_y", "pid_z"))
    kind, kinds = _codes(table, "kind", n)
    argument, arguments = _codes(table, "argument", n)
    dtype, dtypes = _codes(table, "dtype", n)
    shape = padded(table.column("shape"), fill=-1) if n else np.zeros((0, 0), np.int64)
    lanes = np.where(shape >= 0, shape, 1).prod(axis=1) if n else np.zeros(0, np.int64)
    loops = [
        padded(table.column(c), fill=-1).astype(np.int32)
        if c in table.column_names and n
        else np.zeros((n, 0), np.int32)
        for c in ("loop_sites", "loop_iterations")
    ]
    kept = [c for c in ("address_base", "address_strides", "address_rows", "address", "mask")
            if c in table.column_names]  # fmt: skip
    return Rows(
        op=_ints(table, "op", n),
        kind=kind,
        kinds=kinds,
        writes=_writes(table, kind, kinds, n),
        site=_ints(table, "site", n).astype(np.int32),
        program=x + gx * (y + gy * z),
        argument=argument,
        arguments=arguments,
        dtype=dtype,
        dtypes=dtypes,
        shape=shape,
        lanes=lanes.astype(np.int64),
        active=_ints(table, "active_lanes", n),
        nbytes=_ints(table, "bytes", n),
        loop_sites=loops[0],
        loop_iterations=loops[1],
        table=table.select(kept),
        part=np.concatenate(part_index) if part_index else np.zeros(0, np.int32),
        part_row=np.concatenate(part_row) if part_row else np.zeros(0, np.int64),
        parts=list(parts),
    )


def _read(part: Path) -> pa.Table:
    try:
        footer = pq.read_metadata(part)
        carried = (footer.metadata or {}).get(CARRIED_KEY.encode())
        names = set(footer.schema.to_arrow_schema().names)
        missing = _REQUIRED - names - (set(FOOTER) | set(UNIFORM) if carried is not None else set())
        if missing:
            raise TraceError(f"trace file {part} lacks the column(s) {', '.join(sorted(missing))}")
        table = pq.read_table(part, columns=[c for c in _COLUMNS if c in names])
    except (OSError, pa.ArrowException) as exc:
        raise TraceError(f"corrupt or truncated trace file {part}: {exc}") from None
    for name in _COLUMNS:  # a part of trace format 5 leaves out the columns null on all its rows
        if name not in names and name in OPS_SCHEMA.names:
            field = OPS_SCHEMA.field(name)
            table = table.append_column(field, pa.nulls(table.num_rows, field.type))
    return fill_carried(table, carried)


def _ints(table: pa.Table, name: str, n: int) -> np.ndarray:
    if name not in table.column_names:
        return np.zeros(n, dtype=np.int64)
    return pc.fill_null(table.column(name), 0).to_numpy().astype(np.int64)


def _writes(table: pa.Table, kind: np.ndarray, kinds: list[str], n: int) -> np.ndarray:
    """Per row, whether it writes: its kind is a store's, or (a transfer: an NKI DMA, either way)
    its ``attrs`` say ``"writes": true``."""
    by_kind = np.array([k in WRITE_KINDS for k in kinds] + [False], dtype=bool)[kind]
    if "transfer" not in kinds or "attrs" not in table.column_names:
        return by_kind
    attrs, texts = _codes(table, "attrs", n)
    said = np.array([_says_writes(t) for t in texts] + [False], dtype=bool)
    return by_kind | ((kind == kinds.index("transfer")) & said[attrs])


def _says_writes(attrs: str) -> bool:
    try:
        found = json.loads(attrs)
    except ValueError:
        return False
    return isinstance(found, dict) and found.get("writes") is True


def _codes(table: pa.Table, name: str, n: int) -> tuple[np.ndarray, list[str]]:
    if name not in table.column_names or n == 0:
        return np.full(n, -1, dtype=np.int32), []
    column = table.column(name)
    if pa.types.is_dictionary(column.type):
        column = column.cast(pa.string())
    encoded = pc.dictionary_encode(column).combine_chunks()
    codes = pc.fill_null(encoded.indices, -1).to_numpy().astype(np.int32)
    return codes, [str(v) for v in encoded.dictionary.to_pylist()]


def padded(column: pa.ChunkedArray | pa.Array, fill: int) -> np.ndarray:
    """A list column as an int64 matrix, one row per list, padded with ``fill`` (null: all ``fill``)."""
    lengths = pc.fill_null(pc.list_value_length(column), 0).to_numpy().astype(np.int64)
    width = int(lengths.max()) if len(lengths) else 0
    out = np.full((len(lengths), width), fill, dtype=np.int64)
    if width:
        flat = pc.list_flatten(column).to_numpy(zero_copy_only=False)
        out[np.arange(out.shape[1])[None, :] < lengths[:, None]] = flat
    return out


@dataclass
class Lanes:
    """Lanes of some rows on one tensor: which row, byte offset from element 0, enabled or not."""

    row: np.ndarray  # int64 index into Rows
    delta: np.ndarray  # int64 byte offset from the tensor's address (wrapping as uint64 would)
    enabled: np.ndarray  # bool


@dataclass
class Lines:
    """Lanes of some rows on one tensor as lines: each line's ``length`` lanes lie ``step`` bytes
    apart from its first (an affine row's innermost dimension; a listed row's lanes are lines of one)."""

    row: np.ndarray  # int64 index into Rows, per line
    delta: np.ndarray  # int64 byte offset of each line's first lane from the tensor's address
    enabled: np.ndarray  # bool (lines, length)
    step: int  # bytes from one lane of a line to the next

    @property
    def length(self) -> int:
        """Lanes per line."""
        return int(self.enabled.shape[1])

    def lanes(self, which: np.ndarray | None = None) -> Lanes:
        """The lanes of every line (or of the lines ``which``, indices or a boolean mask), line by line."""
        row, delta, enabled = (
            (self.row, self.delta, self.enabled)
            if which is None
            else (self.row[which], self.delta[which], self.enabled[which])
        )
        offsets = np.arange(self.length, dtype=np.int64) * self.step
        return Lanes(
            np.repeat(row, self.length), (delta[:, None] + offsets[None, :]).reshape(-1), enabled.reshape(-1)
        )


def lanes_of(rows: Rows, selected: np.ndarray, address: int, max_lanes: int = 1 << 23) -> Iterator[Lanes]:
    """The lanes of rows ``selected`` (indices), in chunks of at most about ``max_lanes`` lanes."""
    for lines in lines_of(rows, selected, address, max_lanes):
        yield lines.lanes()


def lines_of(rows: Rows, selected: np.ndarray, address: int, max_lanes: int = 1 << 23) -> Iterator[Lines]:
    """The lanes of rows ``selected`` (indices) as :class:`Lines`, in chunks of at most about
    ``max_lanes`` lanes; affine rows first (one block shape and stride vector at a time), then listed."""
    if not len(selected):
        return
    table = rows.table
    strided = (
        pc.is_valid(table.column("address_strides")).to_numpy(zero_copy_only=False)[selected]
        if "address_strides" in table.column_names
        else np.zeros(len(selected), bool)
    )
    affine = selected[strided]
    if len(affine):
        yield from _affine_lines(rows, affine, address, max_lanes)
    listed = selected[~strided]
    if len(listed) and "address" in table.column_names:
        yield from _listed_lines(rows, listed, address, max_lanes)


def affine_span(rows: Rows, selected: np.ndarray, address: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of ``selected``: stored as base and strides (and maybe row offsets), and its lowest
    and highest lane's byte offset from ``address`` (masked-off lanes included), without expanding
    lanes."""
    table = rows.table
    if "address_strides" not in table.column_names or not len(selected):
        empty = np.zeros(len(selected), np.int64)
        return np.zeros(len(selected), bool), empty, empty
    column = table.column("address_strides").take(selected)
    strided = pc.is_valid(column).to_numpy(zero_copy_only=False)
    steps = padded(column, fill=0)
    shape = rows.shape[selected][:, : steps.shape[1]]
    reach = np.where(shape > 0, shape - 1, 0) * steps
    base = pc.fill_null(table.column("address_base").take(selected), 0).to_numpy().astype(np.uint64)
    delta = (base - np.uint64(address % 2**64)).view(np.int64)
    low, high = _row_offset_range(table, selected)
    return (
        strided,
        delta + low + np.where(reach < 0, reach, 0).sum(axis=1),
        delta + high + np.where(reach > 0, reach, 0).sum(axis=1),
    )


def _row_offset_range(table: pa.Table, selected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``selected``: its lowest and highest row offset (0 and 0 without row offsets)."""
    low, high = np.zeros(len(selected), np.int64), np.zeros(len(selected), np.int64)
    if "address_rows" not in table.column_names or not len(selected):
        return low, high
    column = table.column("address_rows").take(selected)
    if column.null_count == len(column):
        return low, high
    offsets = padded(column, fill=0)  # a row's offsets include its own 0, so padding changes neither
    return np.minimum(offsets.min(axis=1), 0), np.maximum(offsets.max(axis=1), 0)


def _affine_lines(rows: Rows, selected: np.ndarray, address: int, max_lanes: int) -> Iterator[Lines]:
    table = rows.table
    strides = padded(table.column("address_strides").take(selected), fill=0)
    shape = rows.shape[selected]
    key = np.concatenate([shape, strides], axis=1)
    groups, inverse = np.unique(key, axis=0, return_inverse=True)
    bases = pc.fill_null(table.column("address_base").take(selected), 0).to_numpy().astype(np.uint64)
    rank = shape.shape[1]
    for g, group_key in enumerate(groups):
        dims = [int(d) for d in group_key[:rank] if d >= 0]
        steps = [int(s) for s in group_key[rank : rank + len(dims)]]
        length, step = (dims[-1], steps[-1]) if dims else (1, 0)
        outer = np.zeros(dims[:-1] or [1], dtype=np.int64)  # first lane of each line, from the row's base
        for d, size in enumerate(dims[:-1]):
            outer = outer + (np.arange(size, dtype=np.int64) * steps[d]).reshape(
                (-1,) + (1,) * (len(dims) - d - 2)
            )
        outer = outer.reshape(-1)
        lanes = len(outer) * length
        members = np.flatnonzero(inverse.reshape(-1) == g)
        per_chunk = max(1, max_lanes // max(1, lanes))
        for start in range(0, len(members), per_chunk):
            chunk = members[start : start + per_chunk]
            row = selected[chunk]
            base = (bases[chunk] - np.uint64(address % 2**64)).view(np.int64)
            delta = base[:, None] + outer[None, :] + _line_offsets(table, row, len(outer))
            enabled = _mask(rows, row, lanes)
            yield Lines(np.repeat(row, len(outer)), delta.reshape(-1), enabled.reshape(-1, length), step)


def _line_offsets(table: pa.Table, row: np.ndarray, lines: int) -> np.ndarray | int:
    """Per row and line (``lines`` per row), the row offset the line's lanes add (format 3's
    ``address_rows``: R offsets per row, each covering ``lines / R`` consecutive lines); 0 for rows
    without row offsets."""
    if "address_rows" not in table.column_names:
        return 0
    column = table.column("address_rows").take(row)
    if column.null_count == len(column):
        return 0
    counts = pc.fill_null(pc.list_value_length(column), 0).to_numpy().astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    flat = pc.list_flatten(column).to_numpy(zero_copy_only=False).astype(np.int64)
    out = np.zeros((len(row), lines), dtype=np.int64)
    for n in np.unique(counts[counts > 0]):  # one block shape per group: mostly a single count
        which = counts == n
        items = flat[starts[which][:, None] + np.arange(n)]
        out[which] = np.repeat(items, lines // n, axis=1)
    return out


def _listed_lines(rows: Rows, selected: np.ndarray, address: int, max_lanes: int) -> Iterator[Lines]:
    table = rows.table
    lengths = rows.lanes[selected]
    bounds = np.cumsum(lengths)
    start = 0
    while start < len(selected):
        stop = int(np.searchsorted(bounds, (bounds[start - 1] if start else 0) + max_lanes, side="right"))
        stop = max(stop, start + 1)
        row = selected[start:stop]
        column = table.column("address").take(row)
        got = pc.fill_null(pc.list_value_length(column), 0).to_numpy().astype(np.int64)
        flat = pc.list_flatten(column).to_numpy(zero_copy_only=False).astype(np.uint64)
        delta = (flat - np.uint64(address % 2**64)).view(np.int64)
        repeated = np.repeat(row, got)
        enabled = np.ones(len(flat), dtype=bool)
        if "mask" in table.column_names:
            enabled = _listed_mask(rows, row, got)
        yield Lines(repeated, delta, enabled[:, None], 0)
        start = stop


def _mask(rows: Rows, row: np.ndarray, lanes: int) -> np.ndarray:
    out = np.ones((len(row), lanes), dtype=bool)
    if "mask" not in rows.table.column_names:
        return out
    column = rows.table.column("mask").take(row)
    valid = pc.is_valid(column).to_numpy(zero_copy_only=False)
    if valid.any():
        flat = pc.list_flatten(column).to_numpy(zero_copy_only=False)
        out[valid] = flat.reshape(-1, lanes)
    return out


def _listed_mask(rows: Rows, row: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    column = rows.table.column("mask").take(row)
    valid = pc.is_valid(column).to_numpy(zero_copy_only=False)
    out = np.ones(int(lengths.sum()), dtype=bool)
    if valid.any():
        flat = pc.list_flatten(column).to_numpy(zero_copy_only=False)
        owner = np.repeat(valid, lengths)
        out[owner] = flat
    return out


def row_values(rows: Rows, selected: np.ndarray) -> list[np.ndarray | None]:
    """The recorded values of rows ``selected`` (None where none were recorded), read from disk."""
    out: list[np.ndarray | None] = [None] * len(selected)
    for part_index in np.unique(rows.part[selected]):
        path = rows.parts[int(part_index)]
        mine = np.flatnonzero(rows.part[selected] == part_index)
        wanted = rows.part_row[selected[mine]]
        try:
            file = pq.ParquetFile(path)
            if "values" not in file.schema_arrow.names:
                continue
            sizes = [file.metadata.row_group(g).num_rows for g in range(file.num_row_groups)]
            starts = np.concatenate([[0], np.cumsum(sizes)])
            groups = sorted(set(np.searchsorted(starts, wanted, side="right") - 1))
            table = file.read_row_groups(groups, columns=["values"])
        except (OSError, pa.ArrowException) as exc:
            raise TraceError(f"corrupt or truncated trace file {path}: {exc}") from None
        first = {g: int(starts[g]) for g in groups}
        offsets = np.cumsum([0] + [sizes[g] for g in groups])
        local = {g: int(offsets[i]) for i, g in enumerate(groups)}
        column = table.column("values")
        for k, w in zip(mine, wanted, strict=True):
            g = int(np.searchsorted(starts, w, side="right") - 1)
            value = column[local[g] + int(w) - first[g]]
            if value.is_valid:
                out[k] = np.asarray(value.values.to_numpy(zero_copy_only=False), dtype=np.float64)
    return out
