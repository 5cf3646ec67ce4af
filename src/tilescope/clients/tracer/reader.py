"""Reading a trace back: ``tilescope.load_trace(path)`` -> launches, sites, arguments and ops tables."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .layout import TraceError, check_manifest, read_json
from .schema import LAUNCHES, MANIFEST, OPS, OPS_SCHEMA, PART_SUFFIX, launch_stem

_LAUNCH_COLUMNS = ["launch", "kernel", "file", "line", "grid", "status", "programs", "batches", "ops", "rows",
                   "values", "started", "finished", "process"]


@dataclass
class Trace:
    """A trace on disk, its small tables loaded (pandas) and its ops table read on demand.

    ``launches``, ``sites`` and ``arguments`` are DataFrames; :meth:`table` reads the ops as a
    pyarrow Table (optionally only some columns and launches) and :attr:`ops` as a DataFrame.
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
        tables = [_read_part(p, columns) for files in wanted.values() for p in files]
        if not tables:
            schema = OPS_SCHEMA if columns is None else pa.schema([OPS_SCHEMA.field(c) for c in columns])
            return schema.empty_table()
        return pa.concat_tables(tables)

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
            _check_part(part)
        parts[number] = files
    return Trace(root, version, pd.DataFrame(launch_rows, columns=_LAUNCH_COLUMNS), pd.DataFrame(site_rows),
                 pd.DataFrame(argument_rows), parts)


def _check_part(part: Path) -> None:
    try:
        schema = pq.read_schema(part)
    except (OSError, pa.ArrowException) as exc:
        raise TraceError(f"corrupt or truncated trace file {part}: {exc}") from None
    if not schema.equals(OPS_SCHEMA, check_metadata=False):
        raise TraceError(f"trace file {part} does not have the ops schema of this trace version")


def _read_part(part: Path, columns: list[str] | None) -> pa.Table:
    try:
        return pq.read_table(part, columns=columns, schema=OPS_SCHEMA)
    except (OSError, pa.ArrowException) as exc:
        raise TraceError(f"corrupt or truncated trace file {part}: {exc}") from None
