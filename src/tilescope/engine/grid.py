"""Grid execution: every program of a launch in one batched pass, split and replayed on divergence.

A launch runs as a queue of *attempts*, each a batch of program ids. An attempt runs the kernel
once with a leading program axis on every value. When programs of the batch disagree at a branch
or loop bound, the attempt is abandoned (its writes undone, its events dropped) and its programs are
re-queued in groups that agree; when a demand-driven run skipped a value that turns out to be
needed, the attempt is redone with that operation computed; when one value would exceed the memory
budget, the batch is halved. Serial mode is the same executor with batches of one program.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType
from typing import Any

import numpy as np

from ..ir import Fault, OpKind, Site
from .access import MemoryOps
from .concurrent import run_concurrent
from .errors import (
    BatchTooLarge,
    DeviceAssertionError,
    Divergence,
    KernelError,
    NeedValues,
    OutOfBoundsError,
    WaitDetected,
)
from .faults import describe_fault
from .memory import AddressTable

MAX_GRID = (2**31 - 1, 65535, 65535)


@dataclass
class ExecutionOptions:
    """How to run a launch."""

    mode: str = "batched"  # "batched" or "serial"
    batch_size: int = 4096  # programs per attempt at most (batched mode)
    value_budget_bytes: int = 512 * 2**20  # one value larger than this halves the batch
    compute_outputs: bool = True  # False: demand-driven, addresses and masks only
    spin_limit: int = 2_000  # uniform while-loop iterations before the batch is declared waiting
    seed: int = 0  # concurrent mode's schedule
    slots: int = 132  # programs in flight in concurrent mode (an H100/H200 has 132 SMs)


class SiteFinder:
    """Maps the user's kernel frame that is executing an op to a source site.

    Two sets of code objects: every rewritten function (kernels, user helpers, Triton's own
    library helpers such as ``tl.max``), and the *user's* ones, which is where sites point. The
    runtime notes the innermost user frame on every call into Triton's language layer (cheap: one
    frame up), so ``find`` rarely walks the stack; ops inside library helpers report the user's
    line that called the helper.
    """

    def __init__(self):
        # keyed by id: hashing a code object hashes its whole body, far too slow for every op
        self._codes: dict[int, CodeType] = {}
        self._user: dict[int, CodeType] = {}
        self._local = threading.local()
        self._positions: dict[CodeType, list] = {}
        self._cache: dict[tuple[int, int], Site] = {}

    def add(self, codes: set[CodeType], user: bool) -> None:
        """Register the code objects of a rewritten function (``user``: not Triton's own)."""
        self._codes.update((id(c), c) for c in codes)
        if user:
            self._user.update((id(c), c) for c in codes)

    def is_kernel(self, code: CodeType) -> bool:
        """True for the code of any rewritten function (kernels and helpers, Triton's included)."""
        return id(code) in self._codes

    def is_user(self, code: CodeType) -> bool:
        """True for the code of the user's kernels and helpers."""
        return id(code) in self._user

    def note(self, frame) -> None:
        """Remember ``frame`` as the current user frame when it is one (called on every op entry)."""
        if id(frame.f_code) in self._user:
            self._local.frame = frame

    def forget(self) -> None:
        """Drop the remembered frame (end of a launch)."""
        self._local.frame = None

    def find(self) -> Site | None:
        """Site of the user's code that is executing now (None outside kernel code)."""
        frame = getattr(self._local, "frame", None)
        if frame is None:
            frame = sys._getframe(2)
            user = self._user
            while frame is not None and id(frame.f_code) not in user:
                frame = frame.f_back
            if frame is None:
                return None
        key = (id(frame.f_code), frame.f_lasti)
        site = self._cache.get(key)
        if site is None:
            site = self._site(frame.f_code, frame.f_lasti, frame.f_lineno)
            self._cache[key] = site
        return site

    def frame_site(self, frame) -> Site:
        """Site of a given kernel frame (used for exceptions)."""
        return self._site(frame.f_code, frame.f_lasti, frame.f_lineno)

    def _site(self, code: CodeType, lasti: int, lineno: int) -> Site:
        positions = self._positions.get(code)
        if positions is None and hasattr(code, "co_positions"):
            positions = list(code.co_positions())
            self._positions[code] = positions
        line, end_line, col, end_col = lineno, lineno, None, None
        if positions and 0 <= lasti // 2 < len(positions):
            line, end_line, col, end_col = positions[lasti // 2]
            line = line or lineno
        return Site(
            code.co_filename,
            line,
            (col or 0) + 1 if col is not None else 0,
            end_line or line,
            (end_col or 0) + 1 if end_col is not None else 0,
            code.co_name,
        )


class Launch:
    """The state of one running launch: memory, observers, and the batch being executed."""

    def __init__(
        self,
        *,
        kernel_name: str,
        launch_id: int,
        grid: tuple[int, int, int],
        memory: AddressTable,
        hub: Any,
        sites: SiteFinder,
        options: ExecutionOptions,
        eager: set | None = None,
    ):
        self.kernel_name = kernel_name
        self.launch_id = launch_id
        self.grid = grid
        self.memory = memory
        self.hub = hub
        self.sites = sites
        self.options = options
        self.compute_outputs = options.compute_outputs
        self.eager: set = eager if eager is not None else set()
        self.track_overflow = bool(getattr(hub, "wants_overflow", False))
        self.memory_op = MemoryOps(self)
        self.pids = np.zeros((1, 3), dtype=np.int32)
        self.loops: list[list] = []
        self.loop_counts: dict[Site, int] = {}
        self.scheduler: Any = None  # set on the per-program views of a concurrent run
        self.token = -1

    # ------------------------------------------------------------------ queries from ops

    def site(self) -> Site | None:
        """Source site of the operation being executed."""
        return self.sites.find()

    def computes(self, site: Site | None) -> bool:
        """Whether values of the op at ``site`` are computed in this run."""
        return self.compute_outputs or site in self.eager

    def loop_state(self) -> tuple[tuple[Site, int], ...]:
        """The enclosing loops and their iteration numbers, outermost first."""
        return tuple((entry[0], entry[1]) for entry in self.loops)

    def budget(self, data: np.ndarray | None) -> None:
        """Halve the batch when one value grows past the memory budget."""
        if data is not None and data.nbytes > self.options.value_budget_bytes and data.shape[0] > 1:
            raise BatchTooLarge()

    # ------------------------------------------------------------------ control flow

    def decide(self, data: np.ndarray, site: Site | None):
        """The value a branch or loop bound takes, if every program of the batch agrees."""
        flat = data.reshape(data.shape[0], -1)[:, 0] if data.ndim > 1 else data.reshape(-1)
        if flat.shape[0] == 1 or bool(np.all(flat == flat[0])):
            return flat[0].item()
        if flat.shape[0] != self.pids.shape[0]:
            raise KernelError(
                "a branch inside a reduce/scan combine function depends on the data; tilescope "
                "evaluates combine functions on whole blocks and cannot branch per element",
                kernel=self.kernel_name,
                site=site,
            )
        raise Divergence(flat, site)

    def while_iteration(self, site: Site | None) -> None:
        """Count uniform iterations of a while loop; a loop that never ends is a cross-program wait."""
        if self.scheduler is not None:
            return  # concurrent mode: the scheduler interleaves, and detects deadlock
        count = self.loop_counts.get(site, 0) + 1
        self.loop_counts[site] = count
        if count > self.options.spin_limit:
            raise WaitDetected(site)

    def yield_point(self) -> None:
        """In concurrent mode, let another in-flight program run (a no-op when batched)."""
        if self.scheduler is not None:
            self.scheduler.switch(self.token)

    def fork(self, pids: np.ndarray, scheduler: Any, token: int) -> Launch:
        """A view of this launch for one program of a concurrent run (shares memory and clients)."""
        sub = Launch(
            kernel_name=self.kernel_name,
            launch_id=self.launch_id,
            grid=self.grid,
            memory=self.memory,
            hub=self.hub,
            sites=self.sites,
            options=self.options,
            eager=self.eager,
        )
        sub.compute_outputs = True
        sub.pids = pids
        sub.scheduler = scheduler
        sub.token = token
        return sub

    # ------------------------------------------------------------------ findings

    def fault(self, fault: Fault) -> None:
        """Report a fault to clients that handle faults, else raise it as an error."""
        if self.hub.handles(fault.kind):
            self.hub.fault(fault)
            return
        if fault.kind == "int32 overflow" or (fault.wrapped is not None and not fault.bad.any()):
            return  # wrapped arithmetic is legal on the GPU; only a sanitizer reports it
        error = OutOfBoundsError if fault.kind.startswith("out-of-bounds") else KernelError
        raise error(
            describe_fault(fault), kernel=self.kernel_name, site=fault.site, program_ids=fault.program_ids
        )

    def unsupported(self, what: str):
        """Raise the error for an unsupported operation at the current site."""
        from .errors import UnsupportedOpError

        raise UnsupportedOpError(
            f"`{what}` is not supported by tilescope's engine", kernel=self.kernel_name, site=self.site()
        )

    def device_assert(self, condition: Any, message: str) -> None:
        """Fail (or report) every program whose assertion is false in any lane."""
        cond = condition.data
        if cond.all():
            return
        bad = ~cond
        bad = np.broadcast_to(bad, (self.pids.shape[0], *bad.shape[1:]))
        fault = Fault(
            kind="device assert",
            launch_id=self.launch_id,
            kernel=self.kernel_name,
            site=self.site(),
            program_ids=self.pids,
            bad=bad,
            message=message,
            loops=self.loop_state(),
            address_node=condition.node,
        )
        if self.hub.handles("device assert"):
            self.hub.fault(fault)
            return
        raise DeviceAssertionError(
            describe_fault(fault), kernel=self.kernel_name, site=fault.site, program_ids=fault.program_ids
        )

    def device_print(self, prefix: str, hex_: bool, values: list) -> None:
        """device_print: one line per program (and value), formatted like the GPU's."""
        arrays = [v.data for v in values]
        for row, pid in enumerate(self.pids):
            parts = []
            for a in arrays:
                x = a[min(row, a.shape[0] - 1)]
                parts.append(np.array2string(x, formatter={"int": hex} if hex_ else None))
            line = f"pid ({pid[0]}, {pid[1]}, {pid[2]}) {prefix}{' '.join(parts)}"
            print(line)

    def emit_compute(self, kind: OpKind, *inputs: Any) -> None:
        """Record a compute op (dot, reduce, scan) for clients that subscribed to it."""
        if self.hub.wants(kind):
            self.hub.emit_op(
                kind=kind,
                site=self.site(),
                program_ids=self.pids,
                dtype=str(getattr(inputs[0], "dtype", "")) if inputs else "",
                attrs={},
            )


def program_ids(linear: np.ndarray, grid: tuple[int, int, int]) -> np.ndarray:
    """(B, 3) int32 program ids of linear program numbers (x fastest, as the GPU numbers them)."""
    gx, gy, _ = grid
    x = linear % gx
    y = (linear // gx) % gy
    z = linear // (gx * gy)
    return np.stack([x, y, z], axis=1).astype(np.int32)


def execute(
    launch: Launch,
    run_kernel: Callable[[], None],
    progress: Callable[[int], None] | None = None,
    run_program: Callable[[Launch], None] | None = None,
) -> None:
    """Run every program of ``launch``; ``run_kernel`` executes the kernel for ``launch.pids``.

    ``run_program(view)`` runs the kernel for one program's view in the calling thread; it is
    needed only when programs turn out to wait for each other (concurrent mode).
    """
    total = int(np.prod(launch.grid))
    opts = launch.options
    size = 1 if opts.mode == "serial" else max(1, opts.batch_size)
    queue: deque[np.ndarray] = deque(
        np.arange(s, min(s + size, total), dtype=np.int64) for s in range(0, total, size)
    )
    done = 0
    with np.errstate(all="ignore"):
        while queue:
            ids = queue.popleft()
            launch.pids = program_ids(ids, launch.grid)
            launch.loops = []
            launch.loop_counts = {}
            try:
                _attempt(launch, run_kernel)
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
                launch.compute_outputs = True
                launch.pids = program_ids(ids, launch.grid)
                _attempt(
                    launch,
                    functools.partial(
                        run_concurrent, launch, ids, run_program, seed=opts.seed, slots=opts.slots
                    ),
                )
            except (Divergence, NeedValues, BatchTooLarge) as signal:
                queue.extendleft(reversed(_replan(launch, ids, signal)))
                continue
            done += len(ids)
            if progress is not None:
                progress(done)


def _attempt(launch: Launch, body: Callable[[], None]) -> None:
    """Run ``body`` as one attempt: committed if it returns, rolled back (and unseen) if it raises."""
    memory, hub = launch.memory, launch.hub
    mark = memory.mark()
    hub.attempt_begin(launch.pids)
    try:
        body()
    except BaseException:
        memory.rollback(mark)
        hub.attempt_abort()
        raise
    memory.commit(mark)
    hub.attempt_commit()


def _replan(launch: Launch, ids: np.ndarray, signal: BaseException) -> list[np.ndarray]:
    """The batches to run instead of an abandoned one (in order)."""
    if isinstance(signal, Divergence):
        return _split(ids, signal.decisions)
    if isinstance(signal, BatchTooLarge):
        half = len(ids) // 2
        return [ids[:half], ids[half:]]
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
