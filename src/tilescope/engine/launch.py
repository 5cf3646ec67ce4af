"""A launch: the state ops see while it runs, and the one driver every frontend launches through.

:func:`run_launch` does everything a launch needs that is not about a DSL: grid normalisation,
host memory (tensors registered in the address table, results copied back), the hub and its
clients, the Session's launch id and observers, execution (batched, serial or concurrent) and
translating a Python error raised in kernel code into a :class:`KernelError` at the user's line.
A frontend supplies how to convert its arguments (``bind``) and how to run its kernel body for
the current batch (``run_batch``) or for one program of a concurrent run (``run_program``).

:class:`Launch` is what ops talk to: the site of the op being executed, the programs of the
current batch, memory, the hub, the enclosing loops, control-flow decisions and faults.
"""

from __future__ import annotations

import dataclasses
import os
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import (
    AffineAddress,
    Fault,
    FaultKind,
    LaunchInfo,
    LoopEventKind,
    Loops,
    Need,
    OpKind,
    RowAddress,
    Site,
    describe_fault,
)
from . import control, dtypes
from .access import fault as report_fault
from .errors import (
    BatchTooLarge,
    DeviceAssertionError,
    EngineSignal,
    KernelError,
    LaunchError,
    OutOfBoundsError,
    TilescopeError,
    UnsupportedOpError,
    WaitDetected,
)
from .grid import MAX_GRID, ExecutionOptions, execute
from .host import HostMemory, LiveTensors
from .hub import Hub
from .interrupts import deliver_lost_ctrl_c, interrupts_deferred
from .memory import AddressTable
from .numerics import Numerics
from .sites import SiteFinder
from .values import Value

_COMPUTE_KINDS = (OpKind.ELEMENTWISE, OpKind.DOT, OpKind.REDUCE, OpKind.SCAN)


@dataclass(frozen=True)
class KernelRef:
    """The kernel a launch runs, in the user's terms."""

    name: str
    file: str
    line: int

    def __str__(self) -> str:
        return f"kernel `{self.name}` ({self.file}:{self.line})"


@dataclass(repr=False, eq=False)
class LoopFrame:
    """One loop the running batch is inside: its site and current 0-based iteration.

    ``freeze`` is None while every program that entered the loop is still iterating, else the
    (B,) mask of those that are: the values the loop carries keep their old value elsewhere.
    ``syncs`` counts the atomics and volatile loads the loop has executed (a loop without any is
    never a wait for another program).
    """

    site: Site | None
    iteration: int = 0
    key: Any = None  # what the frontend identifies the loop by (e.g. a while loop's position)
    freeze: np.ndarray | None = None
    syncs: int = 0
    entry_active: np.ndarray | None = None  # the programs active when the loop was entered
    still: np.ndarray | None = None  # while loops: the programs whose condition has held so far


def _has_rows(value: Any, batch: int) -> bool:
    """True when ``value`` (a record field) has a row per program of the batch (:func:`_rows` cuts it)."""
    if isinstance(value, np.ndarray):
        return bool(value.ndim) and value.shape[0] == batch
    if isinstance(value, AffineAddress):
        return value.scalar.shape[0] == batch
    if isinstance(value, RowAddress):
        return value.rows.shape[0] == batch
    return isinstance(value, tuple) and any(_has_rows(v, batch) for v in value)


def _rows(value: Any, keep: np.ndarray, batch: int) -> Any:
    """``value`` restricted to the programs ``keep`` when it has a row per program of the batch."""
    if not _has_rows(value, batch):
        return value
    if isinstance(value, np.ndarray):
        return value[keep]
    if isinstance(value, AffineAddress):
        return AffineAddress(value.scalar[keep], value.block, value.lanes)
    if isinstance(value, RowAddress):
        return RowAddress(value.rows[keep], value.block)
    return tuple(_rows(v, keep, batch) for v in value)


