"""mbarriers and the asynchronous copies they track: phases, arrivals, expected bytes, waits.

An mbarrier counts the arrivals of its current phase (``mbarrier.init(bar, count)``) and the bytes
still expected from asynchronous copies (``mbarrier.expect(bar, nbytes)`` arrives once and expects
``nbytes``; a TMA load into shared memory counts its bytes off when it lands). When both reach
zero the phase completes and the next one starts. ``mbarrier.wait(bar, parity)`` returns once the
current phase's parity differs from ``parity``; a wait for the current phase, which nothing can
complete while the program waits, is the hang it would be on the GPU: an error at the wait.

On the CPU a TMA load lands at once, but its data is only *visible* to the program after a wait
that observes the phase the copy completed: until then the destination is in flight. Reading it
(``smem.load``, a TMA store from it) before that wait is the bug a missing ``mbarrier.wait`` makes
on the GPU, where the read sees stale data: it is reported as a ``shared memory race``
fault at the read's line, naming the copy's line, the barrier and the phase to wait for.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...engine.access import fault
from ...engine.errors import KernelError
from ...ir import FaultKind, Site
from .shared import View


@dataclass
class Barrier:
    """One mbarrier's state."""

    name: str
    count: int
    arrivals: int = 0  # arrivals still missing in the current phase
    expected: int = 0  # bytes still expected in the current phase
    completed: int = 0  # phases completed so far
    pending: np.ndarray | None = None  # the partitions' clocks the current phase's arrivals release
    released: np.ndarray | None = None  # what the completed phases released (for waits to acquire)


@dataclass
class InFlight:
    """An asynchronous copy into shared memory that no wait has observed yet."""

    view: View
    barrier: tuple
    phase: int  # the phase number whose completion makes it visible
    site: Site | None
    lanes: np.ndarray = field(repr=False)  # (allocation shape) elements it writes


