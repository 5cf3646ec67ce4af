"""The tracer client: every committed op of every launch, streamed to a Parquet trace on disk."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from ...ir import ArgumentInfo, LaunchInfo, Need, OpKind, OpRecord, Site
from ..base import Client, Report, check_flags
from . import layout
from .parts import PartWriter
from .rows import RowContext, Rows, footed_tables, record_rows
from .schema import FORMAT, OPS, VERSION, launch_stem

VALUE_MODES = ("off", "sample", "all")


class Tracer(Client):
    """Streams op records to ``trace_dir`` while the kernel runs (format: ``docs/trace-format.md``).

    ``values``: ``"off"`` (addresses and masks only), ``"sample"`` (values of ``sample_programs``
    evenly spaced programs per launch) or ``"all"``. ``append`` adds launches to an existing trace;
    ``force`` replaces one. Only committed attempts reach the trace. Every op kind is traced but
    ``elementwise`` (one record per arithmetic op would dwarf the memory traffic it explains).
    """

    name = "tracer"
    kinds = frozenset(OpKind) - {OpKind.ELEMENTWISE}
    buffered = False
    options = ("trace_dir", "values", "append", "force", "sample_programs")

    def __init__(self, trace_dir: str | os.PathLike = "tilescope-trace", values: str = "off",
                 append: bool = False, force: bool = False, sample_programs: int = 8):
        if values not in VALUE_MODES:
            raise ValueError(f"tracer values must be one of {', '.join(VALUE_MODES)}; got {values!r}")
        check_flags("tracer", append=append, force=force)
        if append and force:
            raise ValueError("tracer options append and force conflict: add to a trace, or replace it")
        if isinstance(sample_programs, bool) or not isinstance(sample_programs, int) or sample_programs < 1:
            raise ValueError(f"tracer option sample_programs must be a positive int; got {sample_programs!r}")
        self.root = layout.prepare(trace_dir, append=append, force=force)
        self.values = values
        self.needs = self.needs_with(values=values)
        self.sample_programs = sample_programs
        self.launches: list[int] = []
        self.rows = 0
        self._launch: _OpenLaunch | None = None

    @classmethod
    def needs_with(cls, **options: Any) -> frozenset[Need]:
        """Tensors registered mid-launch, and values when the tracer records them (``values`` other
        than "off")."""
        values = {Need.VALUES} if options.get("values", "off") != "off" else set()
        return frozenset({Need.ARGUMENT_EVENTS, *values})

    # ------------------------------------------------------------------ hooks

    def on_launch_start(self, launch: LaunchInfo) -> None:
        """Claim a launch number and write the launch file (status ``running``)."""
        number, path = layout.claim_launch(self.root)
        parts = self.root / OPS / launch_stem(number)
        parts.mkdir()
        self._launch = _OpenLaunch(number, path, launch, PartWriter(parts), self._sampled(launch.grid))
        self.launches.append(number)
        self._launch.save(self.values, "running")

    def on_argument(self, argument: ArgumentInfo) -> None:
        """A tensor registered mid-launch (an NKI kernel's output, a tensor behind a loaded pointer)
        joins the launch's arguments."""
        if self._launch is not None:
            self._launch.registered.setdefault((argument.name, argument.address), argument)

    def on_attempt_begin(self, program_ids) -> None:
        """A batch starts: its rows go to temporary files."""
        if self._launch is not None:
            self._launch.begin(np.asarray(program_ids))

    def on_op(self, record: OpRecord) -> None:
        """Convert and queue one record's rows."""
        launch = self._launch
        if launch is None:
            return
        keep = None
        if Need.VALUES in self.needs and record.values is not None:
            keep = launch.keep_values(record.program_ids)
        ctx = RowContext(launch.number, launch.next_op, launch.batch, launch.site_id, keep, launch.memo)
        launch.next_op += 1
        launch.queue(record_rows(record, ctx))

    def on_attempt_commit(self) -> None:
        """The batch is final: its temporary files become parts."""
        if self._launch is not None:
            self._launch.commit()

    def on_attempt_abort(self) -> None:
        """The batch was abandoned: delete what it wrote."""
        if self._launch is not None:
            self._launch.abort()

    def on_launch_end(self, launch: LaunchInfo) -> None:
        """Finish the launch file: ``complete`` when every program committed, else ``incomplete``."""
        current, self._launch = self._launch, None
        if current is None:
            return
        current.writer.close()
        done = current.programs == int(np.prod(launch.grid))
        current.save(self.values, "complete" if done else "incomplete")
        self.rows += current.writer.rows

    def report(self) -> Report:
        """Where the trace is and how much it holds."""
        return Report(self.name, summary={"trace_dir": str(self.root), "launches": list(self.launches),
                                          "rows": self.rows, "values": self.values})

    def _sampled(self, grid: tuple[int, int, int]) -> np.ndarray | None:
        """Linear ids of the programs whose values ``values="sample"`` keeps."""
        if self.values != "sample":
            return None
        total = int(np.prod(grid))
        picks = np.linspace(0, max(total - 1, 0), num=min(self.sample_programs, total))
        return np.unique(picks.astype(np.int64))


class _OpenLaunch:
    """The tracer's state for the launch being written."""

    def __init__(self, number: int, path: Path, info: LaunchInfo, writer: PartWriter, sampled):
        self.number = number
        self.path = path
        self.info = info
        self.writer = writer
        self.sampled = sampled
        self.started = time.time()
        self.sites: dict[Site, int] = {}
        self._site_objects: dict[int, tuple[Site, int]] = {}  # by id: see site_id
        self.memo: dict = {}  # what the rows of this launch's records work out once (RowContext.memo)
        self.registered: dict[tuple[str, int], ArgumentInfo] = {}  # tensors registered mid-launch
        self.batch = 0
        self.next_op = 0
        self.programs = 0
        self._attempt_ops = 0
        self._attempt_sites = 0
        self._pending: list[Rows] = []
        self._pending_bytes = 0
        self._batch_programs = 0

    def site_id(self, site: Site | None) -> int:
        """Id of ``site`` in this launch's site table (-1 for no site). Site objects are interned per
        source position, so a site is looked up by identity first and hashed (its dataclass hash is
        Python code) only the first time this object is met."""
        if site is None:
            return -1
        known = self._site_objects.get(id(site))
        if known is not None:
            return known[1]
        found = self.sites.get(site)
        if found is None:
            found = self.sites[site] = len(self.sites)
        self._site_objects[id(site)] = (site, found)  # holds the site: its id is not reused meanwhile
        return found

    def begin(self, program_ids: np.ndarray) -> None:
        self._batch_programs = len(program_ids)
        self._attempt_ops = self.next_op
        self.writer.begin()

    def keep_values(self, program_ids: np.ndarray) -> np.ndarray:
        """Rows of a record (its programs) whose values are written."""
        if self.sampled is None:
            return np.ones(len(program_ids), dtype=bool)
        gx, gy, _ = self.info.grid
        p = program_ids.astype(np.int64)
        return np.isin(p[:, 0] + gx * (p[:, 1] + gy * p[:, 2]), self.sampled)

    def queue(self, rows: Rows) -> None:
        """Rows of the current attempt; small records are joined into one table before writing."""
        self._pending.append(rows)
        self._pending_bytes += int(rows.weight.sum())
        if self._pending_bytes >= self.writer.row_group_bytes:
            self.flush()

    def flush(self) -> None:
        """Hand the queued rows to the writer, which makes them tables."""
        pending, nbytes = self._pending, self._pending_bytes
        if not pending:
            return
        self._pending, self._pending_bytes = [], 0
        size = self.writer.row_group_bytes
        make = lambda: ((t, c) for t, _, c in footed_tables(pending, size))  # noqa: E731
        self.writer.add(make, sum(r.n for r in pending), nbytes)

    def commit(self) -> None:
        self.flush()
        self.writer.commit()
        self.batch += 1
        self.programs += self._batch_programs

    def abort(self) -> None:
        self._pending, self._pending_bytes = [], 0
        self.writer.abort()
        self.next_op = self._attempt_ops

    def save(self, values: str, status: str) -> None:
        info = self.info
        layout.write_json(self.path, {
            "format": FORMAT, "version": VERSION, "launch": self.number, "status": status,
            "kernel": info.kernel, "file": info.file, "line": info.line, "grid": list(info.grid),
            "values": values, "programs": self.programs, "batches": self.batch, "ops": self.next_op,
            "rows": self.writer.rows, "parts": self.writer.parts,
            "started": _iso(self.started), "finished": _iso(time.time()) if status != "running" else None,
            "process": os.getpid(), "engine_launch_id": info.launch_id,
            "constexprs": {k: _plain(v) for k, v in info.meta.items()},
            "arguments": [_argument(a) for a in (*info.arguments, *self.registered.values())],
            "sites": [_site(s, i) for s, i in self.sites.items()],
        })


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(t))


def _plain(value: Any) -> Any:
    return value if isinstance(value, (bool, int, float, str, type(None))) else repr(value)


def _argument(a) -> dict:
    return {"index": a.index, "name": a.name, "kind": a.kind, "dtype": a.dtype, "shape": list(a.shape),
            "strides": list(a.strides), "address": a.address, "nbytes": a.nbytes, "value": _plain(a.value)}


def _site(site: Site, index: int) -> dict:
    return {"site": index, "file": site.file, "line": site.line, "column": site.column,
            "end_line": site.end_line, "end_column": site.end_column, "function": site.function,
            "source": site.source.strip(), "expression": site.expression}
