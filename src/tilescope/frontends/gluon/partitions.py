"""Warp-specialised partitions (``gl.warp_specialize``) as cooperating threads of one batch.

On the GPU the partitions of a program run at once on different warps and meet only through
shared memory and mbarriers. Here each partition runs in its own thread over the same batch of
programs, sharing the program's shared memory and barriers, and exactly one runs at a time. The
schedule is fixed and interleaves as much as barriers allow: the worker partitions start (the
producers, in the usual pipeline), and at every mbarrier operation (an arrive, an expect, a TMA
load's arrival, a wait that passes) the baton goes round to the next partition that can make
progress; a wait on a phase that has not completed passes it on too. When every partition that has
not finished waits and no wait can pass, the programs hang on the GPU too, and that is reported at
a waiting partition's wait.

Partitions order their shared-memory accesses only through mbarriers: an ``arrive`` (and the
arrival a TMA load makes when it lands, on behalf of the partition that issued it) releases what
its partition did so far, a ``wait`` that passes acquires every release of the phases completed.
Each partition keeps a vector clock; :class:`Shadow` records who last wrote and read each shared
element and when, so an access of one partition that another partition's access to the same
element is not ordered with (by any arrive-wait chain) is a ``shared memory race`` at the access,
naming the other side, in whatever order this schedule ran them.

Not modelled yet: interleavings other than this one (see docs/frontends.md, Gluon, item 4).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class _Stop(BaseException):
    """Ends a partition thread when another partition failed."""


class Partitions:
    """The partitions of one ``warp_specialize`` region and the baton they pass."""

    def __init__(self, count: int):
        self._cond = threading.Condition()
        self.count = count
        self.turn = 1 % count  # the workers first: they produce what the default partition consumes
        self.done = [False] * count
        #: per waiting partition: whether its wait can pass now, and the error if it never can
        self.waiting: dict[int, tuple[Callable[[], bool], Callable[[], BaseException]]] = {}
        self.error: BaseException | None = None
        self.results: list[Any] = [None] * count
        self._local = threading.local()
        #: row i: partition i's vector clock (its own epoch at [i, i]; what it has seen of the others)
        self.clocks = np.eye(count, dtype=np.int64)
        self.shadows: dict[int, Shadow] = {}

    def release(self) -> np.ndarray:
        """The running partition publishes what it did so far (an arrive); its clock at that point."""
        i = self.current
        published = self.clocks[i].copy()
        self.clocks[i, i] += 1
        return published

    def acquire(self, clock: np.ndarray) -> None:
        """The running partition has seen everything ``clock`` covers (a wait that passed)."""
        i = self.current
        np.maximum(self.clocks[i], clock, out=self.clocks[i])

    def shadow(self, allocation: Any) -> Shadow:
        """The access history of ``allocation`` (made on first use)."""
        found = self.shadows.get(id(allocation))
        if found is None:
            found = self.shadows[id(allocation)] = Shadow.empty(self.count, allocation.shape)
        return found

    @property
    def current(self) -> int | None:
        """The partition this thread runs (None outside a partition thread)."""
        return getattr(self._local, "index", None)

    def run(self, bodies: list[Callable[[], Any]]) -> Any:
        """Run the partitions (``bodies[0]`` the default one) to the end; the default's result."""
        threads = [threading.Thread(target=self._worker, args=job, daemon=True) for job in enumerate(bodies)]
        for thread in threads:
            thread.start()
        with self._cond:
            self._cond.wait_for(lambda: all(self.done) or self.error is not None)
            if self.error is not None:
                self._cond.notify_all()
        for thread in threads:
            thread.join(timeout=5)
        if self.error is not None:
            raise self.error
        return self.results[0]

    def _worker(self, index: int, body: Callable[[], Any]) -> None:
        self._local.index = index
        try:
            with self._cond:
                self._cond.wait_for(lambda: self.turn == index or self.error is not None)
                if self.error is not None:
                    return
            self.results[index] = body()
            with self._cond:
                self.done[index] = True
                if not self._pass_on(index) and not all(self.done):
                    # every other partition waits for a phase nothing will complete
                    self.error = next(iter(self.waiting.values()))[1]()
        except _Stop:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the thread that called warp_specialize
            with self._cond:
                if self.error is None:
                    self.error = exc
                self.done[index] = True
                self._cond.notify_all()

    def _pass_on(self, index: int) -> bool:
        """Give the baton to the next partition that can run (call holding the lock); False: none can."""
        for step in range(1, self.count + 1):
            other = (index + step) % self.count
            if self.done[other]:
                continue
            waiting = self.waiting.get(other)
            if waiting is None or waiting[0]():
                self.turn = other
                self._cond.notify_all()
                return True
        self._cond.notify_all()
        return False

    def switch(self) -> None:
        """At an mbarrier operation: let the next partition that can make progress run."""
        index = self.current
        if index is None:
            return
        with self._cond:
            self._pass_on(index)
            self._cond.wait_for(lambda: self.turn == index or self.error is not None)
            if self.error is not None:
                raise _Stop()

    def wait_until(self, ready: Callable[[], bool], hang: Callable[[], BaseException]) -> None:
        """Block this partition until ``ready()`` holds, letting the others run; raise ``hang()``
        when no partition can make progress."""
        index = self.current
        with self._cond:
            self.waiting[index] = (ready, hang)
            if not self._pass_on(index):
                del self.waiting[index]
                raise hang()
            self._cond.wait_for(lambda: self.turn == index or self.error is not None)
            del self.waiting[index]
            if self.error is not None:
                raise _Stop()


