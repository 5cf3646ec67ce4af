"""Run a callback once a module is imported: now if it already is, else right after its import."""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Iterator
from typing import Any


class _ThenLoader(importlib.abc.Loader):
    """A module's own loader, then the callback."""

    def __init__(self, loader: Any, then: Callable[[], None]):
        self.loader = loader
        self.then = then

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        self.then()

    def __getattr__(self, name: str) -> Any:
        # everything else is the module's own loader's: resource readers (importlib.resources), ...
        return getattr(self.loader, name)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds ``name`` once, as the other finders would, and wraps its loader."""

    def __init__(self, name: str, then: Callable[[], None]):
        self.name = name
        self.then = then

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # one shot, and lets the search below skip this finder
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenLoader(spec.loader, self.then)
        return spec


def when_imported(name: str, then: Callable[[], None]) -> _AfterImport | None:
    """Call ``then`` once ``name`` is imported: now if it is, else right after its import (for the
    rest of the process); returns the waiting hook, if any."""
    if name in sys.modules:
        then()
        return None
    hook = _AfterImport(name, then)
    sys.meta_path.insert(0, hook)
    return hook


@contextlib.contextmanager
def after_import(name: str, then: Callable[[], None]) -> Iterator[None]:
    """Call ``then`` once ``name`` is imported inside the ``with`` block (at once if it is); no call
    if it is not."""
    hook = when_imported(name, then)
    try:
        yield
    finally:
        if hook is not None and hook in sys.meta_path:
            sys.meta_path.remove(hook)
