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


@contextlib.contextmanager
def after_import(name: str, then: Callable[[], None]) -> Iterator[None]:
    """Call ``then`` once ``name`` is imported (at once if it is); no call if it never is."""
    if name in sys.modules:
        then()
        yield
        return
    hook = _AfterImport(name, then)
    sys.meta_path.insert(0, hook)
    try:
        yield
    finally:
        if hook in sys.meta_path:
            sys.meta_path.remove(hook)
