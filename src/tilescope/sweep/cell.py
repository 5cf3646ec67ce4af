"""Running one cell: import its case function by name, call it with every launch intercepted, and
say how it ended.

The case function is called with the cell's axes as keyword arguments (``shape``, ``dtype``, each
constexpr by name, ``config``); it builds its inputs and launches its kernels as a caller would,
and every launch runs on the engine under the sweep's clients. Raising (a wrong result, a kernel
error) makes the cell ``failed``. The time limit raises :class:`CellTimeout` inside the case
(``timeout``); the memory limit caps how far the process's address space may grow while the cell
runs (``memory``); a case that does not stop ends its worker ``grace`` seconds later. A worker
that dies is ``crashed``: the process that ran it says so (:mod:`.local`, :mod:`.on_ray`).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import resource
import signal
import sys
import sysconfig
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..clients.base import Report, merge_by_client
from .spec import Cell

#: how a cell ended
OK, FAILED, TIMEOUT, MEMORY, CRASHED = "ok", "failed", "timeout", "memory", "crashed"
STATUSES = (OK, FAILED, TIMEOUT, MEMORY, CRASHED)
_OUTPUT_CHARS = 4000  # what a cell printed, kept from its end
#: exit status of a worker process ended because its cell did not stop at its time limit
HUNG_EXIT = 124


class CaseImportError(Exception):
    """A cell's case function could not be imported (the message names it and the import error)."""


class CellTimeout(BaseException):
    """Raised inside a case that ran past its time limit (a BaseException: ``except Exception`` in the
    code under test must not swallow it)."""


@dataclass
class CellResult:
    """How one cell ended: its status, time, what it printed, and its clients' reports."""

    cell: Cell
    status: str
    seconds: float | None  # None: the worker died, nobody timed the cell
    reports: list[Report] = field(default_factory=list)
    message: str = ""
    traceback: str = ""
    output: str = ""

    @property
    def findings(self) -> int:
        """How many findings the cell's reports hold."""
        return sum(len(r.findings) for r in self.reports)

    def to_dict(self) -> dict:
        """JSON-ready dict (the file a results folder keeps per cell)."""
        return {"id": self.cell.id, "key": self.cell.key, "cell": self.cell.to_dict(), "status": self.status,
                "seconds": self.seconds, "message": self.message, "traceback": self.traceback,
                "output": self.output, "reports": [r.to_dict() for r in self.reports]}

    @classmethod
    def from_dict(cls, d: dict) -> CellResult:
        """The result of :meth:`to_dict`'s output."""
        return cls(Cell.from_dict(d["cell"]), d["status"], d["seconds"],
                   [Report.from_json(r) for r in d.get("reports", [])], d.get("message", ""),
                   d.get("traceback", ""), d.get("output", ""))


@dataclass(frozen=True)
class Limits:
    """What every cell of a sweep runs under: clients, ``tilescope.trace`` options, time, memory.

    ``timeout`` is raised inside the case; ``grace`` seconds later a worker still running it is
    ended (a case stuck in native code never sees the first).
    """

    clients: tuple[str, ...]
    options: dict
    timeout: float | None = None
    memory: int | None = None
    grace: float = 10.0

    @property
    def hard_timeout(self) -> float | None:
        """Seconds after which the process running a cell is ended (None: never)."""
        return self.timeout + self.grace if self.timeout else None

    def to_dict(self) -> dict:
        """JSON-ready dict (sent to workers with each cell)."""
        return {"clients": list(self.clients), "options": self.options, "timeout": self.timeout,
                "memory": self.memory, "grace": self.grace}

    @classmethod
    def from_dict(cls, d: dict) -> Limits:
        """The limits of :meth:`to_dict`'s output."""
        return cls(tuple(d["clients"]), dict(d["options"]), d.get("timeout"), d.get("memory"),
                   d.get("grace", 10.0))


def resolve(case: str, path: tuple[str, ...] = ()) -> Callable[..., Any]:
    """The function ``"module.path:function"`` names, imported with ``path`` folders on ``sys.path``."""
    for folder in reversed(path):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    module_name, _, attr = case.partition(":")
    module = importlib.import_module(module_name)
    try:
        found = getattr(module, attr)
    except AttributeError:
        raise AttributeError(f"module {module_name!r} has no case function {attr!r}") from None
    if not callable(found):
        raise TypeError(f"{case} is a {type(found).__name__}, not a function to call per cell")
    return found


