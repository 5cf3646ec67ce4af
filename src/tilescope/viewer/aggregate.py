"""Element maps of one launch: per tensor and cell, who read or wrote it, and every program's footprint.

For each tensor argument and each cell of its map (:mod:`.geometry`) the launch is reduced to
NumPy layers: ``owner`` (the lowest-numbered program that wrote the cell, else the lowest that
read it or attempted it from outside; -1: none), ``writers`` and ``readers`` (distinct programs,
saturating at 255) and ``flags`` (bits below). Each program's footprint is kept as runs of cells
per class (read, write, masked-off lane, outside attempt), so one program's picture is a slice of
a few arrays. Rows are taken program by program in bounded chunks (memory stays bounded however
many programs and lanes the launch had) as segments of cells (:mod:`.segments`), not lane by lane:
the layers are coverage counts of the segments' ranges, the footprints their union per program
and class. The verdicts never depend on the order programs ran in: the owner is a minimum, counts
are of distinct programs.

A cell is an element unless the map is downsampled; then the counts and conflict bits are per cell
(a cell read by one program and written by another is a conflict even if the elements differ).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .geometry import Geometry, base_geometry, finish, itemsize, row_major_strides
from .rows import MEMORY_KINDS, READ_KINDS, Rows, affine_span, lanes_of, lines_of
from .segments import MASKED, OUTSIDE, READ, WRITE, Segments, concatenate, segments

CLASSES = ("read", "write", "masked", "outside")

# flag bits of a cell
F_READ, F_WRITE, F_MASKED, F_OUTSIDE, F_ATOMIC, F_CONFLICT, F_MULTIWRITE, F_INSIDE = (
    1 << i for i in range(8)
)
FLAG_NAMES = {
    "read": F_READ,
    "write": F_WRITE,
    "masked": F_MASKED,
    "outside": F_OUTSIDE,
    "atomic": F_ATOMIC,
    "conflict": F_CONFLICT,
    "multiwrite": F_MULTIWRITE,
    "inside": F_INSIDE,
}

_NONE = np.iinfo(np.int32).max
_THREADS = 4
_OUTSIDE_CAP = 1 << 16  # (site, cell) pairs kept per tensor for drawing a finding's bad lanes


@dataclass
class TensorMap:
    """The element map of one tensor argument in one launch."""

    index: int  # argument index
    name: str
    dtype: str
    geometry: Geometry
    owner: np.ndarray  # int32 per cell
    writers: np.ndarray  # uint8 per cell
    readers: np.ndarray  # uint8 per cell
    flags: np.ndarray  # uint8 per cell
    runs_group: np.ndarray  # int32: program * 4 + class, sorted
    runs_start: np.ndarray  # int32 first cell of the run
    runs_length: np.ndarray  # int32 cells in the run
    outside_site: np.ndarray  # int32: (site, cell) pairs where enabled lanes fell outside the tensor
    outside_cell: np.ndarray
    outside_program: np.ndarray  # lowest program that did so
    sites: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # site ids touching the tensor
    site_runs_group: np.ndarray | None = None  # (program * len(sites) + site index) * 4 + class, sorted
    site_runs_start: np.ndarray | None = None  # (None when one site touches the tensor: the program runs
    site_runs_length: np.ndarray | None = None  # are then that site's runs)
    stats: dict = field(default_factory=dict)


@dataclass
class LaunchMaps:
    """Every tensor's map of one launch and what the rows add up to."""

    tensors: list[TensorMap]
    row_outside: np.ndarray  # int64 per row: enabled lanes outside their tensor


def tensor_arguments(arguments: list[dict]) -> list[dict]:
    """The launch's arguments that have an element map (tensors and tensor descriptors)."""
    return [a for a in arguments if a.get("kind") in ("tensor", "descriptor")]


def aggregate(
    rows: Rows, arguments: list[dict], programs: int, *, max_cells: int = 1 << 22, max_lanes: int = 1 << 22
) -> LaunchMaps:
    """The element maps of every tensor argument of a launch (``programs`` = grid size)."""
    memory = np.array([k in MEMORY_KINDS for k in rows.kinds] + [False], dtype=bool)

    def one(arg: dict) -> tuple[TensorMap, np.ndarray]:
        code = rows.arguments.index(arg["name"]) if arg["name"] in rows.arguments else -2
        selected = np.flatnonzero((rows.argument == code) & memory[rows.kind])
        outside = np.zeros(len(rows), dtype=np.int64)  # this tensor's rows only
        return _tensor_map(rows, selected, arg, programs, max_cells, max_lanes, outside), outside

    tensors = tensor_arguments(arguments)
    workers = min(len(tensors), os.cpu_count() or 1, _THREADS)
    if workers > 1:  # NumPy's sorts and arithmetic release the GIL: tensors aggregate side by side
        with ThreadPoolExecutor(workers, thread_name_prefix="tilescope-view-aggregate") as pool:
            done = list(pool.map(one, tensors))
    else:
        done = [one(arg) for arg in tensors]
    row_outside = np.zeros(len(rows), dtype=np.int64)
    for _, outside in done:
        row_outside += outside
    return LaunchMaps([t for t, _ in done], row_outside)


