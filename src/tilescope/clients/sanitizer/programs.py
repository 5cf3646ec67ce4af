"""Sets of program ids in the user's terms: ``(3..7, 0, 0)`` rather than a list of five tuples."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def linear_ids(pids: np.ndarray, grid: tuple[int, int, int]) -> np.ndarray:
    """Linear program numbers ``x + gx * (y + gy * z)`` of (n, 3) program ids (the GPU's order)."""
    pids = np.asarray(pids, dtype=np.int64).reshape(-1, 3)
    gx, gy, _ = grid
    return pids[:, 0] + gx * (pids[:, 1] + gy * pids[:, 2])


def program_ids(linear: np.ndarray, grid: tuple[int, int, int]) -> list[tuple[int, int, int]]:
    """(x, y, z) tuples of linear program numbers, in increasing linear order."""
    gx, gy, _ = grid
    linear = np.asarray(linear, dtype=np.int64)
    x, rest = linear % gx, linear // gx
    y, z = rest % gy, rest // gy
    return list(zip(x.tolist(), y.tolist(), z.tolist(), strict=True))


def runs(values: Iterable[int]) -> str:
    """``3..7`` for a run of consecutive ints, ``{0..3, 8}`` for several runs, ``5`` for one."""
    ordered = sorted(set(values))
    parts = []
    start = prev = None
    for v in ordered:
        if start is None:
            start = prev = v
        elif v == prev + 1:
            prev = v
        else:
            parts.append((start, prev))
            start = prev = v
    if start is not None:
        parts.append((start, prev))
    texts = [str(a) if a == b else f"{a}..{b}" for a, b in parts]
    return texts[0] if len(texts) == 1 else "{" + ", ".join(texts) + "}"


def summarize(pids: Iterable[tuple[int, int, int]], rank: int = 3, limit: int = 4) -> str:
    """The programs as a few boxes, e.g. ``(3..7, 0, 0)`` or ``(0..3, 1, 0), (0, 2, 0)``.

    Programs are grouped into boxes (a product of runs per axis): rows of equal x-runs merge across
    y, then equal y-boxes merge across z. ``rank`` is how many axes to show; more than ``limit``
    boxes end with ``and N more``.
    """
    by_zy: dict[tuple[int, int], set[int]] = {}
    for x, y, z in pids:
        by_zy.setdefault((z, y), set()).add(x)
    by_z: dict[int, dict[str, list[int]]] = {}
    for (z, y), xs in sorted(by_zy.items()):
        by_z.setdefault(z, {}).setdefault(runs(xs), []).append(y)
    boxes_by_shape: dict[tuple, list[int]] = {}
    for z, rows in by_z.items():
        shape = tuple((xr, runs(ys)) for xr, ys in rows.items())
        boxes_by_shape.setdefault(shape, []).append(z)
    boxes = [(xr, yr, runs(zs)) for shape, zs in boxes_by_shape.items() for xr, yr in shape]
    shown = [f"({', '.join(box[:max(1, rank)])})" for box in boxes[:limit]]
    more = len(boxes) - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def grid_rank(grid: tuple[int, int, int]) -> int:
    """How many grid axes are worth showing: up to the last one larger than 1 (at least one)."""
    rank = 1
    for axis, n in enumerate(grid):
        if n > 1:
            rank = axis + 1
    return rank


def pid_text(pid: tuple[int, ...], rank: int = 3) -> str:
    """``(1, 0)`` for a program id shown with ``rank`` axes."""
    return f"({', '.join(map(str, pid[: max(1, rank)]))})"