def warm(cases: list[tuple[str, tuple[str, ...]]]) -> None:
    """Import the engine, every frontend (routing their launches, as an interception does) and the
    case functions once per worker, before any cell starts its clock: a first launch would otherwise
    pay seconds of imports (a case that cannot be imported fails its cells when they run)."""
    from .. import tracing  # noqa: F401
    from ..frontends import install_routes

    install_routes()

    for case, path in cases:
        with contextlib.suppress(Exception):
            resolve(case, path)


def run(cell: Cell, limits: Limits) -> CellResult:
    """Run ``cell`` in this process under ``limits`` and say how it ended (never raises for the case's
    own errors; a crash of the process is for the caller to see)."""
    from ..session import current

    start = time.perf_counter()
    status, message, where = OK, "", ""
    output = io.StringIO()
    interception = None
    try:
        interception = current().intercept(list(limits.clients), **limits.options)
        try:
            case = resolve(cell.case, cell.path)
        except Exception as exc:
            raise CaseImportError(f"cannot import case {cell.case} (path {list(cell.path)}): "
                                  f"{type(exc).__name__}: {exc}") from exc
        start = time.perf_counter()  # a case module's first import is not the cell's time
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            with _time_limit(limits.timeout), _memory_limit(limits.memory), interception:
                case(**cell.params)
    except CellTimeout as exc:
        status, where = TIMEOUT, traceback.format_exc()
        message = f"ran past its {limits.timeout:g} s limit" + _user_frame(exc.__traceback__)
    except MemoryError:
        status, where = MEMORY, traceback.format_exc()
        message = "MemoryError" + (f": grew past its {_size(limits.memory)} limit" if limits.memory else "")
    except CaseImportError as exc:
        status, message, where = FAILED, str(exc), traceback.format_exc()
    except Exception as exc:  # the case's own failure is the cell's result, not the sweep's
        status, message, where = FAILED, f"{type(exc).__name__}: {exc}", traceback.format_exc()
    seconds = time.perf_counter() - start
    reports = merge_by_client(interception.reports) if interception is not None else []
    return CellResult(cell, status, seconds, reports, message, where, output.getvalue()[-_OUTPUT_CHARS:])


def run_payload(payload: dict) -> dict:
    """:func:`run` on plain data (a cell and limits as dicts, the result as a dict): what a worker
    process runs (a local one or a Ray task), by module path.

    A watchdog started once the case is imported ends the process with :data:`HUNG_EXIT`
    ``grace`` seconds after the time limit, for a case stuck in native code that the in-process
    limit cannot interrupt (ending the process is the only way to stop such a thread).
    """
    cell, limits = Cell.from_dict(payload["cell"]), Limits.from_dict(payload["limits"])
    warm([(cell.case, cell.path)])
    hard = limits.hard_timeout
    watchdog = threading.Timer(hard, os._exit, (HUNG_EXIT,)) if hard else None
    if watchdog is not None:
        watchdog.daemon = True
        watchdog.start()
    try:
        return run(cell, limits).to_dict()
    finally:
        if watchdog is not None:
            watchdog.cancel()


def payload(cell: Cell, limits: Limits) -> dict:
    """What a worker needs to run ``cell``: plain data, so the case function is imported there by name."""
    return {"cell": cell.to_dict(), "limits": limits.to_dict()}


def ended(cell: Cell, status: str, seconds: float | None, message: str) -> CellResult:
    """The result of a cell whose worker did not report back (killed, crashed)."""
    return CellResult(cell, status, seconds, [], message)


@contextlib.contextmanager
def _time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`CellTimeout` in this thread after ``seconds`` (main thread only: elsewhere the
    caller's hard limit is all there is)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise CellTimeout()

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _memory_limit(extra: int | None) -> Iterator[None]:
    """Let the address space grow by at most ``extra`` bytes while the cell runs (then lift the cap)."""
    if not extra:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _address_space() + extra
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _user_frame(tb: Any) -> str:
    """``, in row_sums_kernel at kernels.py:25: <source>``: the innermost frame of the user's code
    (not tilescope's, the standard library's or an installed package's) when time ran out."""
    ours = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    skip = {ours, *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib"))}
    frames = [f for f in traceback.extract_tb(tb)
              if not any(os.path.abspath(f.filename).startswith(s + os.sep) for s in skip)]
    if not frames:
        return ""
    f = frames[-1]
    # a loop condition the engine evaluates is a <lambda> of the kernel's file: name its kernel
    name = next((g.name for g in reversed(frames) if g.filename == f.filename and not g.name.startswith("<")),
                f.name)
    return f", in {name} at {f.filename}:{f.lineno}" + (f": {f.line.strip()}" if f.line else "")


def _address_space() -> int:
    """This process's address space in bytes (Linux: /proc/self/statm)."""
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _size(n: int | None) -> str:
    if not n:
        return "unlimited"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} B"
