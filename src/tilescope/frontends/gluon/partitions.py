"""Warp-specialised partitions (``gl.warp_specialize``) as cooperating threads of one batch.

On the GPU the partitions of a program run at once on different warps and meet only through
shared memory and mbarriers. Here each partition runs in its own thread over the same batch of
programs, sharing the program's shared memory and barriers, and exactly one runs at a time: a
partition runs until it waits on an mbarrier phase that has not completed, then the next partition
that can make progress runs (in partition order, the default partition first). When every
partition that has not finished waits and no wait can pass, the programs hang on the GPU too, and
that is reported at the wait of the partition that blocked first.

Not modelled yet: interleavings other than this one, and races between partitions (their shared
accesses are not in the op stream; see docs/frontends.md, Gluon, items 2 and 4).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class _Stop(BaseException):
    """Ends a partition thread when another partition failed."""


class Partitions:
    """The partitions of one ``warp_specialize`` region and the baton they pass."""

    def __init__(self, count: int):
        self._cond = threading.Condition()
        self.count = count
        self.turn = 0
        self.done = [False] * count
        #: per waiting partition: whether its wait can pass now, and the error if it never can
        self.waiting: dict[int, tuple[Callable[[], bool], Callable[[], BaseException]]] = {}
        self.error: BaseException | None = None
        self.results: list[Any] = [None] * count
        self._local = threading.local()

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
