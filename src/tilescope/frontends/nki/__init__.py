"""The NKI frontend: AWS Neuron Kernel Interface kernels on tilescope's engine, without the ``nki`` package.

``tilescope.frontends.nki`` implements the documented core of ``nki.language`` and ``nki.isa``
(checked against AWS's published API reference, not against NKI's own simulator, which ships
only from AWS's package repository)::

    from tilescope.frontends import nki
    import tilescope.frontends.nki.language as nl

    @nki.jit
    def add_kernel(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        i = nl.program_id(0) * 128 + nl.arange(128)[:, None]
        j = nl.arange(512)[None, :]
        nl.store(out[i, j], nl.load(a[i, j]) + nl.load(b[i, j]))
        return out

    c = add_kernel[4](a, b)   # SPMD grid of 4 programs; NumPy arrays or CPU torch tensors in

It registers under the entry-point group ``tilescope.frontends``; ``tilescope.trace(kernel,
clients=...)`` and ``tilescope run`` then serve NKI kernels like any other.
"""

from __future__ import annotations

from typing import Any

from . import isa, language
from .kernel import Kernel, Launcher, jit

__all__ = ["FRONTEND", "Kernel", "isa", "jit", "language"]


class NKIFrontend:
    """Runs ``@nki.jit`` kernels of :mod:`tilescope.frontends.nki`."""

    name = "nki"
    options: tuple[str, ...] = ()

    def accepts(self, kernel: Any) -> str | None:
        """ "kernel" for an NKI kernel, else None."""
        return "kernel" if isinstance(kernel, Kernel) else None

    def launcher(self, kernel: Kernel, **options: Any) -> Launcher:
        """The engine's ``kernel[grid](...)`` for an NKI kernel."""
        return Launcher(kernel, **options)

    def install_route(self) -> None:
        """Nothing to patch: an NKI kernel asks the current session where each launch goes."""


FRONTEND = NKIFrontend()
