"""The Helion frontend: Helion kernels (``@helion.kernel``) on tilescope's engine, through Triton.

Helion compiles a kernel to Triton code; tilescope runs that code with its Triton frontend and
points every site back at the Helion line it came from, using the ``# src[file:line]`` line map
Helion writes into the generated code. ``tilescope.trace(helion_kernel, clients=...)(*args)`` runs
one kernel (``config=`` chooses the config; no autotuning); ``tilescope run`` on a Helion script
runs Helion's own launches through the Triton frontend, with sites mapped the same way.
"""

from __future__ import annotations

import importlib.util
from typing import Any


def _have_helion() -> bool:
    return importlib.util.find_spec("helion") is not None


class HelionFrontend:
    """Runs ``@helion.kernel`` kernels."""

    name = "helion"
    options: tuple[str, ...] = ("config",)  # a helion.Config (or its keywords) to compile; no autotuning

    def accepts(self, kernel: Any) -> str | None:
        """ "kernel" for a ``helion.Kernel`` (None where Helion is not installed)."""
        if not _have_helion() or "helion" not in type(kernel).__module__:
            return None
        import helion

        return "kernel" if isinstance(kernel, helion.Kernel) else None

    def launcher(self, kernel: Any, **options: Any) -> Any:
        """The engine's launcher for a Helion kernel (called like the kernel)."""
        from .launch import Launcher

        return Launcher(kernel, **options)

    def install_route(self) -> None:
        """Helion's own launches reach the Triton frontend's route; map their sites to Helion lines."""
        from .linemap import map_sites

        map_sites()


FRONTEND = HelionFrontend()