def _tensor_map(
    rows: Rows,
    selected: np.ndarray,
    arg: dict,
    programs: int,
    max_cells: int,
    max_lanes: int,
    row_outside: np.ndarray,
) -> TensorMap:
    shape = tuple(int(s) for s in arg.get("shape") or ())
    strides = tuple(int(s) for s in arg.get("strides") or ())
    if len(strides) != len(shape):
        strides = row_major_strides(shape)
    address = int(arg.get("address") or 0)
    size = itemsize(str(arg.get("dtype", "")), int(arg.get("nbytes") or 0), shape)
    plain = base_geometry(shape, strides, address, size)
    extent = None
    span = plain.numel * size
    widening = selected
    if plain.contiguous:  # rows whose whole block lies inside the tensor cannot widen the map
        strided, lo, hi = affine_span(rows, selected, address)
        widening = selected[~(strided & (lo >= 0) & (hi < span))]
    for lanes in lanes_of(rows, widening, address, max_lanes):
        delta = lanes.delta
        if plain.contiguous:  # lanes inside [0, span) are elements: only the others can widen the map
            delta = delta[(delta < 0) | (delta >= span)]
            if not len(delta):
                continue
        row, col, _ = plain.element_rc(delta)
        here = (int(row.min()), int(row.max()), int(col.min()), int(col.max()))
        extent = (
            here
            if extent is None
            else (
                min(extent[0], here[0]),
                max(extent[1], here[1]),
                min(extent[2], here[2]),
                max(extent[3], here[3]),
            )
        )
    g = finish(plain, extent, max_cells)
    sites = np.unique(rows.site[selected]).astype(np.int32)
    acc = _Accumulator(g.cells, len(sites))
    atomics = np.array([k == "atomic" for k in rows.kinds] + [False], dtype=bool)
    reads = np.array([k in READ_KINDS for k in rows.kinds] + [False], dtype=bool)
    order = selected[np.argsort(rows.program[selected], kind="stable")]
    for chunk in _program_chunks(rows, order, max_lanes):
        parts = [segments(rows, g, lines, reads) for lines in lines_of(rows, chunk, address, max_lanes)]
        if not parts:
            continue
        seg = concatenate(parts) if len(parts) > 1 else parts[0]
        site_index = np.searchsorted(sites, rows.site[seg.row]) if len(sites) > 1 else None
        atomic = atomics[rows.kind[seg.row]] & (seg.cls <= WRITE)
        acc.add(rows.program[seg.row], seg, atomic=atomic, site_index=site_index)
        bad = seg.take(seg.cls == OUTSIDE)
        if len(bad):
            np.add.at(row_outside, bad.row, bad.lanes)
            cell, which = bad.expanded()
            acc.add_outside(rows.site[bad.row[which]], cell, rows.program[bad.row[which]])
    m = acc.finish(g)
    outside = int(row_outside[selected].sum())
    masked = int((rows.lanes[selected] - rows.active[selected]).sum())
    flags = m["flags"]
    stats = {
        "rows": int(len(selected)),
        "lanes": int(rows.active[selected].sum()),
        "masked_lanes": masked,
        "outside_lanes": outside,
        "bytes": int(rows.nbytes[selected].sum()),
        "cells_read": int(np.count_nonzero(flags & F_READ)),
        "cells_written": int(np.count_nonzero(flags & F_WRITE)),
        "conflict_cells": int(np.count_nonzero(flags & F_CONFLICT)),
        "multiwrite_cells": int(np.count_nonzero(flags & F_MULTIWRITE)),
        "outside_cells": int(np.count_nonzero(flags & F_OUTSIDE)),
        "untouched_cells": int(
            np.count_nonzero(((flags & F_INSIDE) != 0) & ((flags & (F_READ | F_WRITE)) == 0))
        ),
    }
    return TensorMap(
        int(arg.get("index", 0)),
        str(arg["name"]),
        str(arg.get("dtype", "")),
        g,
        sites=sites,
        stats=stats,
        **m,
    )