class Launch:
    """The state of one running launch: memory, observers, and the batch being executed."""

    def __init__(
        self,
        *,
        kernel_name: str,
        launch_id: int,
        grid: tuple[int, int, int],
        memory: AddressTable,
        hub: Hub,
        sites: SiteFinder,
        options: ExecutionOptions,
        eager: set | None = None,
        numerics: Numerics | None = None,
        serial_loops: set | None = None,
    ):
        self.kernel_name = kernel_name
        self.numerics = numerics or Numerics(mode=options.numerics)
        self.products: dict = {}  # float multiplies by operand ids (contraction.note_product)
        self.launch_id = launch_id
        self.grid = grid
        self.memory = memory
        self.hub = hub
        self.sites = sites
        self.options = options
        self.compute_outputs = options.compute_outputs
        self.eager: set = eager if eager is not None else set()
        #: sites of independent loops that must run iteration by iteration (their rows conflicted)
        self.serial_loops: set = serial_loops if serial_loops is not None else set()
        self.rows: Any = None  # the loop running as rows of the batch (iterations.Region), if any
        self.ops = 0  # engine ops run so far (what a predicated iteration's fixed cost is estimated by)
        self.work = 0  # elements computed or moved so far (an iteration's per-program cost, estimated)
        self.started = (0, 0)  # (ops, work) when the current attempt began (to price replaying it)
        self.track_overflow = Need.OVERFLOW_TAINT in hub.needs
        #: whether compute ops are recorded or counted for some client (else emit_compute is not called)
        self.records_compute = hub.wants_counts or any(hub.wants(k) for k in _COMPUTE_KINDS)
        self.pids = np.zeros((1, 3), dtype=np.int32)
        self.loops: list[LoopFrame] = []
        self.loop_counts: dict[Any, int] = {}
        self.active: np.ndarray | None = None  # (B,) programs running now (predication); None: all
        self._active_stack: list[np.ndarray | None] = []
        self.scheduler: Any = None  # set on the per-program views of a concurrent run
        self.token = -1

    # ------------------------------------------------------------------ queries from ops

    def site(self) -> Site | None:
        """Source site of the operation being executed."""
        return self.sites.find()

    @property
    def factoring(self) -> bool:
        """Whether values may stay factored (off while int32 wraps are tracked in a computing run)."""
        return not self.track_overflow or not self.compute_outputs

    def computes(self, site: Site | None) -> bool:
        """Whether values of the op at ``site`` are computed in this run."""
        return self.compute_outputs or site in self.eager

    def loop_state(self) -> Loops:
        """The enclosing loops and their iteration numbers, outermost first."""
        return tuple((frame.site, frame.iteration) for frame in self.loops)

    def budget(self, data: np.ndarray | None, per_element: int = 1) -> None:
        """Count a computed value's work (its elements times ``per_element``: more for a dot); halve
        the batch when one value grows past the memory budget."""
        if data is None:
            return
        self.work += data.size * per_element
        if data.nbytes > self.options.value_budget_bytes and data.shape[0] > 1:
            raise BatchTooLarge()

    def reset_batch(self) -> None:
        """Forget per-attempt state (loops, while-loop counts, active masks) before a batch runs."""
        self.loops = []
        self.loop_counts = {}
        self.active = None
        self._active_stack = []
        self.rows = None
        self.started = (self.ops, self.work)

    # ------------------------------------------------------------------ predication

    def push_active(self, mask: np.ndarray | None) -> None:
        """Run what follows only for the programs in ``mask`` (and in the current active set);
        ``None`` opens a region with the current set, for a loop to narrow as programs leave it."""
        self._active_stack.append(self.active)
        if mask is not None:
            mask = np.asarray(mask, dtype=bool)
            self.active = mask if self.active is None else self.active & mask

    def pop_active(self) -> None:
        """Back to the active set before the last :meth:`push_active`."""
        self.active = self._active_stack.pop()

    def active_column(self, ndim: int) -> np.ndarray | None:
        """The active mask shaped (B, 1, ...) to broadcast over ``ndim`` block axes (None: all active)."""
        return None if self.active is None else self.active.reshape(-1, *([1] * ndim))

    def note_sync(self) -> None:
        """An atomic or volatile load ran: the enclosing loops may be waiting for another program."""
        for frame in self.loops:
            frame.syncs += 1

    # ------------------------------------------------------------------ records

    def emit_op(self, **fields: Any) -> None:
        """Record one op of the active programs of the batch (program ids, loops, attempt, step added)."""
        step = self.scheduler.step if self.scheduler is not None else None
        batch = self.pids.shape[0]
        groups = self.row_groups()
        cut = any(keep is not None for keep, _ in groups)
        per_row = [k for k, v in fields.items() if _has_rows(v, batch)] if cut else []
        for keep, loops in groups:
            part = fields if keep is None else fields | {k: _rows(fields[k], keep, batch) for k in per_row}
            pids = self.pids if keep is None else self.pids[keep]
            self.hub.emit_op(program_ids=pids, loops=loops, step=step, **part)

    def row_groups(self) -> list[tuple[np.ndarray | None, Loops]]:
        """The rows of the batch running now (None: all), grouped by the iterations of their loops.

        One group (the active programs) unless a loop runs its iterations as rows of the batch
        (:mod:`iterations`): then one group per iteration, so that what clients see carries each
        program's own iteration.
        """
        region = self.rows
        if region is None:
            return [(self.active, self.loop_state())]
        loops = self.loop_state()
        at = self.loops.index(region.frame)
        groups = []
        for k, rows in region.groups:
            if self.active is not None:
                rows = rows[self.active[rows]]
            if rows.size:
                groups.append((rows, (*loops[:at], (region.site, k), *loops[at + 1 :])))
        return groups

    def emit_compute(self, kind: OpKind, result: Value, inputs: Sequence[Any], **attrs: Any) -> None:
        """Record a compute op (elementwise, dot, reduce, scan) for clients that subscribed to it, and
        count it for clients that need compute counts (``attrs``: hashable values)."""
        hub = self.hub
        recorded = hub.wants(kind)
        if not recorded and not hub.wants_counts:
            return
        site = self.site()
        dtype, shape = str(result.dtype), tuple(result.shape)
        operands = tuple((str(v.dtype), tuple(v.shape)) for v in inputs if isinstance(v, Value))
        if hub.wants_counts:  # the programs of every row group emit_op would record
            programs = self.pids.shape[0] if self.active is None else int(np.count_nonzero(self.active))
            hub.count_compute((kind, site, dtype, shape, operands, tuple(sorted(attrs.items()))), programs)
        if recorded:
            self.emit_op(kind=kind, site=site, dtype=dtype, itemsize=result.dtype.itemsize, shape=shape,
                         operands=operands, attrs=attrs)  # fmt: skip

    # ------------------------------------------------------------------ control flow

    def decide(self, data: np.ndarray, site: Site | None):
        """The value a branch or loop bound takes, if every active program of the batch agrees."""
        flat = data.reshape(data.shape[0], -1)[:, 0] if data.ndim > 1 else data.reshape(-1)
        if flat.shape[0] == 1:
            return flat[0].item()
        if flat.shape[0] != self.pids.shape[0]:
            raise KernelError(
                "a branch inside a reduce/scan combine function depends on the data; tilescope "
                "evaluates combine functions on whole blocks and cannot branch per element",
                kernel=self.kernel_name,
                site=site,
            )
        considered = flat if self.active is None else flat[self.active]
        if bool(np.all(considered == considered[0])):
            return considered[0].item()
        raise control.divergence(flat, site, self.active)

    def loop_enter(self, site: Site | None, key: Any = None) -> LoopFrame:
        """A loop starts (before its first iteration); returns its frame."""
        frame = LoopFrame(site, 0, key)
        self.loops.append(frame)
        self._loop_event(LoopEventKind.ENTER, frame)
        return frame

    def loop_iterate(self, frame: LoopFrame, iteration: int, event: bool = True) -> None:
        """Iteration ``iteration`` of the loop begins (``event=False``: only set the number, e.g. while
        the loop's condition is tested)."""
        frame.iteration = iteration
        if event:
            self._loop_event(LoopEventKind.ITERATE, frame)

    def loop_exit(self, frame: LoopFrame, last: np.ndarray | None = None) -> None:
        """The loop is left (normally, by ``break``/``return``, or by an error); ``last``: each
        program's last iteration, when they differ (the exit event then reports each its own)."""
        if frame not in self.loops:
            return
        if last is None or not self.hub.wants_loops:
            self._loop_event(LoopEventKind.EXIT, frame)
        else:
            outer = self.active
            for k in np.unique(last if outer is None else last[outer]):
                frame.iteration = int(k)
                self.active = last == k if outer is None else outer & (last == k)
                self._loop_event(LoopEventKind.EXIT, frame)
            self.active = outer
        self.loops.remove(frame)

    def innermost_loop(self, key: Any) -> LoopFrame | None:
        """The innermost loop frame if the frontend identified it by ``key``, else None."""
        return self.loops[-1] if self.loops and self.loops[-1].key == key else None

    def _loop_event(self, kind: LoopEventKind, frame: LoopFrame) -> None:
        if self.hub.wants_loops:
            for keep, loops in self.row_groups():
                pids = self.pids if keep is None else self.pids[keep]
                self.hub.loop_event(kind, frame.site, frame.iteration, pids, loops)

    def while_iteration(self, frame: LoopFrame) -> None:
        """Count the iterations of a while loop that waits on memory (its body or test ran an atomic
        or a volatile load): past ``spin_limit`` of them, its programs wait for another program (run
        them interleaved). A loop over local values just runs, however long."""
        if self.scheduler is not None or not frame.syncs:
            return  # concurrent mode: the scheduler interleaves, and detects deadlock
        count = self.loop_counts.get(frame.key, 0) + 1
        self.loop_counts[frame.key] = count
        if count > self.options.spin_limit:
            raise WaitDetected(frame.site)

    def yield_point(self, idle: bool = True) -> None:
        """In concurrent mode, let another in-flight program run (a no-op when batched).

        ``idle=False`` for a point that is not a memory access (a loop test): running past it
        without changing memory is not evidence of a deadlock.
        """
        if self.scheduler is not None:
            self.scheduler.switch(self.token, idle)

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
            numerics=self.numerics,
        )
        sub.compute_outputs = True
        sub.pids = pids
        sub.scheduler = scheduler
        sub.token = token
        return sub

    # ------------------------------------------------------------------ findings

    def fault(self, fault: Fault) -> None:
        """Report a fault of the active programs to clients that handle its kind, else raise it as an
        error (if fatal)."""
        for keep, loops in self.row_groups():
            part = fault if keep is None else self._fault_rows(fault, keep)
            if part is not None:
                self._report(part if self.rows is None else dataclasses.replace(part, loops=loops))

    def _report(self, fault: Fault) -> None:
        if self.hub.handles(fault.kind):
            self.hub.fault(fault)
            return
        kind = FaultKind(fault.kind)
        if not kind.fatal or (fault.wrapped is not None and not fault.bad.any()):
            return  # wrapped arithmetic is legal on the GPU; only a client that asks reports it
        error = (
            OutOfBoundsError
            if kind.is_memory
            else DeviceAssertionError
            if kind is FaultKind.DEVICE_ASSERT
            else KernelError
        )
        raise error(
            describe_fault(fault), kernel=self.kernel_name, site=fault.site, program_ids=fault.program_ids
        )

    def _fault_rows(self, fault: Fault, keep: np.ndarray) -> Fault | None:
        """``fault`` restricted to the rows ``keep`` (None when none of them is at fault)."""
        batch = fault.program_ids.shape[0]
        bad = np.broadcast_to(fault.bad, (batch, *np.shape(fault.bad)[1:]))[keep]
        wrapped = (
            None
            if fault.wrapped is None
            else np.broadcast_to(fault.wrapped, (batch, *fault.wrapped.shape[1:]))[keep]
        )
        if not bad.any() and (wrapped is None or not wrapped.any()):
            return None
        return dataclasses.replace(
            fault,
            program_ids=fault.program_ids[keep],
            bad=bad,
            wrapped=wrapped,
            address=_rows(fault.address, keep, batch),
            misaligned=_rows(fault.misaligned, keep, batch),
        )

    def unsupported(self, what: str):
        """Raise the error for an unsupported operation at the current site."""
        raise UnsupportedOpError(
            f"`{what}` is not supported by tilescope's engine", kernel=self.kernel_name, site=self.site()
        )

    def device_assert(self, condition: Value, message: str) -> None:
        """Check ``condition`` for every program: an ``assert`` record, and a fault where it fails."""
        cond = condition.data
        site = self.site()
        if self.active is not None:
            cond = np.broadcast_to(cond, (self.pids.shape[0], *cond.shape[1:])) | ~self.active_column(
                cond.ndim - 1
            )
        if self.hub.wants(OpKind.ASSERT):
            self.emit_op(
                kind=OpKind.ASSERT,
                site=site,
                dtype="int1",
                itemsize=1,
                shape=tuple(cond.shape[1:]),
                values=cond,
                attrs={"message": message},
                address_node=condition.node,
            )
        if cond.all():
            return
        bad = np.broadcast_to(~cond, (self.pids.shape[0], *cond.shape[1:]))
        report_fault(self, FaultKind.DEVICE_ASSERT, bad=bad, message=message, address_node=condition.node)

    def device_print(self, prefix: str, hex_: bool, values: list[Value]) -> None:
        """device_print: a ``print`` record, and one line per program (and value) as the GPU prints."""
        arrays = [v.data for v in values]
        if self.hub.wants(OpKind.PRINT):
            self.emit_op(
                kind=OpKind.PRINT,
                site=self.site(),
                dtype=str(values[0].dtype) if values else "",
                shape=tuple(arrays[0].shape[1:]) if arrays else (),
                values=arrays[0] if arrays else None,
                attrs={"prefix": prefix, "hex": hex_},
            )
        for row, pid in enumerate(self.pids):
            if self.active is not None and not self.active[row]:
                continue
            parts = []
            for a in arrays:
                x = a[min(row, a.shape[0] - 1)]
                parts.append(np.array2string(x, formatter={"int": hex} if hex_ else None))
            print(f"pid ({pid[0]}, {pid[1]}, {pid[2]}) {prefix}{' '.join(parts)}")

    def barrier(self) -> None:
        """A barrier among the threads of each program (a ``barrier`` record; a program runs as one here)."""
        self.yield_point()
        if self.hub.wants(OpKind.BARRIER):
            self.emit_op(kind=OpKind.BARRIER, site=self.site(), dtype="")


