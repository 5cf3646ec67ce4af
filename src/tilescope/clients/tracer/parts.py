"""Part files of one launch: each attempt writes temporary files that become parts only on commit.

Rows are buffered up to ``row_group_lanes`` lanes and then written as one Parquet row group, and a
file is closed after ``max_row_groups`` groups, so memory stays bounded however long a launch runs.
An aborted attempt's temporary files are deleted; nothing of it ever carries a part's name.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .schema import OPS_SCHEMA, PARQUET_OPTIONS, PART_SUFFIX, TEMP_SUFFIX


class PartWriter:
    """Writes one launch's committed batches to ``directory/part-NNNNNN.parquet``."""

    def __init__(self, directory: Path, row_group_lanes: int = 1 << 18, max_row_groups: int = 64):
        self.directory = directory
        self.row_group_lanes = row_group_lanes
        self.max_row_groups = max_row_groups
        self.parts = 0
        self.rows = 0
        self._attempts = itertools.count()
        self._attempt = -1
        self._temps: list[Path] = []
        self._writer: pq.ParquetWriter | None = None
        self._groups = 0
        self._buffer: list[pa.Table] = []
        self._buffered = 0
        self._attempt_rows = 0

    def begin(self) -> None:
        """Start an attempt (an unfinished one is dropped)."""
        if self._temps or self._buffer:
            self.abort()
        self._attempt = next(self._attempts)

    def add(self, table: pa.Table, lanes: int) -> None:
        """Queue rows of the current attempt; ``lanes`` is their size in lanes (for flushing)."""
        self._buffer.append(table)
        self._buffered += max(lanes, table.num_rows)
        self._attempt_rows += table.num_rows
        if self._buffered >= self.row_group_lanes:
            self._flush()

    def commit(self) -> int:
        """Make the attempt's rows parts of the launch; returns how many rows it wrote."""
        self._flush()
        self._close()
        for temp in self._temps:
            os.replace(temp, self.directory / f"part-{self.parts:06d}{PART_SUFFIX}")
            self.parts += 1
        self._temps = []
        rows, self._attempt_rows = self._attempt_rows, 0
        self.rows += rows
        return rows

    def abort(self) -> None:
        """Drop the attempt: its buffered rows and its temporary files."""
        self._buffer, self._buffered, self._attempt_rows = [], 0, 0
        self._close()
        for temp in self._temps:
            temp.unlink(missing_ok=True)
        self._temps = []

    def _flush(self) -> None:
        if not self._buffer:
            return
        table = pa.concat_tables(self._buffer) if len(self._buffer) > 1 else self._buffer[0]
        self._buffer, self._buffered = [], 0
        if self._writer is None:
            temp = self.directory / f".attempt-{self._attempt:06d}-{len(self._temps):03d}{TEMP_SUFFIX}"
            self._temps.append(temp)
            self._writer = pq.ParquetWriter(temp, OPS_SCHEMA, **PARQUET_OPTIONS)
        self._writer.write_table(table, row_group_size=table.num_rows)
        self._groups += 1
        if self._groups >= self.max_row_groups:
            self._close()

    def _close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
            self._groups = 0
