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
clients=...)`` and ``tilescope run`` then serve NKI kernels like any other. Under ``tilescope run``
(and the pytest plug-in) on a machine without NKI, ``import nki`` and ``import neuronxcc.nki``
give this module, so an unmodified NKI script runs as it is.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from typing import Any

from . import isa, language
from .kernel import Kernel, Launcher, jit

__all__ = [
    "FRONTEND", "Kernel", "baremetal", "isa", "jit", "language", "provide_nki_modules", "simulate_kernel",
]  # fmt: skip

#: ``@nki.baremetal`` runs a kernel on the device; here, like ``@nki.jit``, on the engine
baremetal = jit


def simulate_kernel(kernel: Any, *args: Any, **kwargs: Any) -> Any:
    """``nki.simulate_kernel(kernel[grid], *args)``: run the kernel (or a gridded launch) on the engine."""
    return kernel(*args, **kwargs)


def provide_nki_modules() -> list[str]:
    """Make ``import nki`` and ``import neuronxcc.nki`` (with ``.language`` and ``.isa``) give this frontend
    where those packages are not installed; returns the module names it provided."""
    provided = []
    for top in ("nki", "neuronxcc"):
        if top in sys.modules or importlib.util.find_spec(top) is not None:
            continue
        package = sys.modules[__name__]
        prefix = "nki" if top == "nki" else "neuronxcc.nki"
        if top == "neuronxcc":
            parent = types.ModuleType("neuronxcc", "tilescope's stand-in for neuronxcc: only its nki package")
            parent.nki = package  # type: ignore[attr-defined]
            sys.modules["neuronxcc"] = parent
            provided.append("neuronxcc")
        sys.modules.update({prefix: package, f"{prefix}.language": language, f"{prefix}.isa": isa})
        provided += [prefix, f"{prefix}.language", f"{prefix}.isa"]
    return provided


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
        """Provide ``nki`` where it is not installed (an NKI kernel asks the current session where each of
        its launches goes; nothing needs patching)."""
        provide_nki_modules()


FRONTEND = NKIFrontend()
