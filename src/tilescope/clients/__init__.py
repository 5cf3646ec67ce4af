"""Analysis clients and their registry (entry-point group ``tilescope.clients``)."""

from __future__ import annotations

import difflib
import functools
import os
from typing import Any

from .base import Client, Finding, Report

#: built-in clients: name -> "module:Class"
BUILTIN: dict[str, str] = {
    "determinism": "tilescope.clients.determinism:Determinism",
    "racecheck": "tilescope.clients.racecheck:RaceCheck",
    "profiler": "tilescope.clients.profiler:Profiler",
    "sanitizer": "tilescope.clients.sanitizer:Sanitizer",
    "tracer": "tilescope.clients.tracer:Tracer",
}

ENTRY_POINT_GROUP = "tilescope.clients"


@functools.cache
def _plugins() -> dict[str, str]:
    """Client plug-ins installed as entry points (scanned once per process)."""
    from importlib import metadata  # a fifth of a second: only when a plug-in is looked for

    return {ep.name: ep.value for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def available() -> dict[str, str]:
    """Every known client name -> where it comes from (built-in or a plug-in's entry point)."""
    return {**_plugins(), **BUILTIN}


def _load(name: str) -> type:
    target = BUILTIN.get(name) or available().get(name)
    if target is None:
        known = ", ".join(sorted(available())) or "(none installed)"
        close = difflib.get_close_matches(name, list(available()), 1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown tilescope client {name!r}; known clients: {known}{hint}")
    module_name, _, attr = target.partition(":")
    module = __import__(module_name, fromlist=[attr])
    return getattr(module, attr)


def _items(spec: Any) -> list[Any]:
    """A client spec as a list of names and client objects (``TILESCOPE_CLIENTS`` when None)."""
    if spec is None:
        spec = os.environ.get("TILESCOPE_CLIENTS") or []
    if isinstance(spec, str):
        spec = [s.strip() for s in spec.split(",") if s.strip()]
    if isinstance(spec, Client):
        spec = [spec]
    return list(spec)


def client_options(spec: Any = None) -> set[str]:
    """The option names the clients of ``spec`` take (an unknown client name raises ValueError)."""
    return {o for item in _items(spec) if isinstance(item, str) for o in getattr(_load(item), "options", ())}


def client_needs(spec: Any = None, **options: Any) -> dict[str, frozenset]:
    """What each client of ``spec`` would need from the core with ``options``, by client name,
    without making any (making a tracer creates its trace folder)."""
    found = {}
    for item in _items(spec):
        if isinstance(item, str):
            cls = _load(item)
            declared = getattr(cls, "options", ())
            found[item] = cls.needs_with(**{k: v for k, v in options.items() if k in declared})
        else:
            found[item.name] = frozenset(getattr(item, "needs", ()))
    return found


def make_clients(spec: Any = None, **options: Any) -> list[Client]:
    """Client instances from a name, a comma-separated string, a list, or client objects.

    With no spec, ``TILESCOPE_CLIENTS`` (comma-separated names) is used. Each named client gets
    the options it declares.
    """
    clients = []
    for item in _items(spec):
        if isinstance(item, str):
            cls = _load(item)
            clients.append(cls(**{k: v for k, v in options.items() if k in getattr(cls, "options", ())}))
        else:
            clients.append(item)
    return clients


__all__ = [
    "Client", "Finding", "Report", "available", "client_needs", "client_options", "make_clients", "BUILTIN",
]  # fmt: skip
