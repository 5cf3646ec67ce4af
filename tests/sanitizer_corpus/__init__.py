"""Sanitizer corpus: buggy and clean Triton kernels, one module per theme.

Each theme module defines ``CASES: list[SanitizerCase]``. A buggy kernel marks every access the
sanitizer must flag with a trailing ``# BUG: <kind>`` comment on the line where the access call
starts, so the expected line is readable in the file. Inputs are random and small, so a brute-force
per-lane run of every program stays fast.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from sanitizer_oracle import KINDS

__all__ = ["KINDS", "THEMES", "SanitizerCase", "all_cases", "bug_markers", "rand"]

THEMES = (
    "elementwise",
    "matmul",
    "reductions",
    "indirect",
    "atomics",
    "views",
    "descriptors",
    "overflow",
    "branches",
    "asserts",
    "tutorials",
)


def rand(rng: np.random.Generator, *shape: int, dtype=np.float32, offset: float = 0.5):
    """A random CPU tensor (normal plus ``offset``), never all zero."""
    return torch.from_numpy((rng.standard_normal(shape) + offset).astype(dtype))


_MARKER = re.compile(r"#\s*BUG:\s*(?P<kind>[a-z0-9 -]+?)\s*$")


@dataclass(frozen=True)
class SanitizerCase:
    """One corpus kernel with its launch: ``kernel[grid](*args, **kwargs)`` from ``make_args(rng)``."""

    name: str
    kernel: triton.JITFunction  # noqa: F821 (string annotation, triton imported lazily by users)
    make_args: Callable[[np.random.Generator], tuple[list, dict]]
    grid: tuple[int, ...] | Callable
    buggy: bool
    expected_kinds: tuple[str, ...] = ()
    theme: str = ""


def all_cases() -> list[SanitizerCase]:
    """Every case of every theme module, in theme order."""
    cases = []
    for theme in THEMES:
        module = importlib.import_module(f"{__name__}.{theme}")
        for case in module.CASES:
            cases.append(case if case.theme else _with_theme(case, theme))
    return cases


def _with_theme(case: SanitizerCase, theme: str) -> SanitizerCase:
    return SanitizerCase(
        case.name, case.kernel, case.make_args, case.grid, case.buggy, case.expected_kinds, theme
    )


def bug_markers(case: SanitizerCase) -> list[tuple[int, str]]:
    """(line, kind) of each ``# BUG: <kind>`` marker in the case's kernel source (1-based lines)."""
    lines, start = inspect.getsourcelines(case.kernel.fn)
    found = []
    for offset, text in enumerate(lines):
        match = _MARKER.search(text)
        if match:
            found.append((start + offset, match.group("kind")))
    return found