# --------------------------------------------------------------------------- the driver


def normalize_grid(grid: Any, kernel: KernelRef) -> tuple[int, int, int]:
    """A 3-D grid from an int or a tuple of 1 to 3 ints, checked against the GPU's limits."""
    if isinstance(grid, int):
        grid = (grid,)
    try:
        dims = tuple(int(g) for g in grid)
    except TypeError:
        raise LaunchError(
            f"kernel `{kernel.name}`: grid must be a tuple of 1 to 3 ints or a callable returning one; "
            f"got {grid!r}"
        ) from None
    if not 1 <= len(dims) <= 3:
        raise LaunchError(f"kernel `{kernel.name}`: grid must have 1 to 3 dimensions, got {len(dims)}")
    dims = dims + (1,) * (3 - len(dims))
    for axis, (n, limit) in enumerate(zip(dims, MAX_GRID, strict=False)):
        if n < 0:
            raise LaunchError(f"kernel `{kernel.name}`: grid dimension {axis} is negative ({n})")
        if n > limit:
            raise LaunchError(
                f"kernel `{kernel.name}`: grid dimension {axis} is {n}, past the GPU's limit of "
                f"{limit}; a real launch would fail"
            )
    return dims  # type: ignore[return-value]


def outputs_needed(clients: Sequence[Any], requested: bool | None) -> bool:
    """Whether a launch computes real outputs: asked for, or some client needs more than addresses."""
    if requested is not None:
        return requested
    if not clients:
        return True
    needs = [frozenset(getattr(c, "needs", ())) for c in clients]
    return any(Need.VALUES in n for n in needs) or not all(Need.ADDRESSES_ONLY in n for n in needs)


