"""The Pallas frontend: JAX Pallas kernels (``pl.pallas_call``, from ``jax``) on tilescope's engine.

``tilescope.trace(fn, clients=...)(*args)`` runs a JAX function that calls ``pl.pallas_call`` (a
plain function or a ``jax.jit`` one) with every Pallas kernel in it on the engine; the kernel's
jaxpr is walked (:mod:`interpret`), its BlockSpecs become the blocks each grid step reads and
writes (:mod:`call`), and findings point at the user's Pallas lines. Under ``tilescope run`` (or the
pytest plug-in) an unmodified script's ``pallas_call`` s are routed too (:mod:`route`). Needs the
optional extra ``tilescope[pallas]``; without ``jax`` installed the frontend accepts nothing.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import sys
import types
from typing import Any


def _have_jax() -> bool:
    return importlib.util.find_spec("jax") is not None


def calls_pallas_call(fn: Any, depth: int = 3) -> bool:
    """Whether a Python function's code names ``pallas_call``, or calls (up to ``depth`` levels down,
    through its globals, closure and module attributes it names) a function that does."""
    from ...engine.sites import code_objects

    while isinstance(fn, functools.partial):
        fn = fn.func
    fn = inspect.unwrap(fn) if callable(fn) else fn
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        return False
    names = {n for c in code_objects(code) for n in c.co_names}
    if "pallas_call" in names:
        return True
    if depth == 0:
        return False
    scope = dict(getattr(fn, "__globals__", {}))
    for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=False):
        scope[name] = getattr(cell, "cell_contents", None)
    called = []
    for value in (scope.get(n) for n in names | set(code.co_freevars)):
        if isinstance(value, types.ModuleType):  # pk.add_vectors: the module's functions this code names
            called += [getattr(value, n) for n in names if inspect.isfunction(getattr(value, n, None))]
        elif inspect.isfunction(value) or isinstance(value, functools.partial):
            called.append(value)
    return any(f is not fn and calls_pallas_call(f, depth - 1) for f in called)


class PallasFrontend:
    """Runs JAX functions that call ``pl.pallas_call``, and routed ``pallas_call`` s."""

    name = "pallas"
    options: tuple[str, ...] = ()

    def accepts(self, kernel: Any) -> str | None:
        """ "kernel" for a routed ``pallas_call``, a ``jax.jit`` function, or a function that calls
        ``pallas_call`` itself or through functions it calls (None where JAX is not imported: a kernel
        of it cannot exist then)."""
        if "jax" not in sys.modules:
            return None
        from .call import PallasCall

        if isinstance(kernel, PallasCall):
            return "kernel"
        if type(kernel).__name__ in ("PjitFunction", "JitWrapped") and callable(kernel):
            return "kernel"
        if (
            inspect.isfunction(inspect.unwrap(kernel)) or isinstance(kernel, functools.partial)
        ) and calls_pallas_call(kernel):
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
            from ...after_import import when_imported

            when_imported("jax", _route)


def _route() -> None:
    from .route import install_route

    install_route()


FRONTEND = PallasFrontend()
