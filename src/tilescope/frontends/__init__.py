"""DSL frontends and their registry (entry-point group ``tilescope.frontends``).

A frontend makes one tile language's kernels run on the engine. It is any object with a ``name``,
``accepts(kernel) -> bool`` and ``trace(kernel, **options) -> launcher``; ``tilescope.trace`` hands a
kernel to the first frontend that accepts it. Built-in frontends come first (Triton); plug-ins
register under the entry-point group and are tried next, in name order.
"""

from __future__ import annotations

import functools
from importlib import metadata
from typing import Any, Protocol

ENTRY_POINT_GROUP = "tilescope.frontends"

#: built-in frontends: name -> "module:attribute"
BUILTIN: dict[str, str] = {"triton": "tilescope.frontends.triton:FRONTEND"}


class Frontend(Protocol):
    """What a frontend provides."""

    name: str

    def accepts(self, kernel: Any) -> bool:
        """True when this frontend can run ``kernel``."""

    def trace(self, kernel: Any, **options: Any) -> Any:
        """A launcher with the DSL's launch syntax for ``kernel``."""


def _load(target: str) -> Any:
    module_name, _, attr = target.partition(":")
    module = __import__(module_name, fromlist=[attr])
    return getattr(module, attr)


@functools.cache
def _plugins() -> tuple[tuple[str, str], ...]:
    return tuple(
        sorted(
            (ep.name, ep.value)
            for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)
            if ep.name not in BUILTIN
        )
    )


def frontends() -> list[Frontend]:
    """Every available frontend, built-in ones first."""
    return [_load(t) for t in BUILTIN.values()] + [_load(t) for _, t in _plugins()]


def trace(kernel: Any = None, **options: Any) -> Any:
    """Run a tile-language kernel on the CPU engine through the frontend that accepts it.

    ``tilescope.trace(kernel)[grid](*args, **meta)`` for Triton; also a decorator
    (``@tilescope.trace`` or ``@tilescope.trace(clients="sanitizer")``). Options are the frontend's;
    see :func:`tilescope.frontends.triton.launch.trace` for Triton's.
    """
    if kernel is None:
        return lambda k: trace(k, **options)
    for frontend in frontends():
        if frontend.accepts(kernel):
            return frontend.trace(kernel, **options)
    from ..engine.errors import LaunchError

    names = ", ".join(f.name for f in frontends())
    raise LaunchError(
        f"no tilescope frontend accepts a {type(kernel).__name__}; installed frontends: {names}"
    )
