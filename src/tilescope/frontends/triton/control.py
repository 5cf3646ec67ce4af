"""Control flow of rewritten ``@triton.jit`` code: branches, ``for`` and ``while`` on the engine.

The rewrite (:mod:`rewrite`) turns every ``if`` into a :meth:`ControlFlow.branch` decision followed
by both sides guarded by ``then()``/``otherwise()``, and saves, restores and :meth:`merge`-s the
names the sides assign when the branch is predicated. Loops go through :meth:`loop` and
:meth:`loop_test`, and their bodies :meth:`keep` the names they assign for programs that left the
loop. The engine decides (``tilescope.engine.control``): uniform decisions run as plain Python,
divergent ones under per-program masks, or split and replayed where that is cheaper.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import triton.language as tl

from ...engine import control, dtypes, iterations
from ...engine.values import Value
from . import typemap, version


class _Undefined:
    """A name not bound (yet) on one side of a branch or before a loop."""

    def __repr__(self) -> str:
        return "UNDEF"


UNDEF = _Undefined()


class StaticRange:
    """``tl.static_range``: iterates Python ints (the compiler unrolls it)."""

    def __init__(self, *args):
        self.range = range(*args)


class DynRange:
    """``tl.range`` and Python ``range`` in kernel code: bounds may be Triton scalars (an scf.for loop)."""

    def __init__(self, *args):
        if len(args) == 1:
            args = (0, args[0])
        self.start, self.stop = args[0], args[1]
        self.step = args[2] if len(args) > 2 and args[2] is not None else 1


class LoopRun:
    """A loop with independent iterations as rewritten code sees it: whether its iterations run at
    once as rows of the batch (``vectorized``), and then the values of the names its body reads,
    one row per iteration (``expanded``)."""

    def __init__(self, iterator: Any, vectorized: bool, expanded: tuple = ()):
        self.iterator, self.vectorized, self.expanded = iterator, vectorized, expanded

    def __iter__(self) -> Any:
        return self.iterator


#: values that are the same in every row: nothing to expand
_PLAIN = (int, float, bool, str, type(None), tl.constexpr, tl.dtype)
_CANNOT = object()


def _expand(value: Any, rows: iterations.Rows, batch: int) -> Any:
    """``value`` with one row per loop row, or _CANNOT for a value not known here (a descriptor)."""
    if type(value) is tl.tensor and isinstance(value.handle, Value):
        return tl.tensor(iterations.expand(value.handle, rows, batch), value.type)
    if isinstance(value, tuple):
        parts = tuple(_expand(v, rows, batch) for v in value)
        return _CANNOT if any(p is _CANNOT for p in parts) else parts
    return value if isinstance(value, _PLAIN) else _CANNOT


def _induction_type(launch: Any, lo: np.ndarray, hi: np.ndarray, step: np.ndarray, trips: np.ndarray) -> Any:
    """The Triton type of a loop's induction variable, as the loop would get it run iteration by
    iteration: int32 when its bounds fit (the active programs' when they agree), else int64."""
    batch = launch.pids.shape[0]
    lo, hi, step = (np.broadcast_to(v, (batch,)) for v in (lo, hi, step))
    rows = slice(None) if launch.active is None else launch.active
    if all(np.all(v[rows] == v[rows][0]) for v in (lo, hi, step)):
        first = int(np.flatnonzero(launch.active)[0]) if launch.active is not None else 0
        fits = all(-(2**31) <= int(v[first]) < 2**31 for v in (lo, hi, step))
        return tl.int32 if fits else tl.int64
    top = max(abs(int(lo.min())), abs(int(lo.max())), abs(int((lo + trips * step).max())))
    return tl.int32 if top < 2**31 else tl.int64


class _Uniform:
    """The decision of a branch every active program agrees on."""

    predicated = False

    def __init__(self, taken: bool):
        self.taken = taken

    def then(self) -> bool:
        return self.taken

    def otherwise(self) -> bool:
        return not self.taken

    def done(self) -> None:
        pass


class _Predicated:
    """A branch the batch disagrees on: both sides run, each under its programs' mask."""

    predicated = True

    def __init__(self, branch: control.Branch):
        self.branch = branch

    def then(self) -> bool:
        self.branch.then()
        return True

    def otherwise(self) -> bool:
        self.branch.otherwise()
        return True

    def done(self) -> None:
        self.branch.done()


def _scalar(data: Any) -> np.ndarray:
    """A loop bound as per-program integers."""
    if isinstance(data, tl.tensor):
        return data.handle.data.reshape(data.handle.data.shape[0], -1)[:, 0]
    return np.asarray([int(version.unwrap(data))], dtype=np.int64)


class ControlFlow:
    """The control-flow half of the ``__tilescope__`` runtime (mixed into it)."""

    UNDEF = UNDEF
    launch: Any
    semantic: Any
    sites: Any

    # ------------------------------------------------------------------ if

    def branch(self, cond: Any, line: int, column: int, predicable: bool) -> _Uniform | _Predicated:
        """The batch's decision at an ``if`` (``predicable``: no ``return`` under it)."""
        if not isinstance(cond, tl.tensor):
            return _Uniform(bool(version.unwrap(cond)))
        site = self.sites.frame_site(sys._getframe(1))
        decided = control.branch(self.launch, cond.handle.data, site, predicable)
        return _Uniform(decided) if isinstance(decided, bool) else _Predicated(decided)

    def merge(self, branch: _Predicated, then_value: Any, else_value: Any) -> Any:
        """A name after a predicated ``if``: each program's value from the side it took."""
        return self._select(branch.branch.taken, then_value, else_value, branch.branch.outer)

    def _select(self, cond: np.ndarray, a: Any, b: Any, among: np.ndarray | None) -> Any:
        """Per program ``a`` where ``cond`` holds, else ``b``; values that cannot be selected per program
        split the programs ``among`` (those active where the branch or loop began) by ``cond``."""
        if a is UNDEF:
            return b
        if b is UNDEF or a is b:
            return a
        if isinstance(a, tl.tensor) and isinstance(b, tl.tensor) and a.type == b.type:
            return tl.tensor(control.select_programs(self.launch, cond, a.handle, b.handle), a.type)
        if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
            return tuple(self._select(cond, x, y, among) for x, y in zip(a, b, strict=True))
        if type(a) is type(b) and not isinstance(a, tl.tensor):
            try:
                if a == b:
                    return a
            except Exception:  # noqa: BLE001 - a value without equality: not mergeable
                pass
        # values that differ per program but cannot be selected per program: split and replay
        raise control.divergence(cond, self.sites.find(), among)

    # ------------------------------------------------------------------ loops

    def range(self, *args: Any) -> DynRange:
        """``range(...)`` in kernel code: its bounds may be Triton scalars that differ per program."""
        return DynRange(*args)

    def freezing(self) -> bool:
        """True when the innermost loop runs for only some of the programs that entered it."""
        loops = self.launch.loops
        return bool(loops) and loops[-1].freeze is not None

    def keep(self, old: Any, new: Any) -> Any:
        """A name a loop body assigned: its new value for programs still in the loop, else the old."""
        frame = self.launch.loops[-1]
        if frame.freeze is None:
            return new
        return self._select(frame.freeze, new, old, frame.entry_active)

    def loop(self, iterable: Any, line: int, column: int, free: tuple | None = None) -> Any:
        """A ``for`` loop: iterations tracked for reports; induction variables are Triton ints.

        When the bounds differ between programs, each iteration runs for the programs whose range
        holds it, and each program sees its own induction value. ``free`` is given for a loop whose
        iterations are independent (the values of the local names its body reads): its iterations
        may run at once, as rows of the batch (a :class:`LoopRun`).
        """
        if isinstance(iterable, range):
            iterable = DynRange(iterable.start, iterable.stop, iterable.step)
        elif isinstance(iterable, tl.range):
            iterable = DynRange(iterable.start, iterable.end, iterable.step)
        if free is None:
            return self._loop(iterable)
        run = self._as_rows(iterable, free) if isinstance(iterable, DynRange) else None
        return run if run is not None else LoopRun(self._loop(iterable), False)

    def _as_rows(self, iterable: DynRange, free: tuple) -> LoopRun | None:
        """An independent loop run as rows of the batch, or None when it runs iteration by iteration."""
        launch = self.launch
        if launch.rows is not None or launch.scheduler is not None or launch.options.mode != "batched":
            return None
        site = self.sites.frame_site(sys._getframe(2))
        if site in launch.serial_loops:
            return None
        lo, hi, step = (_scalar(v) for v in (iterable.start, iterable.stop, iterable.step))
        rows = iterations.plan(launch, lo, hi, step)
        if rows is None:
            return None
        batch = launch.pids.shape[0]
        expanded = tuple(_expand(v, rows, batch) for v in free)
        if any(v is _CANNOT for v in expanded):
            return None
        ty = _induction_type(launch, lo, hi, step, rows.trips)
        return LoopRun(self._rows(launch, site, rows, ty), True, expanded)

    def _rows(self, launch: Any, site: Any, rows: iterations.Rows, ty: Any):
        frame = launch.loop_enter(site)
        region = iterations.enter(launch, frame, rows)
        engine_ty = typemap.to_engine(ty)
        yield tl.tensor(Value(rows.induction.astype(engine_ty.storage), engine_ty, None), ty)
        iterations.leave(launch, region)
        launch.loop_exit(frame, last=np.maximum(rows.trips - 1, 0))

    def _loop(self, iterable: Any):
        launch = self.launch
        if not isinstance(iterable, (StaticRange, DynRange)):
            yield from iterable
            return
        site = self.sites.frame_site(sys._getframe(1))
        if isinstance(iterable, StaticRange):
            yield from self._uniform(launch, site, iterable.range, as_tensor=False)
            return
        lo, hi, step = (_scalar(v) for v in (iterable.start, iterable.stop, iterable.step))
        plan = control.loop_plan(launch, lo, hi, step, site)
        if plan is None:
            rows = np.flatnonzero(launch.active)[0] if launch.active is not None else 0
            bounds = (int(v[min(rows, v.shape[0] - 1)]) for v in (lo, hi, step))
            yield from self._uniform(launch, site, range(*bounds), as_tensor=True)
            return
        yield from self._predicated(launch, site, plan)

    def _uniform(self, launch: Any, site: Any, r: range, as_tensor: bool):
        fits32 = all(-(2**31) <= v < 2**31 for v in (r.start, r.stop, r.step))
        frame = launch.loop_enter(site)
        try:
            for i, v in enumerate(r):
                launch.loop_iterate(frame, i)
                if as_tensor:
                    yield self.semantic.scalar_constant(v, tl.int32 if fits32 else tl.int64)
                else:
                    yield v
        finally:
            launch.loop_exit(frame)

    def _predicated(self, launch: Any, site: Any, plan: control.LoopPlan):
        batch = launch.pids.shape[0]
        entry = launch.active if launch.active is not None else np.ones(batch, dtype=bool)
        top = max(
            abs(int(plan.lo.min())),
            abs(int(plan.lo.max())),
            abs(int((plan.lo + plan.trips * plan.step).max())),
        )
        ty = tl.int32 if top < 2**31 else tl.int64
        frame = launch.loop_enter(site)
        outer = frame.entry_active = launch.active
        launch.push_active(None)
        try:
            for k in range(plan.iterations):
                if k == 0:
                    entered = (launch.ops, launch.work)
                elif k == 1:  # counted from the second: the first may run ops the others do not
                    started = (launch.ops, launch.work)
                elif k == 2 and plan.iterations > 3:
                    iteration = (launch.ops - started[0], launch.work - started[1])
                    prefix = control.cost(entered[0] - launch.started[0], entered[1] - launch.started[1])
                    control.rebucket(launch, plan, outer, site, iteration, prefix)
                running = entry & (k < plan.trips)
                launch.active = None if outer is None and running.all() else running
                frame.freeze = None if np.array_equal(running, entry) else running
                launch.loop_iterate(frame, k)
                data = plan.induction(k).astype(typemap.to_engine(ty).storage)
                yield tl.tensor(Value(data, typemap.to_engine(ty), None), ty)
        finally:
            launch.pop_active()
            launch.loop_exit(frame, last=np.maximum(plan.trips - 1, 0))

    def loop_test(self, test: Any, line: int, column: int) -> bool:
        """A ``while`` condition. Iteration i's test counts as iteration i.

        Programs whose condition fails leave the loop; the others go on under a mask until none is
        left. A loop that waits on memory another program writes switches the batch to concurrent
        execution after ``spin_limit`` iterations.
        """
        launch = self.launch
        frame = launch.innermost_loop((line, column))
        if frame is None:
            frame = launch.loop_enter(self.sites.frame_site(sys._getframe(1)), (line, column))
            frame.entry_active = launch.active
            launch.push_active(None)
            iteration = 0
        else:
            iteration = frame.iteration + 1
        launch.loop_iterate(frame, iteration, event=False)  # the test of iteration i runs in iteration i
        launch.yield_point(idle=False)
        cond = test()
        if isinstance(cond, tl.tensor):
            taken = control.per_program(launch, cond.handle.data).astype(bool)
        else:
            taken = np.full(launch.pids.shape[0], bool(version.unwrap(cond)))
        running = launch.active if launch.active is not None else np.ones(taken.shape[0], dtype=bool)
        still = running & taken
        if not still.any():
            launch.pop_active()
            launch.loop_exit(frame)
            return False
        entry = frame.entry_active if frame.entry_active is not None else np.ones(taken.shape[0], dtype=bool)
        if not np.array_equal(still, running):
            control.compact_loop(launch, frame, still, entry)
            launch.active = still
        frame.freeze = None if np.array_equal(still, entry) else still
        launch.loop_iterate(frame, iteration)
        launch.while_iteration(frame)
        return True


__all__ = ["ControlFlow", "DynRange", "StaticRange", "UNDEF", "dtypes"]
