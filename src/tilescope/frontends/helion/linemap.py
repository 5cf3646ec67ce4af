"""Helion's line map: the ``# src[file.py:N]: ...`` comments Helion writes into the Triton code it generates.

Every statement of the generated module follows the comment naming the Helion source line it came
from; a generated line maps to the last such comment above it. Helion names the file by its base
name, resolved here against the Helion kernels seen so far and the loaded modules. The ``@triton.jit``
helpers of Helion's runtime that generated code calls are library code, like Triton's own: their ops
report the generated line that called them, hence the Helion line.
"""

from __future__ import annotations

import os
import re
import sys
from functools import cache

_SRC = re.compile(r"^\s*# src\[(?P<file>[^\]:]+):(?P<line>\d+)\]:")

#: base name -> full path of the files Helion kernels were defined in
KERNEL_FILES: dict[str, str] = {}


def map_sites() -> None:
    """Point the sites of Helion's generated code at Helion lines (idempotent)."""
    from ...engine.sites import add_line_map
    from ..triton.runtime import add_library_package

    add_line_map(line_map)
    add_library_package("helion")


def note_kernel_file(path: str) -> None:
    """Remember where a Helion kernel lives (to resolve the base names in ``# src[...]`` comments)."""
    KERNEL_FILES[os.path.basename(path)] = path


def _resolve(name: str) -> str:
    found = KERNEL_FILES.get(name)
    if found is not None:
        return found
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and os.path.basename(path) == name:
            return path
    return name


@cache
def line_map(filename: str) -> dict[int, tuple[str, int]] | None:
    """``{generated line: (Helion file, line)}`` for a module Helion generated, else None."""
    try:
        with open(filename, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return None
    if "from helion.runtime import" not in text:
        return None
    mapping: dict[int, tuple[str, int]] = {}
    current = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = _SRC.match(line)
        if match:
            current = (_resolve(match["file"]), int(match["line"]))
        elif current is not None and line.strip():
            mapping[number] = current
        if line and not line[0].isspace() and not match:
            current = None  # a new top-level statement starts a new scope
    return mapping