@dataclass
class Access:
    """One shared-memory access of a partition: what it was and where."""

    partition: int
    what: str  # "reads" or "writes"
    site: Any


@dataclass
class Shadow:
    """Per element of an allocation: the last write (partition, clock, access) and each partition's
    last read (clock, access); clock 0 means none."""

    writer: np.ndarray
    write_clock: np.ndarray
    write_access: np.ndarray
    read_clock: np.ndarray  # (partitions, *shape)
    read_access: np.ndarray
    accesses: list[Access] = field(default_factory=list)

    @classmethod
    def empty(cls, count: int, shape: tuple[int, ...]) -> Shadow:
        """No access yet."""

        def zeros(*lead: int) -> np.ndarray:
            return np.zeros((*lead, *shape), dtype=np.int64)

        return cls(np.full(shape, -1, dtype=np.int64), zeros(), zeros(), zeros(count), zeros(count))

    def access(self, region: tuple, clocks: np.ndarray, me: int, writes: bool, site: Any) -> Access | None:
        """Record an access of partition ``me`` (clock row ``clocks``) to ``region``; the earlier
        access of another partition it is not ordered with, if any."""
        other = self._unordered(region, clocks, me, writes)
        self.accesses.append(Access(me, "writes" if writes else "reads", site))
        index = len(self.accesses) - 1
        if writes:
            self.writer[region], self.write_clock[region], self.write_access[region] = me, clocks[me], index
        else:
            self.read_clock[me][region], self.read_access[me][region] = clocks[me], index
        return other

    def _unordered(self, region: tuple, clocks: np.ndarray, me: int, writes: bool) -> Access | None:
        writer = self.writer[region]
        seen = clocks[np.maximum(writer, 0)]
        racing = (writer >= 0) & (writer != me) & (self.write_clock[region] > seen)
        if racing.any():
            return self.accesses[int(self.write_access[region][racing].flat[0])]
        if writes:
            for p in range(self.read_clock.shape[0]):
                if p == me:
                    continue
                racing = self.read_clock[p][region] > clocks[p]
                if racing.any():
                    return self.accesses[int(self.read_access[p][region][racing].flat[0])]
        return None
