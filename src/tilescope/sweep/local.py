"""Local mode: cells spread over a pool of spawned worker processes on this machine (pebble).

Each worker imports the engine once and runs cells one after another. A cell past its time limit is
first interrupted inside the worker (:mod:`.cell`); one that does not stop (stuck in native code) is
killed ``grace`` seconds later and its worker replaced; a worker that dies (a segfault, the kernel's
OOM killer) makes its cell ``crashed`` and is replaced. Neither stops the sweep.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import signal
from collections.abc import Iterator

from pebble import ProcessExpired, ProcessPool

from .cell import CRASHED, TIMEOUT, CellResult, Limits, ended, payload, resolve, run_payload
from .spec import Cell


def default_workers() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def results(cells: list[Cell], limits: Limits, workers: int | None = None) -> Iterator[CellResult]:
    """Run ``cells`` on ``workers`` processes (default: every core); yield each result as it ends."""
    hard = limits.hard_timeout
    cases = sorted({(c.case, c.path) for c in cells})
    pool = ProcessPool(max_workers=workers or default_workers(), initializer=warm, initargs=(cases,),
                       context=multiprocessing.get_context("spawn"))
    try:
        futures = {pool.schedule(run_payload, args=(payload(c, limits),), timeout=hard): c for c in cells}
        for future in concurrent.futures.as_completed(futures):
            yield _result(future, futures[future], hard)
    finally:
        pool.stop()  # every cell has ended, or the caller gave up early: end the workers either way
        pool.join()


def _result(future: concurrent.futures.Future, cell: Cell, hard: float | None) -> CellResult:
    try:
        return CellResult.from_dict(future.result())
    except TimeoutError:
        return ended(cell, TIMEOUT, hard or 0.0, f"killed: still running {hard:g} s after it started "
                                                 "(it did not stop at its time limit)")
    except ProcessExpired as exc:
        return ended(cell, CRASHED, None, f"its worker process died ({death(exc.exitcode)})")


def death(exitcode: int | None) -> str:
    """``killed by SIGSEGV`` or ``exit status 3`` for a process's exit code."""
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit status {exitcode}"


def warm(cases: list[tuple[str, tuple[str, ...]]]) -> None:
    """Import the engine, the Triton frontend and the case functions once per worker, before any cell
    starts its clock (a case that cannot be imported fails its cells when they run)."""
    from .. import tracing  # noqa: F401
    from ..frontends import triton  # noqa: F401

    for case, path in cases:
        with contextlib.suppress(Exception):
            resolve(case, path)
