"""Race corpus: racy and clean Triton kernels, one module per theme.

Each theme module defines ``CASES: list[RaceCase]``. The two lines of every race carry a trailing
``# race: <tag>`` comment; a case lists its races as the set of tags of their two lines (one tag
when both sides are one line) and the race kinds racecheck must count for it. A clean case has no
races and a ``check(inputs, outputs)`` that compares what the kernel computed with a float64 NumPy reference.
Grids are small so that concurrent mode (one thread per program) stays fast.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

THEMES = ("unsynchronised", "synchronised", "atomics", "descriptors")

RAW, WAR, WAW = "read-after-write", "write-after-read", "write-after-write"

_TAG = re.compile(r"#\s*race:\s*(?P<tag>[\w-]+)\s*$")


def rand(rng: np.random.Generator, *shape: int, dtype=np.float32, offset: float = 0.5) -> torch.Tensor:
    """A random CPU tensor (normal plus ``offset``), never all zero."""
    return torch.from_numpy((rng.standard_normal(shape) + offset).astype(dtype))


@dataclass(frozen=True)
class Race:
    """One expected finding: the tags of its two lines and the kinds it counts."""

    tags: frozenset[str]
    kinds: frozenset[str]


def race(*tags: str, kinds: tuple[str, ...]) -> Race:
    """``race("store", kinds=(WAW,))``."""
    return Race(frozenset(tags), frozenset(kinds))


@dataclass(frozen=True)
class RaceCase:
    """``kernel[grid](*args, **kwargs)`` from ``make_args(rng)``, launched ``launches`` times in a row."""

    name: str
    kernel: Any
    make_args: Callable[[np.random.Generator], tuple[list, dict]]
    grid: tuple[int, ...]
    races: tuple[Race, ...] = ()
    check: Callable[[list, list], None] | None = None  # clean cases: check(inputs, outputs) vs a reference
    launches: Callable[[Callable, tuple, list, dict], None] | None = None  # several launches, stream order
    theme: str = field(default="", compare=False)

    @property
    def racy(self) -> bool:
        """Whether racecheck must report something."""
        return bool(self.races)

    def run(self, trace: Callable[[Any], Any], args: list, kwargs: dict) -> None:
        """Launch the case; ``trace(kernel)`` gives a launcher with the run's clients and options."""
        if self.launches is not None:
            self.launches(trace, self.grid, args, kwargs)
        else:
            trace(self.kernel)[self.grid](*args, **kwargs)


def tags(kernel: Any) -> dict[int, str]:
    """Line number -> race tag of a kernel's source."""
    lines, start = inspect.getsourcelines(kernel.fn)
    out = {}
    for i, text in enumerate(lines):
        m = _TAG.search(text)
        if m:
            out[start + i] = m.group("tag")
    return out


def all_cases() -> list[RaceCase]:
    """Every case of every theme, in theme order."""
    cases = []
    for theme in THEMES:
        module = importlib.import_module(f"{__name__}.{theme}")
        for case in module.CASES:
            object.__setattr__(case, "theme", theme)
            cases.append(case)
    return cases