class Barriers:
    """The mbarriers of the programs of one batch, and the copies they track."""

    def __init__(self, launch: Any):
        self.launch = launch
        self.state: dict[tuple, Barrier] = {}
        self.in_flight: list[InFlight] = []
        self.partitions: Any = None  # the warp-specialised partitions running now (:mod:`.partitions`)

    def for_launch(self, launch: Any) -> Barriers:
        """The same barriers and copies, seen from ``launch`` (a partition's view of the batch)."""
        view = copy.copy(self)
        view.launch = launch
        return view

    @staticmethod
    def key(bar: View) -> tuple:
        """A barrier's identity: its allocation and element."""
        return (id(bar.allocation), bar.start)

    def _get(self, bar: View) -> Barrier:
        found = self.state.get(self.key(bar))
        if found is None:
            raise KernelError(
                f"mbarrier `{bar.allocation.name}` is used before mbarrier.init",
                kernel=self.launch.kernel_name,
                site=self.launch.site(),
            )
        return found

    def init(self, bar: View, count: int) -> None:
        """``mbarrier.init``."""
        self.state[self.key(bar)] = Barrier(bar.allocation.name, count, arrivals=count)

    def invalidate(self, bar: View) -> None:
        """``mbarrier.invalidate``: the barrier's copies must have been waited for already."""
        self.state.pop(self.key(bar), None)

    def expect(self, bar: View, nbytes: int) -> None:
        """``mbarrier.expect``: arrive once, expecting ``nbytes`` more of asynchronous copies."""
        state = self._get(bar)
        state.expected += nbytes
        self._arrive(state, 1)

    def _release(self, state: Barrier) -> None:
        """The running partition's arrival releases what it did so far into the barrier's phase."""
        partitions = self.partitions
        if partitions is None or partitions.current is None:
            return
        clock = partitions.release()
        state.pending = clock if state.pending is None else np.maximum(state.pending, clock)

    def arrive(self, bar: View, count: int) -> None:
        """``mbarrier.arrive``."""
        self._arrive(self._get(bar), count)

    def transfer(self, bar: View, dest: View, nbytes: int) -> None:
        """A TMA load of ``nbytes`` into ``dest`` landed; its bytes count against ``bar``'s phase."""
        state = self._get(bar)
        lanes = np.zeros(dest.allocation.shape, dtype=bool)
        ranges, _ = dest.region()
        lanes[tuple(slice(lo, hi) for lo, hi in ranges)] = True
        self.in_flight.append(InFlight(dest, self.key(bar), state.completed, self.launch.site(), lanes))
        self.check_write(dest)  # the copy engine writes on behalf of the partition that issued it
        state.expected -= nbytes
        self._release(state)
        self._complete_if_done(state)
        self._switch()

    def _arrive(self, state: Barrier, count: int) -> None:
        state.arrivals -= count
        self._release(state)
        self._complete_if_done(state)
        self._switch()

    def _switch(self) -> None:
        if self.partitions is not None:
            self.partitions.switch()

    @staticmethod
    def _complete_if_done(state: Barrier) -> None:
        if state.arrivals <= 0 and state.expected <= 0:
            state.completed += 1
            state.arrivals, state.expected = state.count, 0
            if state.pending is not None:
                done = state.pending if state.released is None else np.maximum(state.released, state.pending)
                state.released, state.pending = done, None

    def wait(self, bar: View, parity: int) -> None:
        """``mbarrier.wait(bar, parity)``: passes once the current phase's parity differs from
        ``parity`` (the phase of that parity has completed); the copies of every phase before the
        current one become visible. A wait whose phase is the current, incomplete one never returns
        on the GPU: nothing else of the program runs meanwhile to complete it (copies have landed)."""
        state = self._get(bar)
        partitions = self.partitions
        if state.completed % 2 == parity % 2:
            site = self.launch.site()
            if partitions is None or partitions.current is None:
                raise self._hang(state, parity, site, "")
            also = "; every other partition waits too"
            partitions.wait_until(lambda: state.completed % 2 != parity % 2,
                                  lambda: self._hang(state, parity, site, also))  # fmt: skip
        if state.released is not None and partitions is not None and partitions.current is not None:
            partitions.acquire(state.released)
            self._switch()
        key = self.key(bar)
        seen = state.completed
        self.in_flight[:] = [f for f in self.in_flight if not (f.barrier == key and f.phase < seen)]

    def _hang(self, state: Barrier, parity: int, site: Any, also: str) -> KernelError:
        """The error of a wait that never returns (``also``: what the other partitions do)."""
        done = f"{state.completed} phase{'s' if state.completed != 1 else ''} completed"
        return KernelError(
            f"mbarrier.wait on `{state.name}` for parity {parity % 2} never returns (the program hangs "
            f"here on the GPU): {done}, and its current phase {state.completed} (parity "
            f"{state.completed % 2}) still misses {max(state.arrivals, 0)} arrival(s) and "
            f"{max(state.expected, 0)} expected byte(s) that nothing in flight delivers{also}; toggle the "
            "phase after each wait (phase ^= 1), expect and issue the copies before waiting, and arrive "
            "on every barrier another partition waits for",
            kernel=self.launch.kernel_name,
            site=site,
        )

    def check_write(self, view: View) -> None:
        """Report a write of shared memory that another partition's access is not ordered with."""
        self._ordered(view, writes=True)

    def _ordered(self, view: View, writes: bool) -> bool:
        """Record an access of the running partition; report (and return False for) one that an
        earlier access of another partition is not ordered with by an arrive-wait chain."""
        partitions = self.partitions
        if partitions is None or partitions.current is None:
            return True
        ranges, _ = view.region()
        region = tuple(slice(lo, hi) for lo, hi in ranges)
        me, site = partitions.current, self.launch.site()
        other = partitions.shadow(view.allocation).access(region, partitions.clocks[me], me, writes, site)
        if other is None:
            return True
        name = view.allocation.name
        line = f"line {other.site.line}" if other.site is not None else "an earlier line"
        fault(
            self.launch,
            FaultKind.SHARED_RACE,
            bad=np.ones((self.launch.pids.shape[0],), dtype=bool),
            message=f"partition {me} {'writes' if writes else 'reads'} `{name}` (shared), which partition "
            f"{other.partition} {'wrote' if other.what == 'writes' else 'read'} at {line} with no mbarrier "
            "arrive and wait ordering the two",
            attrs={
                "rule": "partitions order their shared-memory accesses through mbarriers",
                "fix": f"after its access at {line}, partition {other.partition} arrives on a barrier this "
                "partition waits on before its access",
            },
        )
        return False

    def check_read(self, view: View) -> None:
        """Report a read of shared memory that a copy still in flight writes, or that another
        partition's write is not ordered with."""
        ranges, _ = view.region()
        region = tuple(slice(lo, hi) for lo, hi in ranges)
        for pending in self.in_flight:
            if pending.view.allocation is not view.allocation or not pending.lanes[region].any():
                continue
            state = self.state.get(pending.barrier)
            bar = state.name if state is not None else "its barrier"
            line = f"line {pending.site.line}" if pending.site is not None else "an earlier line"
            fault(
                self.launch,
                FaultKind.SHARED_RACE,
                bad=np.ones((self.launch.pids.shape[0],), dtype=bool),
                message=f"reads `{view.allocation.name}` (shared) while the TMA load into it at {line} may "
                f"still be in flight: no mbarrier.wait on `{bar}` for phase {pending.phase} (parity "
                f"{pending.phase % 2}) before this read",
                attrs={
                    "rule": "wait on the copy's mbarrier before reading its destination",
                    "fix": f"mbarrier.wait({bar}, phase={pending.phase % 2}) before the read",
                },
            )
            return
        self._ordered(view, writes=False)