def run_launch(
    *,
    session: Any,
    kernel: KernelRef,
    grid: Any,
    clients: Sequence[Any],
    options: ExecutionOptions,
    sites: SiteFinder,
    bind: Callable[[HostMemory], Any],
    run_batch: Callable[[Launch, Any], None],
    run_program: Callable[[Launch, Any], None],
    meta: dict | None = None,
    frontend: str = "",
    eager: set | None = None,
    progress: Callable[[int, int], None] | None = None,
    copy_sites: set | None = None,
    resources: Callable[[str | None], dict] | None = None,
    numerics: Numerics | None = None,
    serial_loops: set | None = None,
) -> LaunchInfo:
    """Run one launch of ``kernel`` over ``grid`` on the engine; returns its :class:`LaunchInfo`.

    ``bind(host)`` registers the frontend's arguments (tensors through ``host.tensor``) and returns
    what ``run_batch(launch, bound)`` and ``run_program(program_launch, bound)`` need. ``eager`` and
    ``copy_sites`` are what earlier launches of the kernel learned (sites whose values a
    demand-driven run computes; load sites whose data is copied, not shared), like ``serial_loops``
    (independent loops whose iterations met through memory): the launch adds to them.
    With ``options.schedules`` N > 1 the launch runs N times in concurrent mode, with seeds ``seed``
    to ``seed + N - 1``, each from the memory the launch started with and each a launch of its own
    for the clients (``options["schedule"]`` and ``["schedules"]`` in its info); the memory the
    last one leaves is the result. ``resources(gpu)`` compiles the kernel offline for ``gpu`` (the
    first such client's ``compile_gpu``; None: the modelled GPU) and returns its figures; it is
    called only when a client needs ``Need.COMPILED_RESOURCES``.
    ``numerics`` is the frontend's model of the launch's floating point (its compiler options); by
    default the ``numerics`` execution option's mode with the compiler's defaults.
    """
    deliver_lost_ctrl_c()
    grid3 = normalize_grid(grid, kernel)
    options = dataclasses.replace(options, compute_outputs=outputs_needed(clients, options.compute_outputs))
    table = AddressTable(options.bounds)
    table.share_loads = Need.VALUES not in _needs(clients) and options.mode != "concurrent"
    if copy_sites is not None:
        table.copy_sites = copy_sites
    host = HostMemory(table)
    hubs: list[Hub] = []
    table.discover = LiveTensors(on_register=lambda view: hubs[-1].argument(host.registered(view)))
    try:
        bound = bind(host)
    except LaunchError as exc:
        raise LaunchError(f"{kernel}, {exc}") from None

    def run_one(options: ExecutionOptions, schedule: tuple[int, int]) -> LaunchInfo:
        """One run of a bound launch (one schedule of it): its own launch id, clients' hooks and records."""
        launch_id = session.next_launch_id()
        hub = Hub(list(clients), launch_id)
        hubs.append(hub)
        run_options = {"mode": options.mode, "seed": options.seed, "slots": options.slots,
                       "batch_size": options.batch_size, "numerics": options.numerics,
                       "frontend": frontend}  # fmt: skip
        if schedule[1] > 1:
            run_options.update(schedule=schedule[0], schedules=schedule[1])
        wanted = resources is not None and Need.COMPILED_RESOURCES in hub.needs
        figures = resources(_compile_gpu(clients)) if wanted else {}
        info = LaunchInfo(
            launch_id,
            kernel.name,
            kernel.file,
            kernel.line,
            grid3,
            tuple(sorted(host.arguments, key=lambda a: a.index)),
            dict(meta or {}),
            run_options,
            figures,
        )
        launch = Launch(
            kernel_name=kernel.name, launch_id=launch_id, grid=grid3, memory=table, hub=hub, sites=sites,
            options=options, eager=eager, numerics=numerics, serial_loops=serial_loops,
        )  # fmt: skip
        total = int(np.prod(grid3))
        try:
            with interrupts_deferred():  # a client starts its launch whole (a tracer's writer thread, files)
                session.launch_started(hub, info)
                hub.launch_start(info)
            if total > 0:
                execute(
                    launch,
                    lambda: run_batch(launch, bound),
                    (lambda done: progress(done, total)) if progress is not None else None,
                    lambda view: run_program(view, bound),
                )
            if hub.wants_memory:
                for arg in info.arguments:
                    if arg.kind == "tensor":
                        storage = dtypes.named(arg.dtype).storage
                        hub.memory(arg, table.contents(arg.address, arg.shape, arg.strides, storage))
        except (TilescopeError, EngineSignal):
            raise
        except Exception as exc:
            if os.environ.get("TILESCOPE_DEBUG"):
                raise  # engine developers want the full traceback
            raise user_error(exc, kernel.name, sites) from None
        finally:
            with interrupts_deferred():  # a Ctrl-C here would leave clients and report files half done
                hub.launch_end(info)
                session.launch_ended(hub, info)
        return info

    runs = _schedules(options)
    start = table.mark() if len(runs) > 1 else None
    table.holds += start is not None  # every schedule starts from the same memory
    try:
        for i, run in enumerate(runs):
            if start is not None and i:
                table.rollback(start)
            info = run_one(run, (i, len(runs)))
    finally:
        table.holds -= start is not None
        with interrupts_deferred():  # a Ctrl-C here would leave the copies back half done
            if start is not None:
                table.commit(start)
            host.finish()
    return info


def _schedules(options: ExecutionOptions) -> list[ExecutionOptions]:
    """The runs of a launch: one, or ``schedules`` concurrent ones with consecutive seeds."""
    if options.schedules == 1:
        return [options]
    return [dataclasses.replace(options, mode="concurrent", seed=options.seed + i, schedules=1)
            for i in range(options.schedules)]  # fmt: skip


def _needs(clients: Sequence[Any]) -> set[Need]:
    return {n for c in clients for n in getattr(c, "needs", ())}


def _compile_gpu(clients: Sequence[Any]) -> str | None:
    """The GPU the offline compile is for: the first resource-needing client's ``compile_gpu``."""
    wanting = (c for c in clients if Need.COMPILED_RESOURCES in getattr(c, "needs", ()))
    return next((c.compile_gpu for c in wanting if getattr(c, "compile_gpu", None)), None)


def user_error(exc: Exception, kernel: str, sites: SiteFinder) -> KernelError:
    """A Python error raised while running kernel code, placed at the user's innermost line."""
    site = None
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        if sites.is_user(frame.f_code):
            site = sites.frame_site(frame)
    return KernelError(f"{type(exc).__name__}: {exc}", kernel=kernel, site=site)
