"""DSL frontends and their registry (entry-point group ``tilescope.frontends``).

A frontend makes one tile language's kernels run on the engine. It is an object with

* ``name``;
* ``accepts(kernel)``: ``"kernel"`` for a kernel object it runs, ``"function"`` for a plain Python
  function that the DSL's decorator has not yet wrapped (``@tilescope.trace`` written below it),
  or None;
* ``options``: the names of its own launch options (``tilescope.trace`` hands it those);
* ``launcher(kernel, *, clients, options, session, **frontend_options)``: a launcher with the
  DSL's launch syntax, running through :func:`tilescope.engine.launch.run_launch`;
* ``install_route()``: patch the DSL's own launch entry point once per process so that a launch
  asks ``tilescope.session.current().route(kernel, function)`` where to go;
* optionally ``model_gpu(spec)``: a context manager in which the DSL's own device queries answer as
  the GPU ``spec`` (a :class:`tilescope.gpu.GPUSpec`) on a machine without one.

``tilescope.trace`` hands a kernel to the first frontend that accepts it. Built-in frontends come
first (Triton); plug-ins register under the entry-point group and are tried next, in name order.
"""

from __future__ import annotations

import functools
from typing import Any, Protocol

ENTRY_POINT_GROUP = "tilescope.frontends"

#: built-in frontends: name -> "module:attribute"
BUILTIN: dict[str, str] = {"triton": "tilescope.frontends.triton:FRONTEND"}


class Frontend(Protocol):
    """What a frontend provides (see the module docstring)."""

    name: str
    options: tuple[str, ...]

    def accepts(self, kernel: Any) -> str | None:
        """``"kernel"``, ``"function"`` or None."""

    def launcher(
        self, kernel: Any, *, clients: list, options: Any, session: Any, **frontend_options: Any
    ) -> Any:
        """A launcher with the DSL's launch syntax for ``kernel``."""

    def install_route(self) -> None:
        """Route the DSL's own launches through the current session (idempotent)."""


def _load(target: str) -> Any:
    module_name, _, attr = target.partition(":")
    module = __import__(module_name, fromlist=[attr])
    return getattr(module, attr)


@functools.cache
def _plugins() -> tuple[tuple[str, str], ...]:
    from importlib import metadata

    return tuple(
        sorted(
            (ep.name, ep.value)
            for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)
            if ep.name not in BUILTIN
        )
    )


#: frontends registered from code (``register``), tried after the built-in ones
REGISTERED: dict[str, Frontend] = {}


def register(frontend: Frontend) -> None:
    """Make ``frontend`` available without an entry point (tests, notebooks); replaces one of its name."""
    REGISTERED[frontend.name] = frontend


def unregister(name: str) -> None:
    """Forget a frontend added with :func:`register`."""
    REGISTERED.pop(name, None)


def frontends() -> list[Frontend]:
    """Every available frontend: built-in ones first, then registered ones, then plug-ins by name."""
    built_in = [_load(t) for t in BUILTIN.values()]
    return [*built_in, *REGISTERED.values(), *(_load(t) for _, t in _plugins())]


def frontend_for(kernel: Any) -> tuple[Frontend, str]:
    """The first frontend that accepts ``kernel``, and how (``"kernel"`` or ``"function"``).

    Built-in and registered frontends are asked first; installed plug-ins (whose entry points
    take a scan of every installed package to find) only when none of those accepts it as a
    kernel. A claim on a plain function (``"function"``, Triton's for a function not yet
    ``@triton.jit``-ed) yields to a frontend that runs that function as a kernel itself (Pallas:
    a JAX function that calls ``pl.pallas_call``).
    """
    built_in = [_load(t) for t in BUILTIN.values()]
    fallback = None
    for frontend in [*built_in, *REGISTERED.values()]:
        how = frontend.accepts(kernel)
        if how == "kernel":
            return frontend, how
        fallback = fallback or ((frontend, how) if how else None)
    for _, target in _plugins():
        frontend = _load(target)
        how = frontend.accepts(kernel)
        if how == "kernel":
            return frontend, how
        fallback = fallback or ((frontend, how) if how else None)
    if fallback is not None:
        return fallback
    from ..engine.errors import LaunchError

    names = ", ".join(f.name for f in frontends()) or "(none)"
    raise LaunchError(
        f"no tilescope frontend accepts a {type(kernel).__name__}; installed frontends: {names}"
    )


def install_routes() -> None:
    """Every available frontend routes its DSL's launches through the current session."""
    for frontend in frontends():
        frontend.install_route()
