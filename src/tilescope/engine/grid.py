"""Grid execution: every program of a launch in one batched pass, split and replayed on divergence.

A launch runs as a queue of *attempts*, each a batch of program ids. An attempt runs the kernel
once with a leading program axis on every value. When programs of the batch disagree at a branch
or loop bound, the attempt is abandoned (its writes undone, its events dropped) and its programs are
re-queued in groups that agree; when a demand-driven run skipped a value that turns out to be
needed, the attempt is redone with that operation computed; when one value would exceed the memory
budget, the batch is halved. Serial mode is the same executor with batches of one program;
concurrent mode runs programs interleaved on a seeded schedule (:mod:`concurrent`), from the start
or once a batch is found waiting for another program.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .concurrent import run_concurrent
from .errors import BatchTooLarge, Divergence, KernelError, NeedValues, SharedLoadWritten, WaitDetected
from .interrupts import interrupts_deferred
from .iterations import LoopRowsConflict
from .memory import BOUNDS

MAX_GRID = (2**31 - 1, 65535, 65535)
MODES = ("batched", "serial", "concurrent")


NUMERICS = ("gpu", "ideal")


@dataclass
class ExecutionOptions:
    """How to run a launch (every engine option a user can set, checked when made)."""

    mode: str = "batched"  # "batched", "serial" or "concurrent"
    batch_size: int = 4096  # programs per attempt at most (batched mode)
    value_budget_bytes: int = 512 * 2**20  # one value larger than this halves the batch
    compute_outputs: bool | None = None  # None: as the clients need; False: addresses and masks only
    spin_limit: int = 2_000  # uniform while-loop iterations before the batch is declared waiting
    seed: int = 0  # concurrent mode's schedule
    slots: int = 132  # programs in flight in concurrent mode (an H100/H200 has 132 SMs)
    bounds: str = "warn"  # how far a pointer may reach past its argument's view (memory.BOUNDS)
    schedules: int = 1  # > 1: run the launch that many times, concurrently, with seeds seed, seed + 1, ...
    numerics: str = "gpu"  # "gpu": the modelled GPU's bits (docs/numerics.md); "ideal": correctly rounded ops

    def __post_init__(self) -> None:
        _choice("mode", self.mode, MODES)
        _choice("bounds", self.bounds, BOUNDS)
        _choice("numerics", self.numerics, NUMERICS)
        for name in ("batch_size", "value_budget_bytes", "spin_limit", "slots", "schedules"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int; got {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"seed must be an int; got {self.seed!r}")
        if self.compute_outputs not in (None, True, False):
            raise ValueError(f"compute_outputs must be True, False or None; got {self.compute_outputs!r}")


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")


def program_ids(linear: np.ndarray, grid: tuple[int, int, int]) -> np.ndarray:
    """(B, 3) int32 program ids of linear program numbers (x fastest, as the GPU numbers them)."""
    gx, gy, _ = grid
    x = linear % gx
    y = (linear // gx) % gy
    z = linear // (gx * gy)
    return np.stack([x, y, z], axis=1).astype(np.int32)


def execute(
    launch: Any,
    run_kernel: Callable[[], None],
    progress: Callable[[int], None] | None = None,
    run_program: Callable[[Any], None] | None = None,
) -> None:
    """Run every program of ``launch``; ``run_kernel`` executes the kernel for ``launch.pids``.

    ``run_program(view)`` runs the kernel for one program's view in the calling thread; it is
    needed in concurrent mode, and when programs turn out to wait for each other.
    """
    total = int(np.prod(launch.grid))
    opts = launch.options
    if opts.mode == "concurrent":
        _run_concurrent(launch, np.arange(total, dtype=np.int64), run_program)
        if progress is not None:
            progress(total)
        return
    size = 1 if opts.mode == "serial" else max(1, opts.batch_size)
    queue: deque[np.ndarray] = deque(
        np.arange(s, min(s + size, total), dtype=np.int64) for s in range(0, total, size)
    )
    done = 0
    with np.errstate(all="ignore"):
        while queue:
            ids = queue.popleft()
            launch.pids = program_ids(ids, launch.grid)
            launch.reset_batch()
            try:
                try:
                    _attempt(launch, run_kernel)
                except (Divergence, BatchTooLarge, WaitDetected) as signal:
                    if launch.rows is None:
                        raise
                    # decided per row of a loop running as rows: run that loop iteration by iteration
                    raise LoopRowsConflict(launch.rows.site) from signal
            except WaitDetected as wait:
                if run_program is None:
                    raise KernelError(
                        "programs of this kernel wait for each other (spin-wait) and no concurrent runner "
                        "was given",
                        kernel=launch.kernel_name,
                        site=wait.site,
                    ) from None
                ids = np.concatenate([ids, *queue]) if queue else ids
                queue.clear()
                _run_concurrent(launch, ids, run_program)
            except (Divergence, NeedValues, BatchTooLarge, SharedLoadWritten, LoopRowsConflict) as signal:
                queue.extendleft(reversed(_replan(launch, ids, signal)))
                continue
            done += len(ids)
            if progress is not None:
                progress(done)


def _run_concurrent(launch: Any, ids: np.ndarray, run_program: Callable[[Any], None] | None) -> None:
    """Programs ``ids`` interleaved on the launch's seeded schedule, as one attempt."""
    if run_program is None:
        raise KernelError("concurrent mode needs a per-program runner", kernel=launch.kernel_name)
    opts = launch.options
    launch.compute_outputs = True
    launch.memory.share_loads = False  # interleaved programs: a write may come between any two ops
    launch.pids = program_ids(ids, launch.grid)
    launch.reset_batch()
    with np.errstate(all="ignore"):
        _attempt(
            launch,
            functools.partial(run_concurrent, launch, ids, run_program, seed=opts.seed, slots=opts.slots),
        )


