"""Local mode: cells spread over a pool of spawned worker processes on this machine (pebble).

Each worker imports the engine once and runs cells one after another. A cell past its time limit is
first interrupted inside the worker (:mod:`.cell`); one that does not stop (stuck in native code)
has its worker ended ``grace`` seconds later by a watchdog whose clock started with the cell (not
with the worker's start-up), and the worker is replaced; a worker that dies (a segfault, the kernel's
OOM killer) makes its cell ``crashed`` and is replaced. Neither stops the sweep. A worker is one
core's job: its numerical libraries (OpenMP, OpenBLAS, MKL) get one thread each unless the
environment already says otherwise, as Ray does for its tasks; with a thread pool per worker the
workers spin against each other (a sweep on 2 cores took 1.7x as long).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import signal
from collections.abc import Iterator

from pebble import ProcessExpired, ProcessPool

from .cell import CRASHED, FAILED, HUNG_EXIT, TIMEOUT, CellResult, Limits, ended, payload, run_payload, warm
from .spec import Cell

#: environment variables that size numerical libraries' thread pools
_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def default_workers() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def results(cells: list[Cell], limits: Limits, workers: int | None = None) -> Iterator[CellResult]:
    """Run ``cells`` on ``workers`` processes (default: every core); yield each result as it ends."""
    hard = limits.hard_timeout
    cases = sorted({(c.case, c.path) for c in cells})
    with _one_thread_each():  # workers (and their replacements) inherit the environment when spawned
        pool = ProcessPool(max_workers=workers or default_workers(), initializer=warm, initargs=(cases,),
                           context=multiprocessing.get_context("spawn"))
        try:
            futures = {pool.schedule(run_payload, args=(payload(c, limits),)): c for c in cells}
            for future in concurrent.futures.as_completed(futures):
                yield _result(future, futures[future], hard)
        finally:
            pool.stop()  # every cell has ended, or the caller gave up early: end the workers either way
            pool.join()


@contextlib.contextmanager
def _one_thread_each() -> Iterator[None]:
    """Numerical libraries' thread counts of 1 in the environment (where not set) while inside."""
    added = [name for name in _THREADS if name not in os.environ]
    os.environ.update(dict.fromkeys(added, "1"))
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def _result(future: concurrent.futures.Future, cell: Cell, hard: float | None) -> CellResult:
    try:
        return CellResult.from_dict(future.result())
    except ProcessExpired as exc:
        if exc.exitcode == HUNG_EXIT:  # its watchdog ended it (a clock started with the cell)
            return ended(cell, TIMEOUT, hard, f"killed: still running {hard:g} s after it started "
                                              "(it did not stop at its time limit)")
        return ended(cell, CRASHED, None, f"its worker process died ({death(exc.exitcode)})")
    except Exception as exc:  # the worker could not run the cell at all (say, its result did not pickle)
        return ended(cell, FAILED, None, f"its worker could not run it: {type(exc).__name__}: {exc}")


def death(exitcode: int | None) -> str:
    """``killed by SIGSEGV`` or ``exit status 3`` for a process's exit code."""
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit status {exitcode}"
