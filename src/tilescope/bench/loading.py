"""Import the modules that register benchmarks: dotted module names or paths to ``.py`` files."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

#: what registers the built-in suite
BUILTIN = "tilescope.bench.suite"


def load(ref: str) -> ModuleType:
    """Import ``ref`` (a module name, or a path to a Python file) and return the module."""
    path = Path(ref)
    if ref.endswith(".py") or path.is_file():
        if not path.is_file():
            raise FileNotFoundError(f"benchmark module {ref!r} does not exist")
        digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
        name = f"tilescope_user_{path.stem}_{digest}"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {ref!r}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(ref)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (ref == exc.name or ref.startswith(exc.name + ".")):
            raise  # the module exists; something it imports does not: the user's traceback matters
        raise ModuleNotFoundError(
            f"benchmark module {ref!r} cannot be imported ({exc}): give a module importable from here "
            "(is its folder on PYTHONPATH?) or the path to a .py file", name=exc.name
        ) from None


def load_all(refs: list[str]) -> list[str]:
    """Import every module in ``refs`` (the built-in suite when empty); returns their module names."""
    return [load(ref).__name__ for ref in refs or [BUILTIN]]


def python_files(directory: Path) -> list[str]:
    """The ``.py`` files under ``directory`` (sorted; private ``_*`` files skipped) as import references."""
    if not directory.is_dir():
        raise NotADirectoryError(f"corpus {str(directory)!r} is not a directory")
    return [str(p) for p in sorted(directory.rglob("*.py")) if not p.name.startswith("_")]
