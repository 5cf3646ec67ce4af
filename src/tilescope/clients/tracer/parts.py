"""Part files of one launch: each attempt writes temporary files that become parts only on commit.

Rows are buffered up to ``row_group_bytes`` bytes of Arrow data and then written as Parquet row
groups (one per table their maker builds), and a file is closed after ``max_row_groups`` groups, so
memory stays bounded however long a launch runs.
An aborted attempt's temporary files are deleted; nothing of it ever carries a part's name.

A launch's first ``inline_bytes`` of rows are encoded and written in the kernel's thread: a small
launch then pays no hand-off to another thread (waking one on a busy machine costs milliseconds,
more than writing its rows). Past that, encoding and writing happen on the process's writer
thread, which also builds the Arrow tables (pyarrow releases the GIL while it encodes, NumPy while
it copies), so the kernel keeps running meanwhile; at most
``queue_depth`` row groups wait for it. ``close`` returns once everything is on disk either way.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .rows import filled
from .schema import CARRIED_KEY, KEPT, PART_SUFFIX, TEMP_SUFFIX, parquet_options, part_schema

#: what a part writer's table maker yields: tables, each with its records' footer entries beside it
Footed = tuple[pa.Table, dict[str, list]]


class PartWriter:
    """Writes one launch's committed batches to ``directory/part-NNNNNN.parquet``."""

    def __init__(self, directory: Path, row_group_bytes: int = 8 << 20, max_row_groups: int = 64,
                 queue_depth: int = 2, inline_bytes: int = 4 << 20):
        self.directory = directory
        self.row_group_bytes = row_group_bytes
        self.max_row_groups = max_row_groups
        self.rows = 0
        self._buffer: list[Callable[[], Iterable[pa.Table]]] = []
        self._buffered = 0
        self._attempt_rows = 0
        self._files = _Files(directory, max_row_groups)
        self._worker = _Worker(queue_depth, inline_bytes)

    @property
    def parts(self) -> int:
        """Part files written so far (after :meth:`close`, all of them)."""
        return self._files.parts

    def begin(self) -> None:
        """Start an attempt (an unfinished one is dropped)."""
        self.abort()

    def add(self, make: Callable[[], Iterable[Footed]], rows: int, nbytes: int) -> None:
        """Queue ``rows`` rows of the current attempt (``nbytes`` of Arrow data): ``make()`` builds
        their tables, each one row group, with each table's records' footer entries beside it
        (:func:`~.rows.footed_tables`), on the thread that writes them (its inputs must not change)."""
        self._buffer.append(make)
        self._buffered += nbytes
        self._attempt_rows += rows
        if self._buffered >= self.row_group_bytes:
            self._flush()

    def commit(self) -> None:
        """Make the attempt's rows parts of the launch."""
        self._flush()
        self._worker.submit(self._files.commit)
        self.rows += self._attempt_rows
        self._attempt_rows = 0

    def abort(self) -> None:
        """Drop the attempt: its buffered rows and its temporary files."""
        self._buffer, self._buffered, self._attempt_rows = [], 0, 0
        self._worker.submit(self._files.abort)

    def close(self) -> None:
        """Drop any unfinished attempt and wait until everything committed is on disk."""
        self.abort()
        self._worker.close()

    def _flush(self) -> None:
        if not self._buffer:
            return
        makers, nbytes, self._buffer, self._buffered = self._buffer, self._buffered, [], 0
        write = self._files.write
        self._worker.submit(lambda: [write(*item) for make in makers for item in make()], nbytes)


