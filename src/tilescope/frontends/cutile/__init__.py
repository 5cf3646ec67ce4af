"""The cuTile frontend: NVIDIA cuTile kernels (``cuda.tile``, from ``cuda-tile``) on tilescope's engine.

cuTile's Python package parses and type-checks kernels on the CPU but needs a GPU to run them.
With this frontend ``tilescope.trace(kernel, clients=...)[grid](*args)`` runs a ``@ct.kernel`` on
the engine, and under ``tilescope run`` (or the pytest plug-in) an unmodified script's
``ct.launch(stream, grid, kernel, args)`` does too, on NumPy arrays or CPU torch tensors. Needs the
optional extra ``tilescope[cutile]``; without ``cuda-tile`` installed the frontend accepts nothing.
"""

from __future__ import annotations

import importlib.util
from typing import Any


def _have_cutile() -> bool:
    return importlib.util.find_spec("cuda") is not None and importlib.util.find_spec("cuda.tile") is not None


class CuTileFrontend:
    """Runs ``@ct.kernel`` kernels."""

    name = "cutile"
    options: tuple[str, ...] = ("check_compile",)  # False: skip cuTile's own compile of the kernel

    def accepts(self, kernel: Any) -> str | None:
        """ "kernel" for a ``cuda.tile.kernel`` (None where cuTile is not installed)."""
        if not _have_cutile():
            return None
        import cuda.tile as ct

        return "kernel" if isinstance(kernel, ct.kernel) else None

    def launcher(self, kernel: Any, **options: Any) -> Any:
        """The engine's launcher for a cuTile kernel."""
        from .kernel import Launcher

        return Launcher(kernel, **options)

    def install_route(self) -> None:
        """Route ``ct.launch`` through the current session once a script imports cuTile (once per
        process; a script that never imports it does not pay cuTile's import, nor torch's under it)."""
        if _have_cutile():
            from ...after_import import when_imported

            when_imported("cuda.tile", _route)


def _route() -> None:
    from .kernel import install_route

    install_route()


FRONTEND = CuTileFrontend()
