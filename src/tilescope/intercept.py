"""Every ``@triton.jit`` launch of the process runs on the engine, while an :class:`Interceptor` is active.

``tilescope run`` and the pytest plug-in use this to check unmodified code: Triton's own launch
entry points (``JITFunction.run``, and ``Autotuner.run``/``Heuristics.run`` whose GPU autotuning
would otherwise run first) are replaced for the duration and restored after. Each kernel object gets
one :class:`~tilescope.Launcher`, kept for the interceptor's life, so reports cover all its launches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .clients import make_clients
from .clients.base import Report
from .frontends.triton import version
from .frontends.triton.launch import Launcher


class Interceptor:
    """Routes Triton launches to per-kernel :class:`Launcher` objects with the chosen clients.

    ``clients`` is a client spec as for :func:`tilescope.trace`; ``options`` go to every launcher
    (engine options and client options such as ``trace_dir``). ``progress(kernel_name)`` may return
    a ``(done, total)`` callback for each new launcher. Kernels compute their outputs unless
    ``compute_outputs=False`` is given: the code around them uses what they write.
    """

    def __init__(self, clients: Any = None, *, progress: Callable[[str], Callable | None] | None = None,
                 **options: Any):
        make_clients(clients, **options)  # an unknown client name fails here, before any code runs
        self.clients = clients
        self.options = {"compute_outputs": True, **options}
        self.progress = progress
        self.launchers: dict[int, Launcher] = {}
        self._kernels: list[Any] = []  # keeps kernel objects alive so their ids stay theirs
        self._saved: list[tuple[type, Any]] = []

    def __enter__(self) -> Interceptor:
        self.install()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.uninstall()

    def install(self) -> None:
        """Patch Triton's launch entry points (idempotent)."""
        if self._saved:
            return
        for cls in (version.JITFunction, version.Autotuner, version.Heuristics):
            self._saved.append((cls, cls.__dict__["run"]))
            cls.run = self._entry()

    def uninstall(self) -> None:
        """Restore Triton's launch entry points."""
        for cls, original in reversed(self._saved):
            cls.run = original
        self._saved = []

    def launcher(self, kernel: Any) -> Launcher:
        """The launcher of ``kernel`` (created on its first launch)."""
        found = self.launchers.get(id(kernel))
        if found is None:
            found = Launcher(kernel, clients=self.clients, **self.options)
            if self.progress is not None:
                found.progress = self.progress(found.info.name)
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

    def _entry(self) -> Callable[..., Any]:
        interceptor = self

        def run(kernel: Any, *args: Any, grid: Any = None, warmup: bool = False, **kwargs: Any) -> Any:
            if warmup:
                return None  # ahead-of-time compilation for a GPU: nothing to do on the engine
            return interceptor.launcher(kernel).run(*args, grid=grid, **kwargs)

        run.__doc__ = "Run this kernel on tilescope's engine (installed by tilescope.intercept)."
        return run
