"""The Session: what would otherwise be process-global, in one object.

A session owns launch ids, the launch observers, the clients that saw a launch
(``tilescope.reports()``), the report files clients write after every launch, and the routing of
a DSL's own launch calls to tilescope: kernels marked with ``@tilescope.trace`` below their DSL's
decorator, and interceptions (``tilescope run``, the pytest plug-in) that run every kernel of the
process on the engine. Frontends install one launch hook per DSL that asks the current session
where a launch goes. ``current()`` is the process's default session.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Iterator
from typing import Any

from .clients.base import Report

Observer = Callable[[Any, Any], None]


class Interception:
    """Every launch of the process runs on the engine, under these clients, while it is active.

    ``clients`` is a client spec as for :func:`tilescope.trace`, ``options`` go to every
    launcher; ``progress(kernel_name)`` may return a ``(done, total)`` callback per new launcher.
    Each kernel object gets one launcher for the interception's life, so reports cover all its
    launches. Kernels compute their outputs unless ``compute_outputs=False`` is given: the code
    around them uses what they write.
    """

    def __init__(
        self, session: Session, clients: Any = None, progress: Callable | None = None, **options: Any
    ):
        from .tracing import check_options

        # an unknown client, option or value fails here, before any kernel runs (for any frontend)
        check_options({"compute_outputs": True, **options, "progress": progress}, clients,
                      where="tilescope interception")  # fmt: skip
        self.session = session
        self.clients = clients
        self.options = {"compute_outputs": True, **options}
        self.progress = progress
        self.launchers: dict[int, Any] = {}
        self._kernels: list[Any] = []  # keeps kernel objects alive so their ids stay theirs

    def launcher(self, kernel: Any) -> Any:
        """The launcher of ``kernel`` (created on its first launch)."""
        found = self.launchers.get(id(kernel))
        if found is None:
            from .tracing import trace

            found = trace(kernel, clients=self.clients, session=self.session, **self.options)
            if self.progress is not None:
                found.progress = self.progress(found.name)
            self.launchers[id(kernel)] = found
            self._kernels.append(kernel)
        return found

    def reset(self) -> None:
        """Forget every launcher (and its clients); later launches start fresh reports."""
        self.launchers = {}
        self._kernels = []

    @property
    def reports(self) -> list[Report]:
        """Every launcher's reports, in order of first launch."""
        return [r for launcher in self.launchers.values() for r in launcher.reports]

    def __enter__(self) -> Interception:
        self.session.start_interception(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.session.stop_interception(self)


class Session:
    """Launch ids, observers, seen clients, report files and launch routing for one process."""

    def __init__(self):
        self._ids = itertools.count(1)
        self.observers: list[Observer] = []
        self._seen: dict[int, Any] = {}
        self._report_files: dict[str, list[Any]] = {}
        self._interceptions: list[Interception] = []
        self._marked: dict[int, Any] = {}

    # ------------------------------------------------------------------ launches

    def next_launch_id(self) -> int:
        """A unique, increasing launch id."""
        return next(self._ids)

    def launch_started(self, hub: Any, info: Any) -> None:
        """Called by the engine as a launch starts: remember its clients, tell the observers."""
        for client in hub.clients:
            self._seen.setdefault(id(client), client)
            path = getattr(client, "report_path", None)
            if path is not None:
                peers = self._report_files.setdefault(os.fspath(path), [])
                if all(p is not client for p in peers):
                    peers.append(client)
        for observe in self.observers:
            observe(hub, info)

    def launch_ended(self, hub: Any, info: Any) -> None:
        """Called by the engine as a launch ends: rewrite the report files its clients write to."""
        paths = {os.fspath(p) for c in hub.clients if (p := getattr(c, "report_path", None)) is not None}
        for path in paths:
            peers = self._report_files[path]
            Report.merge([c.report() for c in peers]).save(path, getattr(peers[0], "report_format", "json"))

    def reports(self) -> list[Report]:
        """One report per client that saw at least one launch, in order of first launch."""
        return [client.report() for client in self._seen.values()]

    # ------------------------------------------------------------------ routing

    def intercept(
        self, clients: Any = None, progress: Callable | None = None, **options: Any
    ) -> Interception:
        """An :class:`Interception` (use it as a context manager, or ``start``/``stop`` it)."""
        return Interception(self, clients, progress, **options)

    def start_interception(self, interception: Interception) -> None:
        """Make ``interception`` receive every launch (the innermost one wins)."""
        from .frontends import install_routes

        install_routes()
        self._interceptions.append(interception)

    def stop_interception(self, interception: Interception) -> None:
        """Stop routing launches to ``interception``."""
        if interception in self._interceptions:
            self._interceptions.remove(interception)

    @property
    def intercepting(self) -> bool:
        """True while an interception is active."""
        return bool(self._interceptions)

    def mark(self, fn: Any, options: dict) -> None:
        """Run the kernel made from plain function ``fn`` on the engine with ``options`` when launched."""
        from .frontends import install_routes

        fn.__tilescope_trace__ = options
        install_routes()

    def route(self, kernel: Any, function: Any = None) -> Any:
        """The launcher a DSL launch of ``kernel`` goes to, or None to run it as the DSL would.

        ``function`` is the user's Python function inside ``kernel`` (where a mark is kept).
        """
        if self._interceptions:
            return self._interceptions[-1].launcher(kernel)
        marker = getattr(function, "__tilescope_trace__", None)
        if marker is None:
            return None
        found = self._marked.get(id(kernel))
        if found is None:
            from .tracing import trace

            found = self._marked[id(kernel)] = trace(kernel, session=self, **marker)
        return found


_DEFAULT: Session | None = None


def current() -> Session:
    """The process's default session."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Session()
    return _DEFAULT


@contextlib.contextmanager
def intercepting(clients: Any = None, **options: Any) -> Iterator[Interception]:
    """``with tilescope.session.intercepting("sanitizer") as run:``: every kernel launched inside runs
    on the engine under those clients; ``run.reports`` afterwards."""
    with current().intercept(clients, **options) as interception:
        yield interception


def reports() -> list[Report]:
    """One report per client that saw at least one launch in this process, in order of first launch."""
    return current().reports()
