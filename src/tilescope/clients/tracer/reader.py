"""Reading a trace back: ``tilescope.load_trace(path)`` -> launches, sites, arguments and ops tables."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .layout import TraceError, check_manifest, read_json
from .schema import (
    CARRIED,
    CARRIED_KEY,
    FOOTER,
    LAUNCHES,
    MANIFEST,
    OPS,
    OPS_SCHEMA,
    PART_SUFFIX,
    UNIFORM,
    fits,
    launch_stem,
)

_AFFINE_COLUMNS = ["shape", "address_base", "address_strides", "address_rows"]
_EXPAND_ROWS = 1024  # rows expanded at a time: keeps a list column's int32 offsets far from overflow
_LAUNCH_COLUMNS = ["launch", "kernel", "file", "line", "grid", "status", "programs", "batches", "ops", "rows",
                   "values", "started", "finished", "process"]


@dataclass
class Trace:
    """A trace on disk, its small tables loaded (pandas) and its ops table read on demand.

    ``launches``, ``sites`` and ``arguments`` are DataFrames; :meth:`table` reads the ops as a
    pyarrow Table (optionally only some columns and launches) and :attr:`ops` as a DataFrame. Both
    list every lane's address in ``address``, including rows stored as a base and strides (and row
    offsets); both have the columns of the current version, a trace of an older one read with nulls
    in the columns it lacks.
    """

    path: Path
    version: int
    launches: pd.DataFrame
    sites: pd.DataFrame
    arguments: pd.DataFrame
    parts: dict[int, list[Path]]

    def table(self, columns: list[str] | None = None, launches: list[int] | None = None) -> pa.Table:
        """The ops table (or ``columns`` of it) as pyarrow, for all launches or the given ones."""
        wanted = self.parts if launches is None else {n: self.parts[n] for n in launches if n in self.parts}
        read = columns
        if columns is not None and "address" in columns:
            read = list(dict.fromkeys([*columns, *_AFFINE_COLUMNS]))
        expand = read is None or "address" in read
        tables = [read_part(p, read) for files in wanted.values() for p in files]
        if not tables:
            schema = OPS_SCHEMA if columns is None else pa.schema([OPS_SCHEMA.field(c) for c in columns])
            return schema.empty_table()
        table = pa.concat_tables(tables)
        if expand:
            table = expand_addresses(table)
        return table if read == columns else table.select(columns)

    @property
    def ops(self) -> pd.DataFrame:
        """Every op row of every launch as a DataFrame (list columns hold NumPy arrays)."""
        return self.table().to_pandas()


def load_trace(path: str | os.PathLike) -> Trace:
    """Open the trace in directory ``path``; a missing, corrupt or truncated file is an error naming it."""
    root = Path(path)
    manifest = root / MANIFEST
    if not root.is_dir():
        raise TraceError(f"no trace at {root}: not a directory")
    if not manifest.is_file():
        raise TraceError(f"{root} is not a tilescope trace: {MANIFEST} is missing")
    version = check_manifest(manifest)["version"]
    launch_rows, site_rows, argument_rows = [], [], []
    parts: dict[int, list[Path]] = {}
    for file in sorted((root / LAUNCHES).glob("launch-*.json")):
        if file.stat().st_size == 0:
            continue  # claimed by a process that had not written it yet
        data = read_json(file)
        try:
            number = int(data["launch"])
            launch_rows.append({k: data[k] for k in _LAUNCH_COLUMNS})
        except (KeyError, TypeError, ValueError) as exc:
            raise TraceError(f"corrupt trace file {file}: missing field {exc}") from None
        site_rows += [{"launch": number, **s} for s in data.get("sites", [])]
        argument_rows += [{"launch": number, **a} for a in data.get("arguments", [])]
        files = sorted((root / OPS / launch_stem(number)).glob(f"part-*{PART_SUFFIX}"))
        if len(files) != data.get("parts", len(files)):
            raise TraceError(f"trace {root}, launch {number}: {data.get('parts')} part files expected in "
                             f"{root / OPS / launch_stem(number)}, found {len(files)}")
        for part in files:
            _check_part(part, version)
        parts[number] = files
    return Trace(root, version, pd.DataFrame(launch_rows, columns=_LAUNCH_COLUMNS), pd.DataFrame(site_rows),
                 pd.DataFrame(argument_rows), parts)


def expand_addresses(table: pa.Table) -> pa.Table:
    """``table`` with ``address`` listing every lane also of the rows stored as a base and strides
    (plus row offsets: lane ``j`` of ``R`` row offsets adds offset ``j // (lanes / R)``); every row
    of ``table`` holds its ``shape`` (parts read with :func:`fill_carried`)."""
    batches = table.select(["address", *_AFFINE_COLUMNS]).to_batches(max_chunksize=_EXPAND_ROWS)
    chunks = [_expand_batch(batch) for batch in batches]
    column = pa.chunked_array(chunks, type=OPS_SCHEMA.field("address").type)
    return table.set_column(table.schema.get_field_index("address"), "address", column)


def _expand_batch(batch: pa.RecordBatch) -> pa.Array:
    address, shape, base, strides, row_offsets = batch.columns
    if strides.null_count == len(strides):
        return address
    pieces = [np.asarray(a.values, dtype=np.uint64) if a.is_valid else None for a in address]
    offsets_of = row_offsets.to_pylist()
    groups: dict[tuple, list[int]] = {}
    for row, (dims, steps) in enumerate(zip(shape.to_pylist(), strides.to_pylist(), strict=True)):
        if steps is not None:
            groups.setdefault((tuple(dims), tuple(steps)), []).append(row)
    bases = pc.fill_null(base, 0).to_numpy()
    for (dims, steps), rows in groups.items():
        relative = np.zeros(dims, dtype=np.uint64)
        for d, size in enumerate(dims):  # uint64 arithmetic wraps as the writer's check did
            step = np.uint64(steps[d] % 2**64)
            relative += (np.arange(size, dtype=np.uint64) * step).reshape((-1,) + (1,) * (len(dims) - d - 1))
        lanes = bases[rows][:, None] + relative.reshape(1, -1)
        for row, lane in zip(rows, lanes, strict=True):
            if offsets_of[row]:  # uint64 wraps: an offset below zero is added as its two's complement
                rows_of = np.asarray(offsets_of[row], dtype=np.int64).view(np.uint64)
                lane = lane + np.repeat(rows_of, lane.size // rows_of.size)
            pieces[row] = lane
    valid = np.array([p is not None for p in pieces], dtype=bool)
    offsets = np.zeros(len(pieces) + 1, dtype=np.int32)
    np.cumsum([0 if p is None else len(p) for p in pieces], out=offsets[1:])
    flat = np.concatenate([p for p in pieces if p is not None] or [np.zeros(0, np.uint64)])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat), type=OPS_SCHEMA.field("address").type,
                                    mask=pa.array(~valid))


def _check_part(part: Path, version: int) -> None:
    try:
        schema = pq.read_schema(part)
    except (OSError, pa.ArrowException) as exc:
        raise TraceError(f"corrupt or truncated trace file {part}: {exc}") from None
    if not fits(schema, version):
        raise TraceError(f"trace file {part} does not have the ops schema of trace version {version}")


def fill_carried(table: pa.Table, carried: bytes | str | None = None) -> pa.Table:
    """``table`` (the rows of one part file, with ``op``) with every row holding its record's
    :data:`CARRIED` lists. Version 6 keeps them, and the other per-record columns (:data:`FOOTER`),
    in the part's footer: ``carried`` (its :data:`CARRIED_KEY` entry), by default the table's own
    metadata (a table the tracer builds); the table gains the footer columns it lacks. Versions 4
    and 5 write the lists on a record's first row only: the first row of each run of one ``op``
    gives its list to the run; a table of an older version, whose rows each hold their list, comes
    back the same."""
    if carried is None and table.schema.metadata:
        carried = table.schema.metadata.get(CARRIED_KEY.encode())
    if carried is not None:
        return _footer_columns(table, json.loads(carried))
    present = [c for c in CARRIED if c in table.column_names]
    n = table.num_rows
    if not present or n == 0:
        return table
    op = table.column("op").to_numpy()
    starts = np.flatnonzero(np.concatenate([[True], op[1:] != op[:-1]]))
    source = pa.array(np.repeat(starts, np.diff(np.append(starts, n))))
    for name in present:
        table = table.set_column(table.schema.get_field_index(name), name, table.column(name).take(source))
    return table


def _footer_columns(table: pa.Table, entries: dict[str, list]) -> pa.Table:
    """``table`` with the :data:`FOOTER` columns built from a version 6 or 7 footer's ``entries`` (by
    op): those of its columns, or all of them when it has none; columns in the ops schema's order.
    A version 7 entry's last item names the record's :data:`UNIFORM` columns and their values: its
    rows take them (the table's column, null when the part leaves it out, gives the other rows
    theirs); of those columns, the table's own are filled, or all of them with the :data:`FOOTER` ones."""
    raw = not any(c in table.column_names for c in FOOTER)
    present = list(FOOTER) if raw else [c for c in FOOTER if c in table.column_names]
    ops = np.array([int(k) for k in entries], dtype=np.int64)
    order = np.argsort(ops, kind="stable")
    rows = table.column("op").to_numpy() if table.num_rows else np.zeros(0, np.int64)
    where = pa.array(order[np.searchsorted(ops[order], rows)] if len(ops) else np.zeros(0, np.int64))
    lists = list(entries.values())
    filled = {}
    for name in present:
        j = FOOTER.index(name)
        filled[name] = pa.array([e[j] for e in lists], OPS_SCHEMA.field(name).type).take(where)
    uniform = [e[len(FOOTER)] if len(e) > len(FOOTER) else {} for e in lists]
    for name in UNIFORM:
        if not (raw or name in table.column_names) or not any(name in u for u in uniform):
            continue
        ty = OPS_SCHEMA.field(name).type
        held = pa.array([name in u for u in uniform], pa.bool_()).take(where)
        given = pa.array([u.get(name) for u in uniform], ty).take(where)
        own = table.column(name) if name in table.column_names else pa.nulls(table.num_rows, ty)
        filled[name] = pc.if_else(held, given, own.cast(ty))
    names = [f.name for f in OPS_SCHEMA if f.name in filled or f.name in table.column_names]
    names += [c for c in table.column_names if c not in names]
    columns = [filled[c] if c in filled else table.column(c) for c in names]
    fields = [OPS_SCHEMA.field(c) if c in filled else table.schema.field(c) for c in names]
    return pa.Table.from_arrays(columns, schema=pa.schema(fields, metadata=OPS_SCHEMA.metadata))


def read_part(part: Path, columns: list[str] | None = None) -> pa.Table:
    """The ``columns`` (default: all) of one part file, with the current schema: columns an older
    version lacks, and those a part leaves out (null on all its rows), are null; the :data:`CARRIED`
    lists, and the other columns a footer holds, are on every row (:func:`fill_carried`)."""
    carried = columns is None or any(c in FOOTER or c in UNIFORM for c in columns)
    read = columns if not carried or columns is None or "op" in columns else [*columns, "op"]
    try:
        table = pq.read_table(part, columns=read, schema=OPS_SCHEMA)
        if carried:
            table = fill_carried(table, footer_carried(part))
    except (OSError, pa.ArrowException) as exc:
        raise TraceError(f"corrupt or truncated trace file {part}: {exc}") from None
    return table if read == columns else table.select(columns)


def footer_carried(part: Path) -> bytes | None:
    """The :data:`CARRIED_KEY` entry of a part file's footer (version 6 on; None for older versions):
    the :data:`FOOTER` columns of its records (and, from version 7, their :data:`UNIFORM` ones)."""
    return (pq.read_metadata(part).metadata or {}).get(CARRIED_KEY.encode())
