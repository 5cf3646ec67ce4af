"""Independent loop iterations as rows of the batch: every iteration of every program in one pass.

A loop whose iterations share no value (the frontend proves that from the source: nothing the
body assigns is read before it is assigned in the same iteration, or after the loop) need not run
one iteration at a time. Its body runs once, for a batch whose rows are the (program, iteration)
pairs: row ``r`` is iteration ``iteration[r]`` of program ``program[r]``, values from before the
loop get one row per iteration, and programs with fewer iterations simply have fewer rows. An MoE
layer's loop over an expert's row blocks, whose trip count is skewed across experts, then costs
one pass instead of as many as the largest expert has blocks, with no predicated waste.

What the programs see is unchanged: records, loop events and faults are split by iteration and
carry the programs' own ids and the iteration in ``loops``, as if the loop had run iteration by
iteration. Iterations may still meet through memory (one stores what a later one loads): every
access's per-row byte range is kept, and when two iterations of one program touch overlapping
bytes of a storage the loop writes, or the loop runs an atomic, the attempt is abandoned
(:class:`LoopRowsConflict`) and the loop runs iteration by iteration from then on. The same
happens when a decision inside the loop would split the batch, or a value grows past the budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .affine import Affine, Predicate
from .contraction import Product
from .errors import EngineSignal
from .values import Value

#: a loop runs as rows only up to this many rows (a value too large for the budget falls back too)
MAX_ROWS = 16384


class LoopRowsConflict(EngineSignal):
    """The iterations of a loop run as rows cannot run at once: run the loop iteration by iteration."""

    def __init__(self, site: Any):
        super().__init__("loop rows conflict")
        self.site = site


@dataclass(repr=False, eq=False)
class Rows:
    """A loop's iterations as rows: row ``r`` is iteration ``iteration[r]`` of program ``program[r]``
    (an index into the batch), with induction value ``induction[r]``; ``trips`` per program."""

    program: np.ndarray
    iteration: np.ndarray
    induction: np.ndarray
    trips: np.ndarray

    def groups(self) -> list[tuple[int, np.ndarray]]:
        """(iteration, its rows) for every iteration some program runs, rows as index arrays."""
        order = np.argsort(self.iteration, kind="stable")
        bounds = np.searchsorted(self.iteration[order], np.arange(int(self.trips.max()) + 1))
        return [(k, order[bounds[k] : bounds[k + 1]]) for k in range(len(bounds) - 1)]


def plan(launch: Any, lo: np.ndarray, hi: np.ndarray, step: np.ndarray) -> Rows | None:
    """The rows of a ``range(lo, hi, step)`` loop (per-program bounds) for the active programs, or
    None when running them at once gains nothing or would take too many rows."""
    batch = launch.pids.shape[0]
    lo, hi, step = (
        np.broadcast_to(np.asarray(v, dtype=np.int64).reshape(-1), (batch,)) for v in (lo, hi, step)
    )
    if np.any(step == 0):
        return None  # the iteration-by-iteration path raises the user's error
    span = np.where(step > 0, hi - lo, lo - hi)
    trips = np.maximum(0, -(-span // np.abs(step)))
    if launch.active is not None:
        trips = np.where(launch.active, trips, 0)
    total = int(trips.sum())
    if trips.max(initial=0) < 2 or total > MAX_ROWS:
        return None
    program = np.repeat(np.arange(batch), trips)
    first = np.repeat(np.cumsum(trips) - trips, trips)
    iteration = np.arange(total, dtype=np.int64) - first
    return Rows(program, iteration, lo[program] + iteration * step[program], trips)


def expand(value: Value, rows: Rows, batch: int) -> Value:
    """``value`` with one row per loop row (a value the same for every program stays as it is)."""
    if batch == 1 or value.is_skipped:
        return value
    take = rows.program

    def per_row(a: np.ndarray | None) -> np.ndarray | None:
        return a[take] if a is not None and a.ndim and a.shape[0] == batch else a

    lazy = value.lazy
    if isinstance(lazy, Affine):
        lazy = Affine(per_row(lazy.scalar), lazy.block)
    elif isinstance(lazy, Predicate):
        lazy = Predicate(lazy.uniform, [(m, op, per_row(t)) for m, op, t in lazy.terms])
    out = Value(per_row(value._data), value.dtype, value.node, value.prov, None, per_row(value.wrapped), lazy)
    out.attr = value.attr
    out._shape = value._shape
    if value.product is not None:
        old = value.product
        product = Product.__new__(Product)
        product.a, product.b, product.dtype, product.uses = (
            per_row(old.a),
            per_row(old.b),
            old.dtype,
            old.uses,
        )
        product._left, product._right = old._left, old._right
        out.product = product
    return out


@dataclass(repr=False, eq=False)
class Region:
    """A loop running as rows: what the batch was before, and each row's byte ranges by storage."""

    site: Any
    rows: Rows
    pids: np.ndarray
    groups: list[tuple[int, np.ndarray]]
    frame: Any
    touched: dict = field(default_factory=dict)  # storage key -> [lo (R,), hi (R,), written]


def enter(launch: Any, frame: Any, rows: Rows) -> Region:
    """Make the batch the loop's rows (after ``launch.loop_enter``); each iteration's event is sent
    now, for the programs that run it."""
    if launch.hub.wants_loops:
        outer = launch.active
        for k in range(int(rows.trips.max())):
            launch.active = rows.trips > k
            launch.loop_iterate(frame, k)
        launch.active = outer
    frame.iteration = 0
    region = Region(frame.site, rows, launch.pids, rows.groups(), frame)
    launch.push_active(None)
    launch.pids = launch.pids[rows.program]
    launch.active = None
    launch.rows = region
    return region


def leave(launch: Any, region: Region) -> None:
    """Back to the programs' batch after the body ran; raises :class:`LoopRowsConflict` when two
    iterations of one program touched the same bytes of a storage the loop wrote."""
    for lo, hi, written in region.touched.values():
        if written and _overlap(region.rows.program, lo, hi):
            raise LoopRowsConflict(region.site)
    launch.rows = None
    launch.pids = region.pids
    launch.pop_active()


def note_access(launch: Any, key: Any, lo: np.ndarray, hi: np.ndarray, written: bool) -> None:
    """Keep one access's per-row byte range [lo, hi] (broadcast to the rows) in ``key``'s storage."""
    region = launch.rows
    count = region.rows.program.shape[0]
    lo, hi = np.broadcast_to(lo, (count,)), np.broadcast_to(hi, (count,))
    seen = region.touched.get(key)
    if seen is None:
        region.touched[key] = [lo, hi, written]
    else:
        seen[0], seen[1], seen[2] = np.minimum(seen[0], lo), np.maximum(seen[1], hi), seen[2] or written


def _overlap(program: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> bool:
    """Whether two rows of one program have overlapping [lo, hi] ranges (empty ranges: lo > hi)."""
    used = lo <= hi
    program, lo, hi = program[used], lo[used], hi[used]
    order = np.lexsort((lo, program))
    program, lo, hi = program[order], lo[order], hi[order]
    # sorted by start within each program: some pair overlaps iff some neighbour pair does
    return bool(np.any((program[1:] == program[:-1]) & (lo[1:] <= hi[:-1])))