class _Files:
    """The file side of a :class:`PartWriter`; only its worker thread calls these."""

    def __init__(self, directory: Path, max_row_groups: int):
        self.directory = directory
        self.max_row_groups = max_row_groups
        self.parts = 0
        self._attempts = 0
        self._temps: list[Path] = []
        self._writer: pq.ParquetWriter | None = None
        self._columns: set[str] = set()
        self._groups = 0
        self._carried: dict[str, list] = {}

    def write(self, table: pa.Table, carried: dict[str, list]) -> None:
        """Write ``table`` (some columns of the row schema, ``op`` and ``pid_x`` among them; the others
        are null) as a row group: the file holds only the columns that are not null on every row of
        it, and a table with a column the open file lacks starts a new file; its records' footer
        entries ``carried`` go in the file's footer."""
        present = KEPT | {c for c, a in zip(table.column_names, table.columns, strict=True)
                          if a.null_count < len(a)}  # fmt: skip
        if self._writer is not None and not present <= self._columns:
            self._close()
        if self._writer is None:
            temp = self.directory / f".attempt-{self._attempts:06d}-{len(self._temps):03d}{TEMP_SUFFIX}"
            self._temps.append(temp)
            self._columns = present
            self._writer = pq.ParquetWriter(temp, part_schema(present), **parquet_options(present))
        self._writer.write_table(filled(table, self._writer.schema), row_group_size=table.num_rows)
        self._carried.update(carried)
        self._groups += 1
        if self._groups >= self.max_row_groups:
            self._close()

    def commit(self) -> None:
        self._close()
        for temp in self._temps:
            os.replace(temp, self.directory / f"part-{self.parts:06d}{PART_SUFFIX}")
            self.parts += 1
        self._temps = []
        self._attempts += 1

    def abort(self) -> None:
        self._close()
        for temp in self._temps:
            temp.unlink(missing_ok=True)
        self._temps = []
        self._attempts += 1

    def _close(self) -> None:
        """Finish the open file. The writer is let go first: a close that fails or is interrupted
        (Ctrl-C lands here too when the job runs in the kernel's thread) leaves no half-closed writer
        for the next job to touch; the attempt's abort then deletes the unfinished file."""
        writer, carried = self._writer, self._carried
        self._writer, self._groups, self._carried = None, 0, {}
        if writer is not None:
            try:
                writer.add_key_value_metadata({CARRIED_KEY: json.dumps(carried)})
            finally:
                writer.close()


class _Worker:
    """Runs one writer's jobs in order: in the caller's thread until ``inline_bytes`` of rows have
    been handed over, then on the shared writer thread. A job run in the caller's thread raises
    there at once (a KeyboardInterrupt included); the first error of a job on the writer thread
    re-raises on a later submit or on close."""

    def __init__(self, depth: int, inline_bytes: int):
        self._depth = depth
        self._inline = inline_bytes
        self._handed = 0
        self._thread: _WriterThread | None = None
        self._error: BaseException | None = None

    def submit(self, job: Callable[[], None], nbytes: int = 0) -> None:
        self._raise()
        self._handed += nbytes
        if self._thread is None and self._handed > self._inline:
            self._thread = _WriterThread.shared(self._depth)
        if self._thread is None:
            job()
        else:
            self._thread.put(lambda: self._run(job))

    def close(self) -> None:
        if self._thread is not None:
            done = threading.Event()
            self._thread.put(done.set)
            done.wait()
        self._raise()

    def _run(self, job: Callable[[], None]) -> None:
        if self._error is None:
            try:
                job()
            except BaseException as exc:  # re-raised in the kernel's thread
                self._error = exc

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error


class _WriterThread:
    """The process's one background writer thread (started at first need, again after a fork)."""

    _current: _WriterThread | None = None
    _lock = threading.Lock()

    def __init__(self, depth: int):
        self._jobs: queue.Queue[Callable[[], None]] = queue.Queue(maxsize=depth)
        self._pid = os.getpid()
        self._thread = threading.Thread(target=self._loop, name="tilescope-tracer", daemon=True)
        self._thread.start()

    @classmethod
    def shared(cls, depth: int) -> _WriterThread:
        """The running writer thread, started if there is none in this process."""
        with cls._lock:
            current = cls._current
            if current is None or current._pid != os.getpid() or not current._thread.is_alive():
                current = cls._current = cls(depth)
            return current

    def put(self, job: Callable[[], None]) -> None:
        """Queue ``job`` (it must not raise); blocks while ``depth`` jobs wait."""
        self._jobs.put(job)

    def _loop(self) -> None:
        while True:
            self._jobs.get()()