def _program_chunks(rows: Rows, order: np.ndarray, max_lanes: int):
    """Row indices (sorted by program) cut at program boundaries into pieces of about ``max_lanes``."""
    if not len(order):
        return
    programs = rows.program[order]
    lanes = np.cumsum(rows.lanes[order])
    starts = np.flatnonzero(np.r_[True, programs[1:] != programs[:-1]])  # first row of each program
    start = 0
    while start < len(order):
        budget = (lanes[start - 1] if start else 0) + max_lanes
        stop = int(np.searchsorted(lanes, budget, side="right"))
        cut = (
            int(starts[np.searchsorted(starts, stop, side="right") - 1]) if stop < len(order) else len(order)
        )
        if cut <= start:  # one program alone exceeds the budget: take the whole program
            nxt = np.searchsorted(starts, start, side="right")
            cut = int(starts[nxt]) if nxt < len(starts) else len(order)
        yield order[start:cut]
        start = cut


class _Accumulator:
    """Per-cell layers and footprint runs, added to program chunk by program chunk."""

    def __init__(self, cells: int, sites: int = 1):
        self.cells = cells
        self.sites = sites
        self.site_runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.owner_write = np.full(cells, _NONE, dtype=np.int32)
        self.owner_any = np.full(cells, _NONE, dtype=np.int32)
        self.writers = np.zeros(cells, dtype=np.uint32)
        self.readers = np.zeros(cells, dtype=np.uint32)
        self.touchers = np.zeros(cells, dtype=np.uint32)
        self.flags = np.zeros(cells, dtype=np.uint8)
        self.runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.outside: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.outside_kept = 0

    def add(
        self, program: np.ndarray, seg: Segments, atomic: np.ndarray, site_index: np.ndarray | None = None
    ) -> None:
        """Segments of whole programs (no program appears in two calls; ``program`` per segment);
        ``atomic`` marks an atomic's accesses; ``site_index`` per segment when more than one site
        touches the tensor, for per-site footprints."""
        program = program.astype(np.int64)
        end = seg.start + seg.cells
        group, start, length = _union(program * 4 + seg.cls, seg.start, end, self.cells)
        self.runs.append((group.astype(np.int32), start.astype(np.int32), length.astype(np.int32)))
        prog_u, cls_u = group >> 2, group & 3
        for which, layer, bit in ((READ, self.readers, F_READ), (WRITE, self.writers, F_WRITE)):
            hit = cls_u == which
            count = _coverage(start[hit], length[hit], self.cells)
            layer += count.astype(np.uint32)
            self.flags[count > 0] |= bit
        for which, bit in ((MASKED, F_MASKED), (OUTSIDE, F_OUTSIDE)):
            hit = cls_u == which
            if hit.any():
                self.flags[_coverage(start[hit], length[hit], self.cells) > 0] |= bit
        if atomic.any():
            self.flags[_coverage(seg.start[atomic], seg.cells[atomic], self.cells) > 0] |= F_ATOMIC
        accessed = cls_u <= WRITE  # distinct programs that read or wrote a cell
        s, n = start[accessed], length[accessed]
        _, s, n = _union(prog_u[accessed], s, s + n, self.cells)
        self.touchers += _coverage(s, n, self.cells).astype(np.uint32)
        w = cls_u == WRITE
        _minimum_over(self.owner_write, start[w], length[w], prog_u[w])
        a = (cls_u == READ) | (cls_u == OUTSIDE)
        _minimum_over(self.owner_any, start[a], length[a], prog_u[a])
        if site_index is not None:
            grouped = (program * self.sites + site_index) * 4 + seg.cls
            g, s, n = _union(grouped, seg.start, end, self.cells)
            self.site_runs.append((g.astype(np.int32), s.astype(np.int32), n.astype(np.int32)))

    def add_outside(self, site: np.ndarray, cell: np.ndarray, program: np.ndarray) -> None:
        """Enabled lanes outside the tensor, for a finding's picture (capped): per (site, cell), the
        lowest program."""
        if self.outside_kept >= _OUTSIDE_CAP:
            return
        key = site.astype(np.int64) * self.cells + cell
        order = np.lexsort((program, key))
        key = key[order]
        keep = np.r_[True, key[1:] != key[:-1]]
        keys, first = key[keep], order[keep]
        keys, first = keys[: _OUTSIDE_CAP - self.outside_kept], first[: _OUTSIDE_CAP - self.outside_kept]
        s, c = np.divmod(keys, self.cells)
        self.outside.append((s.astype(np.int32), c.astype(np.int32), program[first].astype(np.int32)))
        self.outside_kept += len(keys)

    def finish(self, g: Geometry) -> dict:
        """The layers, runs and outside pairs as the fields of a :class:`TensorMap`."""
        owner = np.where(
            self.owner_write != _NONE, self.owner_write, np.where(self.owner_any != _NONE, self.owner_any, -1)
        ).astype(np.int32)
        flags = self.flags
        flags[(self.touchers > 1) & (self.writers >= 1)] |= F_CONFLICT
        flags[self.writers > 1] |= F_MULTIWRITE
        flags[g.inside_cells()] |= F_INSIDE
        empty = np.zeros(0, np.int32)
        runs = [np.concatenate(parts) for parts in zip(*self.runs, strict=True)] if self.runs else [empty] * 3
        outside = _merge_outside(self.outside, self.cells)
        site_runs = [np.concatenate(p) for p in zip(*self.site_runs, strict=True)] if self.site_runs else None
        return {
            "site_runs_group": site_runs[0] if site_runs else None,
            "site_runs_start": site_runs[1] if site_runs else None,
            "site_runs_length": site_runs[2] if site_runs else None,
            "owner": owner,
            "writers": np.minimum(self.writers, 255).astype(np.uint8),
            "readers": np.minimum(self.readers, 255).astype(np.uint8),
            "flags": flags,
            "runs_group": runs[0],
            "runs_start": runs[1],
            "runs_length": runs[2],
            "outside_site": outside[0],
            "outside_cell": outside[1],
            "outside_program": outside[2],
        }


