"""Divergent control flow by predication: the batch stays together under a per-program active mask.

When the programs of a batch disagree at a branch, both sides run once for the whole batch, each
under the mask of the programs that take it, and the values the branches assign are merged per
program (:class:`Branch`). A loop whose trip count differs between programs runs as many
iterations as its longest program; each iteration runs for the programs still inside it, and the
values the loop carries are frozen for the programs that left (:func:`loop_plan`,
:meth:`Launch.loop_step`). Memory ops, asserts and prints of masked-off programs never happen and
never reach clients. This is what SIMT hardware, ISPC and JAX's batched ``while_loop`` do.

Splitting the batch by decision and replaying each group (:class:`~.errors.Divergence`) remains
where it is cheaper or where predication cannot express the control flow (a ``return`` under a
divergent branch): a branch taken by very few programs of a large batch, and a loop whose trip
counts are so skewed that most iterations would run almost empty (the batch is then split into
buckets of similar trip counts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Node
from . import dtypes
from .errors import Divergence
from .ops import Op, apply
from .values import Value

#: a branch whose smaller side has fewer programs than this fraction of a batch of at least
#: SPLIT_MIN_BATCH programs is split and replayed rather than predicated
SPLIT_FRACTION = 1 / 256
SPLIT_MIN_BATCH = 1024
#: a while loop whose running programs fall below this fraction of those that entered it, after
#: COMPACT_AFTER iterations in a batch of at least COMPACT_MIN_BATCH programs, is split: the rest
#: of the batch stops paying for the few programs still iterating
COMPACT_FRACTION = 1 / 8
COMPACT_AFTER = 16
COMPACT_MIN_BATCH = 128
#: a loop whose predicated iterations would be more than this many times the useful ones is
#: split into buckets of similar trip count (when the batch has at least BUCKET_MIN_BATCH programs)
BUCKET_WASTE = 4.0
BUCKET_MIN_BATCH = 64
#: CPU seconds an engine op costs whatever its size (Python dispatch; measured on the benchmark
#: machine): the part of a predicated iteration that groups of fewer programs do not shrink
OP_SECONDS = 70e-6
#: CPU seconds per element an op computes or moves (``Launch.work``), the part of an iteration that
#: grows with its programs (measured on the benchmark machine: varlen attention, paged decode)
ELEMENT_SECONDS = 1e-9
#: after its first iteration, a predicated loop is split into groups of similar trip count when
#: that (replays included) is predicted to cost less than this fraction of running on together
BUCKET_GAIN = 0.95


def per_program(launch: Any, data: np.ndarray) -> np.ndarray:
    """One decision value per program of the batch (the first lane of each row), as a (B,) array."""
    flat = data.reshape(data.shape[0], -1)[:, 0] if data.ndim > 1 else data.reshape(-1)
    batch = launch.pids.shape[0]
    return np.broadcast_to(flat, (batch,)) if flat.shape[0] != batch else flat


def divergence(decisions: np.ndarray, site: Any, among: np.ndarray | None) -> Divergence:
    """The signal that splits the batch by ``decisions`` of the programs in ``among`` (None: all); the
    others join the first group.

    ``among`` is the set of programs that disagree: the active ones at a branch or loop bound, and,
    for a value merged after a predicated branch or loop, the ones active where it began (inside it
    only one side's programs are active, and they agree).
    """
    if among is not None:
        first = decisions[np.flatnonzero(among)[0]]
        decisions = np.where(among, decisions, first)
    return Divergence(np.asarray(decisions), site)


@dataclass(repr=False, eq=False)
class Branch:
    """A branch the active programs of a batch disagree on; ``taken`` is the (B,) condition and
    ``outer`` the programs active where the branch began (None: all)."""

    launch: Any
    taken: np.ndarray
    outer: np.ndarray | None

    def then(self) -> None:
        """Run what follows for the programs that take the branch."""
        self.launch.push_active(self.taken)

    def otherwise(self) -> None:
        """Run what follows for the programs that do not."""
        self.launch.pop_active()
        self.launch.push_active(~self.taken)

    def done(self) -> None:
        """Both sides ran: back to the programs active before the branch."""
        self.launch.pop_active()

    def merge(self, then_value: Value, else_value: Value) -> Value:
        """A value assigned on both sides: each program's from the side it took."""
        return select_programs(self.launch, self.taken, then_value, else_value)


def branch(launch: Any, data: np.ndarray | bool, site: Any, predicable: bool = True) -> bool | Branch:
    """The decision of an ``if``: a bool when every active program agrees, else a :class:`Branch`.

    Raises :class:`~.errors.Divergence` (split and replay) when the branch cannot be predicated
    (``predicable=False``) or when splitting is cheaper.
    """
    if not isinstance(data, np.ndarray):
        return bool(data)
    taken = per_program(launch, data).astype(bool)
    active = launch.active
    considered = taken if active is None else taken[active]
    if considered.size == 0 or considered.all():
        return True
    if not considered.any():
        return False
    if not predicable or _cheaper_to_split(considered):
        raise divergence(taken, site, active)
    return Branch(launch, taken, active)


def _cheaper_to_split(taken: np.ndarray) -> bool:
    minority = min(int(taken.sum()), int((~taken).sum()))
    return taken.size >= SPLIT_MIN_BATCH and minority < SPLIT_FRACTION * taken.size


def select_programs(launch: Any, cond: np.ndarray, a: Value, b: Value) -> Value:
    """Per program: ``a`` where ``cond`` holds, else ``b`` (same type and shape).

    Bookkeeping, not the kernel's work: no compute record, and the result's graph node has no
    site of its own (explanations walk on to both sides' sources).
    """
    shape = a.shape
    mask = Value(cond.reshape(-1, *([1] * len(shape))), dtypes.BOOL, None)
    if shape:
        mask = apply(launch, Op.BROADCAST, mask, shape=tuple(shape), record=False)
    merged = apply(launch, Op.SELECT, mask, a, b, record=False)
    merged.node = Node("merge", None, tuple(v.node for v in (a, b) if v.node is not None))
    return merged


@dataclass(repr=False, eq=False)
class LoopPlan:
    """How a loop with per-program bounds runs: ``trips`` per program, ``lo`` and ``step`` per program."""

    trips: np.ndarray  # (B,) int64
    lo: np.ndarray  # (B,) int64
    step: np.ndarray  # (B,) int64

    @property
    def iterations(self) -> int:
        """Iterations the batch runs (its longest program's)."""
        return int(self.trips.max()) if self.trips.size else 0

    def induction(self, k: int) -> np.ndarray:
        """Each program's induction value in iteration ``k``."""
        return self.lo + k * self.step


def loop_plan(launch: Any, lo: Any, hi: Any, step: Any, site: Any) -> LoopPlan | None:
    """The plan of a ``for`` loop whose bounds differ between the active programs (None: they agree).

    Raises :class:`~.errors.Divergence` to split the batch into buckets of similar trip count when
    one predicated pass would waste more than ``BUCKET_WASTE`` times the useful iterations.
    """
    batch = launch.pids.shape[0]
    values = [np.broadcast_to(np.asarray(v, dtype=np.int64).reshape(-1), (batch,)) for v in (lo, hi, step)]
    lo_p, hi_p, step_p = values
    active = launch.active
    rows = slice(None) if active is None else active
    if all(np.all(v[rows] == v[rows][0]) for v in values if v[rows].size):
        return None
    if np.any(step_p[rows] == 0):
        raise ValueError("range() step must not be zero")
    span = np.where(step_p > 0, hi_p - lo_p, lo_p - hi_p)
    trips = np.maximum(0, -(-span // np.abs(step_p)))
    if active is not None:
        trips = np.where(active, trips, 0)
    plan = LoopPlan(trips, lo_p, step_p)
    live = trips[rows]
    useful = int(live.sum())
    if live.size >= BUCKET_MIN_BATCH and useful and plan.iterations * live.size > BUCKET_WASTE * useful:
        buckets = trip_buckets(trips)
        if np.unique(buckets[rows]).size > 1:
            raise divergence(buckets, site, launch.active)
    return plan


def trip_buckets(trips: np.ndarray) -> np.ndarray:
    """Each program's bucket of similar trip count (0, 1, 2-3, 4-7, ...)."""
    return np.floor(np.log2(trips + 1)).astype(np.int64)


def cost(ops: int, work: int) -> float:
    """Predicted CPU seconds of ``ops`` engine ops computing ``work`` elements (see ``Launch.work``)."""
    return ops * OP_SECONDS + work * ELEMENT_SECONDS


def rebucket(
    launch: Any,
    plan: LoopPlan,
    among: np.ndarray | None,
    site: Any,
    iteration: tuple[int, int],
    prefix: float,
) -> None:
    """Split the batch into groups of similar trip count (a :class:`~.errors.Divergence`) when, by
    the counts of the second iteration (``iteration``: its engine ops and the elements they computed
    over the whole batch), running the groups apart (each replaying the attempt before the loop, of
    ``prefix`` predicted seconds) is predicted clearly cheaper than running the remaining iterations
    together.

    The cost of an iteration is a fixed part (its ops times :data:`OP_SECONDS`) plus a part
    proportional to the programs it computes (its elements times :data:`ELEMENT_SECONDS`): a loop
    over large blocks (attention tiles) gains from groups, a loop of many small ops does not. The
    prediction is made from counts, not a clock, so a kernel on the same inputs gets the same plan
    in every run. The groups are buckets of similar trip count (0, 1, 2-3, 4-7, ...) or, where
    clearly cheaper still, the exact trip counts.
    """
    ops, work = iteration
    fixed = ops * OP_SECONDS
    per_program = work * ELEMENT_SECONDS / launch.pids.shape[0]
    best, best_cost = None, BUCKET_GAIN * (plan.iterations - 2) * (fixed + per_program * launch.pids.shape[0])
    for groups in (trip_buckets(plan.trips), plan.trips):
        kinds = np.unique(groups if among is None else groups[among])
        if kinds.size < 2:
            continue
        total = prefix * kinds.size
        for g in kinds:
            members = groups == g if among is None else (groups == g) & among
            total += int(plan.trips[members].max()) * (fixed + per_program * int(members.sum()))
        if total < best_cost:
            best, best_cost = groups, BUCKET_GAIN * total
    if best is not None:
        raise divergence(best, site, among)


def compact_loop(launch: Any, frame: Any, still: np.ndarray, entry: np.ndarray) -> None:
    """Split the batch (done vs still iterating) when few of a while loop's programs are left."""
    entered = int(entry.sum())
    if (
        entered >= COMPACT_MIN_BATCH
        and frame.iteration >= COMPACT_AFTER
        and int(still.sum()) < COMPACT_FRACTION * entered
    ):
        raise divergence(still.astype(np.int8), frame.site, launch.active)
