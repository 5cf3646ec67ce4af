"""The Pallas frontend: JAX Pallas kernels (``pl.pallas_call``, from ``jax``) on tilescope's engine.

``tilescope.trace(fn, clients=...)(*args)`` runs a JAX function that calls ``pl.pallas_call`` (a
plain function or a ``jax.jit`` one) with every Pallas kernel in it on the engine; the kernel's
jaxpr is walked (:mod:`interpret`), its BlockSpecs become the blocks each grid step reads and
writes (:mod:`call`), and findings point at the user's Pallas lines. Under ``tilescope run`` (or the
pytest plug-in) an unmodified script's ``pallas_call`` s are routed too (:mod:`route`). Needs the
optional extra ``tilescope[pallas]``; without ``jax`` installed the frontend accepts nothing.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import types
from typing import Any


def _have_jax() -> bool:
    return importlib.util.find_spec("jax") is not None


def _names_pallas_call(fn: Any) -> bool:
    """Whether a Python function's code (or a function it wraps) names ``pallas_call``."""
    from ...engine.sites import code_objects

    inner = inspect.unwrap(fn) if callable(fn) else fn
    code = getattr(inner, "__code__", None)
    return isinstance(code, types.CodeType) and any("pallas_call" in c.co_names for c in code_objects(code))


class PallasFrontend:
    """Runs JAX functions that call ``pl.pallas_call``, and routed ``pallas_call`` s."""

    name = "pallas"
    options: tuple[str, ...] = ()

    def accepts(self, kernel: Any) -> str | None:
        """ "kernel" for a routed ``pallas_call``, a ``jax.jit`` function, or a function whose code calls
        ``pallas_call`` (None where JAX is not imported: a kernel of it cannot exist then)."""
        if "jax" not in sys.modules:
            return None
        from .call import PallasCall

        if isinstance(kernel, PallasCall):
            return "kernel"
        if type(kernel).__name__ in ("PjitFunction", "JitWrapped") and callable(kernel):
            return "kernel"
        if inspect.isfunction(inspect.unwrap(kernel)) and _names_pallas_call(kernel):
            return "kernel"
        return None

    def launcher(self, kernel: Any, **options: Any) -> Any:
        """The engine's launcher: a routed call's, or a function's (called like the function)."""
        from .call import CallLauncher, PallasCall
        from .function import FunctionLauncher

        if isinstance(kernel, PallasCall):
            return CallLauncher(kernel, **options)
        return FunctionLauncher(kernel, **options)

    def install_route(self) -> None:
        """Route ``pallas_call`` s through the current session once a script imports JAX (once per
        process; a script that never imports JAX does not pay its import)."""
        if _have_jax():
            from ...gpu.imports import when_imported

            when_imported("jax", _route)


def _route() -> None:
    from .route import install_route

    install_route()


FRONTEND = PallasFrontend()