def _union(
    group: np.ndarray, start: np.ndarray, end: np.ndarray, cells: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group, the union of the cell ranges ``[start, end)`` as maximal runs of consecutive
    cells: (group, start, length), sorted by group then start (touching ranges join)."""
    if not len(group):
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    order = np.lexsort((start, group))
    group, start, end = group[order], start[order], end[order]
    span = np.int64(cells + 1)  # group * span + cell orders (group, cell): one running maximum for all
    reach = np.maximum.accumulate(group * span + end)
    first = np.flatnonzero(np.r_[True, group[1:] * span + start[1:] > reach[:-1]])
    return group[first], start[first], np.maximum.reduceat(end, first) - start[first]


def _coverage(start: np.ndarray, length: np.ndarray, cells: int) -> np.ndarray:
    """Per cell, how many of the ranges ``[start, start + length)`` cover it."""
    if not len(start):
        return np.zeros(cells, np.int64)
    edges = np.bincount(start, minlength=cells + 1) - np.bincount(start + length, minlength=cells + 1)
    return np.cumsum(edges[:cells])


def _minimum_over(layer: np.ndarray, start: np.ndarray, length: np.ndarray, value: np.ndarray) -> None:
    """``layer[c] = min(layer[c], v)`` for every cell ``c`` of each range ``[start, start + length)``."""
    if not len(start):
        return
    # many programs cover the same range (a tile of A read by a whole row of tiles): keep its lowest
    key = start * np.int64(len(layer) + 1) + length
    order = np.lexsort((value, key))
    key = key[order]
    keep = order[np.r_[True, key[1:] != key[:-1]]]
    start, length, value = start[keep], length[keep], value[keep]
    owner = np.repeat(np.arange(len(start)), length)
    first = np.cumsum(length) - length
    cells = start[owner] + np.arange(len(owner)) - first[owner]
    np.minimum.at(layer, cells, value[owner].astype(layer.dtype))


def _merge_outside(parts, cells: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not parts:
        empty = np.zeros(0, np.int32)
        return empty, empty, empty
    site, cell, program = (np.concatenate(p) for p in zip(*parts, strict=True))
    order = np.lexsort((program, cell, site))
    site, cell, program = site[order], cell[order], program[order]
    first = np.r_[True, (site[1:] != site[:-1]) | (cell[1:] != cell[:-1])]
    return site[first], cell[first], program[first]


def program_runs(tmap: TensorMap, program: int) -> dict[str, list[int]]:
    """One program's footprint on ``tmap``: per class a flat list ``[start, length, start, length, ...]``."""
    lo, hi = np.searchsorted(tmap.runs_group, [program * 4, program * 4 + 4])
    out: dict[str, list[int]] = {name: [] for name in CLASSES}
    for g, s, n in zip(tmap.runs_group[lo:hi], tmap.runs_start[lo:hi], tmap.runs_length[lo:hi], strict=True):
        out[CLASSES[int(g) % 4]] += [int(s), int(n)]
    return out
