"""Running a whole sweep: the cells not yet done, on a backend, each result kept as it ends.

A results folder holds one JSON file per finished cell (``cells/<key>.json``, written the moment
the cell ends), the clients and options they ran under (``sweep.json``) and the merged report
(``report.json``); with ``resume`` the cells already there are not run again, so an interrupted
sweep carries on where it stopped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from .cell import CellResult, Limits, run
from .report import SweepReport
from .spec import Cell, Spec

#: a backend runs cells under limits and yields each result as it ends
Backend = Callable[[list[Cell], Limits], Iterator[CellResult]]


class ResultsError(ValueError):
    """A results folder that holds another run's cells (and neither resume nor fresh was asked)."""


def limits_of(spec: Spec) -> Limits:
    """What every cell of ``spec`` runs under."""
    return Limits(tuple(spec.clients), spec.options, spec.timeout, spec.memory, spec.grace)


def local_backend(workers: int | None = None) -> Backend:
    """Cells on a pool of ``workers`` local processes (default: every core); ``workers=0``: in this
    process, one after another, without isolation (for a debugger; a crashing cell ends the sweep)."""
    if workers == 0:
        return lambda cells, limits: (run(cell, limits) for cell in cells)
    from . import local

    return lambda cells, limits: local.results(cells, limits, workers)


def ray_backend(address: str, retries: int = 2) -> Backend:
    """Cells as Ray tasks on the cluster at ``address``."""
    from . import on_ray

    return lambda cells, limits: on_ray.results(cells, limits, address, retries)


def sweep(spec: Spec, results: str | os.PathLike, backend: Backend | None = None, *, resume: bool = False,
          fresh: bool = False, progress: Callable[[CellResult], None] | None = None,
          started: Callable[[int, int], None] | None = None) -> SweepReport:
    """Run every cell of ``spec`` not already in ``results`` (with ``resume``) and return the merged
    report, which is also written to ``results/report.json``.

    ``fresh`` removes earlier cell files first; without either, a folder that holds cell files is
    an error. ``started(done, total)`` is called once before the first cell runs, ``progress(result)``
    as each cell ends.
    """
    folder = Path(results) / "cells"
    cells = spec.cells()
    existing = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if existing and fresh:
        for path in existing:
            path.unlink()
        existing = []
    if existing and not resume:
        raise ResultsError(f"{results} already holds {len(existing)} cell result(s); --resume to run only "
                           "the cells not done, --fresh to start over")
    limits = limits_of(spec)
    _same_clients(Path(results) / "sweep.json", limits, resume and bool(existing))
    folder.mkdir(parents=True, exist_ok=True)
    done = _load(existing, {c.key for c in cells}) if resume else {}
    todo = [c for c in cells if c.key not in done]
    if started is not None:
        started(len(cells) - len(todo), len(cells))
    for result in (backend or local_backend())(todo, limits) if todo else ():
        path = folder / f"{result.cell.key}.json"
        partial = path.with_suffix(".partial")  # a sweep killed mid-write leaves no half cell file
        partial.write_text(json.dumps(result.to_dict(), default=str), encoding="utf-8")
        os.replace(partial, path)
        done[result.cell.key] = result
        if progress is not None:
            progress(result)
    report = SweepReport.build(spec.name, [done[c.key] for c in cells])
    report.save(Path(results) / "report.json")
    return report


def _same_clients(path: Path, limits: Limits, resuming: bool) -> None:
    """Record the clients and options cells run under; refuse to resume cells made under others (their
    reports would not merge into what the spec asks for)."""
    made = {"clients": list(limits.clients), "options": limits.options}
    if resuming and path.is_file():
        earlier = json.loads(path.read_text(encoding="utf-8"))
        if earlier != json.loads(json.dumps(made)):
            raise ResultsError(f"{path.parent} holds cells run with clients {earlier['clients']} and "
                               f"options {earlier['options']}, not {made['clients']} and {made['options']}; "
                               "--fresh to start over")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(made), encoding="utf-8")


def _load(paths: list[Path], wanted: set[str]) -> dict[str, CellResult]:
    """The results in ``paths`` of cells the spec still has (a cell the spec dropped is ignored)."""
    found = {}
    for path in paths:
        result = CellResult.from_dict(json.loads(path.read_text(encoding="utf-8")))
        if result.cell.key in wanted:
            found[result.cell.key] = result
    return found
