"""Lanes of op rows as segments: runs of consecutive cells of one tensor's map, one row and class each.

A line of an affine row (:class:`.rows.Lines`) whose lanes are consecutive elements of a row-major
tensor, all inside it and all enabled or all masked off, becomes one segment per map row it
crosses without expanding its lanes (a 16 x 32 tile of a matrix is 16 segments, not 512 lanes).
Every other lane is mapped on its own (:meth:`.geometry.Geometry.element_rc`) and consecutive
lanes of one row and class that land on the same or the next cell are joined. The classes are
the footprint classes of :mod:`.aggregate`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .geometry import Geometry, floor_divmod
from .rows import Lanes, Lines, Rows

# footprint classes
READ, WRITE, MASKED, OUTSIDE = 0, 1, 2, 3


@dataclass
class Segments:
    """Cells ``start .. start + cells - 1`` of a map, touched by ``lanes`` lanes of op row ``row``."""

    row: np.ndarray  # int64 index into Rows
    cls: np.ndarray  # int64 footprint class
    start: np.ndarray  # int64 first cell
    cells: np.ndarray  # int64 cells covered (>= 1)
    lanes: np.ndarray  # int64 lanes that landed on them

    def __len__(self) -> int:
        return len(self.row)

    def take(self, which: np.ndarray) -> Segments:
        """The segments ``which`` (indices or a boolean mask)."""
        return Segments(
            self.row[which], self.cls[which], self.start[which], self.cells[which], self.lanes[which]
        )

    def expanded(self) -> tuple[np.ndarray, np.ndarray]:
        """Every covered cell, segment by segment, and the index of its segment."""
        owner = np.repeat(np.arange(len(self.row)), self.cells)
        first = np.cumsum(self.cells) - self.cells
        return self.start[owner] + np.arange(len(owner)) - first[owner], owner


def concatenate(parts: list[Segments]) -> Segments:
    """One :class:`Segments` of several, in order."""
    return Segments(
        *(np.concatenate([getattr(p, f) for p in parts]) for f in ("row", "cls", "start", "cells", "lanes"))
    )


def segments(rows: Rows, g: Geometry, lines: Lines, reads: np.ndarray) -> Segments:
    """The segments of ``lines`` on map ``g`` (``reads``: per kind code, whether it reads memory)."""
    fast = _simple_lines(g, lines)
    parts = []
    if fast.any():
        parts.append(_line_segments(rows, g, lines, fast, reads))
    if not fast.all():
        parts.append(_lane_segments(rows, g, lines.lanes(~fast), reads))
    return parts[0] if len(parts) == 1 else concatenate(parts)


def _simple_lines(g: Geometry, lines: Lines) -> np.ndarray:
    """Per line: consecutive elements of a row-major tensor, every one inside, mask all on or all off."""
    n = lines.length
    if n < 2 or lines.step != g.itemsize or not g.row_major:
        return np.zeros(len(lines.row), bool)
    first, remainder = floor_divmod(lines.delta, g.itemsize)
    on, any_on = lines.enabled.all(axis=1), lines.enabled.any(axis=1)
    return (remainder == 0) & (first >= 0) & (first + n <= g.numel) & (on | ~any_on)


def _line_segments(rows: Rows, g: Geometry, lines: Lines, which: np.ndarray, reads: np.ndarray) -> Segments:
    row = lines.row[which]
    first = floor_divmod(lines.delta[which], g.itemsize)[0]
    r0, c0 = floor_divmod(first, g.width)
    r1, c1 = floor_divmod(first + lines.length - 1, g.width)
    pieces = r1 - r0 + 1  # map rows each line crosses
    line = np.repeat(np.arange(len(row)), pieces)
    k = np.arange(len(line)) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    map_row = r0[line] + k
    col_lo = np.where(k == 0, c0[line], 0)
    col_hi = np.where(map_row == r1[line], c1[line], g.width - 1)
    start = g.cell_of(map_row, col_lo)
    on = lines.enabled[which, 0]
    cls = np.where(on, _access_class(rows, row, reads), MASKED)
    return Segments(row[line], cls[line], start, g.cell_of(map_row, col_hi) - start + 1, col_hi - col_lo + 1)


def _lane_segments(rows: Rows, g: Geometry, lanes: Lanes, reads: np.ndarray) -> Segments:
    r, c, inside = g.element_rc(lanes.delta)
    cell = g.cell_of(r, c)
    cls = np.where(~lanes.enabled, MASKED, np.where(~inside, OUTSIDE, _access_class(rows, lanes.row, reads)))
    if not len(cell):
        empty = np.zeros(0, np.int64)
        return Segments(empty, empty, empty, empty, empty)
    step = np.diff(cell)
    new = np.r_[True, (lanes.row[1:] != lanes.row[:-1]) | (cls[1:] != cls[:-1]) | (step < 0) | (step > 1)]
    first = np.flatnonzero(new)
    last = np.r_[first[1:], len(cell)] - 1
    return Segments(lanes.row[first], cls[first], cell[first], cell[last] - cell[first] + 1, last - first + 1)


def _access_class(rows: Rows, row: np.ndarray, reads: np.ndarray) -> np.ndarray:
    """The class of an enabled lane inside the tensor: write, read, or (a kind that does neither) masked."""
    return np.where(rows.writes[row], WRITE, np.where(reads[rows.kind[row]], READ, MASKED))
