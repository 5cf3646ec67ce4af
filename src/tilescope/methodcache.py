"""Dataclass methods compiled once, not in every process: what ``import tilescope`` mostly paid.

``@dataclass`` writes each method it generates (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
a frozen class's ``__setattr__``, ...) as source text and compiles it when the class is created:
about 80 µs a method on Python 3.11, 10-13 ms for the ~120 methods of tilescope's IR records and
engine classes, most of ``import tilescope`` and a third of the Triton frontend's load. While
tilescope imports its own modules (:func:`compiled_dataclasses`), the ``dataclasses`` module's
``exec`` runs code compiled from the same text with the same flags (none), kept on disk with
:mod:`marshal` in the rewrite cache's directory (``$TILESCOPE_CACHE_DIR``, else
``$XDG_CACHE_HOME/tilescope/rewrite``; empty: no cache), one file per Python bytecode version, keyed
by the text itself. The classes and their methods are the ones ``dataclasses`` makes; only the
compile is skipped. As for the rewrite cache and ``__pycache__``: the file is only ever read from the
user's own cache directory, written atomically, and ignored (then replaced) when it does not load.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import importlib
import importlib.util
import marshal
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path

#: names the cache directory (shared with the rewrite cache); set to the empty string to turn it off
CACHE_ENV = "TILESCOPE_CACHE_DIR"
#: at most this many methods are kept (older tilescope versions' texts are dropped past it)
MAX_ENTRIES = 4096


def directory() -> Path | None:
    """The cache directory (None: caching is off)."""
    named = os.environ.get(CACHE_ENV)
    if named is not None:
        return Path(named) if named else None
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "tilescope" / "rewrite"


def _path(folder: Path) -> Path:
    """The file of this Python's compiled methods (its bytecode version and optimization level)."""
    return folder / f"dataclass-methods-{importlib.util.MAGIC_NUMBER.hex()}-O{sys.flags.optimize}"


class _Cache:
    """The compiled methods, read from disk once per process and written back when some were added."""

    def __init__(self, path: Path):
        self.path = path
        self.codes: dict[str, types.CodeType] = {}
        self.added = False
        try:
            loaded = marshal.loads(path.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            return
        if isinstance(loaded, dict) and all(isinstance(c, types.CodeType) for c in loaded.values()):
            self.codes = loaded

    def exec(self, source, globals=None, locals=None):  # noqa: A002 - exec's own parameter names
        """``exec`` as ``dataclasses`` calls it: a method's source text runs as its cached code."""
        if type(source) is str:
            code = self.codes.get(source)
            if code is None:
                # the flags dataclasses' own frame gives exec: none (dont_inherit: not this module's)
                code = compile(source, "<string>", "exec", dont_inherit=True)
                if len(self.codes) >= MAX_ENTRIES:
                    self.codes.clear()
                self.codes[source] = code
                self.added = True
            source = code
        return builtins.exec(source, globals, locals)

    def save(self) -> None:
        """Write the methods back when some were compiled (silently nothing where it cannot)."""
        if not self.added:
            return
        self.added = False
        tmp = self.path.with_name(f".tmp-{self.path.name}-{os.getpid()}")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            tmp.write_bytes(marshal.dumps(self.codes))
            os.replace(tmp, self.path)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                tmp.unlink()


_caches: dict[Path, _Cache] = {}  # per file: read once per process
_open = False  # a window is open (an inner one joins it)


@contextlib.contextmanager
def compiled_dataclasses() -> Iterator[None]:
    """Within: dataclasses created (by tilescope's modules as they import) reuse compiled methods.

    Nests (an inner window joins the outer); does nothing when the cache is off or when something
    else already gave ``dataclasses`` its own ``exec``.
    """
    global _open
    try:
        folder = directory()
    except (RuntimeError, KeyError):  # no home directory to find a cache in: compile as dataclasses does
        folder = None
    if _open or folder is None or "exec" in vars(dataclasses):
        yield
        return
    path = _path(folder)
    cache = _caches.get(path)
    if cache is None:
        cache = _caches[path] = _Cache(path)
    _open = True
    dataclasses.exec = cache.exec
    try:
        yield
    finally:
        if vars(dataclasses).get("exec") == cache.exec:
            del dataclasses.exec
        _open = False
        cache.save()


def import_module(name: str) -> types.ModuleType:
    """``importlib.import_module(name)`` for tilescope's modules imported on first use (mid-launch),
    with their dataclasses' methods compiled before (:func:`compiled_dataclasses`)."""
    module = sys.modules.get(name)
    if module is None:
        with compiled_dataclasses():
            module = importlib.import_module(name)
    return module