def _attempt(launch: Any, body: Callable[[], None]) -> None:
    """Run ``body`` as one attempt: committed if it returns, rolled back (and unseen) if it raises."""
    memory, hub = launch.memory, launch.hub
    mark = memory.mark()
    hub.attempt_begin(launch.pids)
    try:
        body()
    except BaseException:
        with interrupts_deferred():  # an abandoned attempt is undone whole, even under a Ctrl-C
            memory.rollback(mark)
            hub.attempt_abort()
        raise
    with interrupts_deferred():  # the attempt's pending writes are applied whole
        memory.commit(mark)
    hub.attempt_commit()


def _replan(launch: Any, ids: np.ndarray, signal: BaseException) -> list[np.ndarray]:
    """The batches to run instead of an abandoned one (in order)."""
    if isinstance(signal, Divergence):
        return _split(ids, signal.decisions)
    if isinstance(signal, BatchTooLarge):
        half = len(ids) // 2
        return [ids[:half], ids[half:]]
    if isinstance(signal, LoopRowsConflict):
        launch.serial_loops.add(signal.site)
        return [ids]
    if isinstance(signal, SharedLoadWritten):
        launch.memory.copy_sites |= signal.sites  # the launcher's set: later launches copy at once
        return [ids]
    new = set(signal.origins) - launch.eager
    if any(isinstance(o, tuple) and o[0] == "atomic" for o in new):
        launch.compute_outputs = True  # an atomic's result matters: run for real
        new = {("all",)}
    if not new:
        raise KernelError(
            "a value the run skipped is needed but cannot be computed", kernel=launch.kernel_name
        )
    launch.eager |= new
    return [ids]


def _split(ids: np.ndarray, decisions: np.ndarray) -> list[np.ndarray]:
    """Programs grouped by the decision they took, groups ordered by their first program."""
    values, first = np.unique(decisions, return_index=True)
    groups = [ids[decisions == v] for v in values[np.argsort(first)]]
    return groups
