"""Concurrent mode: programs that wait on each other run interleaved, op by op, on a seeded schedule.

Batched execution cannot run a kernel whose programs wait for one another (a consumer spinning on a
flag a later program sets). Such launches run here: up to ``slots`` programs are in flight, each in
its own thread, and exactly one thread runs at a time. At every memory operation and loop test the
running program hands the baton to an in-flight program chosen by a seeded random generator, so
ordering bugs show up, and show up the same way on every run with the same seed. When the programs
in flight keep running without changing memory or finishing (each waits for another), that is a
deadlock on the GPU too, and it is reported as such.
"""

from __future__ import annotations

import random
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import KernelError

MAIN = -1


class Scheduler:
    """One baton among the main thread and the in-flight programs; a seeded choice of who runs."""

    def __init__(self, seed: int, patience: int, memory: Any):
        self._cond = threading.Condition()
        self._turn = MAIN
        self._rng = random.Random(seed)
        self.active: list[int] = []
        self.idle_steps = 0  # yield points since memory last changed or a program finished
        self.patience = patience  # idle yield points allowed per in-flight program
        self.memory = memory
        self._version = memory.version
        self.error: BaseException | None = None
        self.step = 0  # yield points so far: orders the records of a concurrent run
        self.schedule: list[int] = []  # the token that ran after each yield point (the interleaving)

    def wait_turn(self, token: int) -> None:
        """Block until ``token`` holds the baton."""
        with self._cond:
            self._cond.wait_for(lambda: self._turn == token)

    def hand_to(self, token: int) -> None:
        """Give the baton to ``token`` (no wait)."""
        with self._cond:
            self._turn = token
            self._cond.notify_all()

    def switch(self, token: int, idle: bool = True) -> None:
        """Called by the running program at a yield point: let a random in-flight program run.

        ``idle``: the point is a memory access, so passing it without any memory changing counts
        toward a deadlock (a loop test does not: a long loop over local values is not a wait).
        """
        if self.memory.version != self._version:
            self._version = self.memory.version
            self.idle_steps = 0
        if idle:
            self.idle_steps += 1
        if self.idle_steps > self.patience * max(1, len(self.active)):
            raise _Deadlock()
        nxt = self._rng.choice(self.active)
        self.step += 1
        self.schedule.append(nxt)
        if nxt != token:
            self.hand_to(nxt)
            self.wait_turn(token)

    def finished(self, token: int) -> None:
        """A program ended: drop it and give the baton back to the main thread."""
        self.active.remove(token)
        self.idle_steps = 0
        self.hand_to(MAIN)


class _Deadlock(BaseException):
    """Every in-flight program kept waiting past the step limit."""


def run_concurrent(
    launch: Any,
    ids: np.ndarray,
    run_program: Callable[[Any], None],
    *,
    seed: int = 0,
    slots: int = 132,
    patience: int = 200,
) -> None:
    """Run programs ``ids`` interleaved; ``run_program(program_launch)`` executes one program."""
    from .grid import program_ids

    sched = Scheduler(seed, patience, launch.memory)
    pending = deque(int(i) for i in ids)
    threads: list[threading.Thread] = []
    deadlocked: list[np.ndarray] = []

    def worker(token: int, pids: np.ndarray) -> None:
        sched.wait_turn(token)
        try:
            run_program(launch.fork(pids, sched, token))
        except _Deadlock:
            deadlocked.append(pids)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            if sched.error is None:
                sched.error = exc
        finally:
            sched.finished(token)

    token = 0
    try:
        while pending or sched.active:
            while pending and len(sched.active) < slots and sched.error is None and not deadlocked:
                pids = program_ids(np.array([pending.popleft()]), launch.grid)
                sched.active.append(token)
                thread = threading.Thread(target=worker, args=(token, pids), daemon=True)
                threads.append(thread)
                thread.start()
                token += 1
            if not sched.active:
                break
            sched.hand_to(sched._rng.choice(sched.active))
            sched.wait_turn(MAIN)
            if sched.error is not None or deadlocked:
                _drain(sched)
                break
    except BaseException:  # a KeyboardInterrupt in the main thread: no kernel code may run on after it
        _stop(sched, threads)
        raise
    for thread in threads:
        thread.join(timeout=5)
    if sched.error is not None:
        raise sched.error
    if deadlocked:
        waiting = ", ".join(str(tuple(int(v) for v in p[0])) for p in deadlocked[:8])
        raise KernelError(
            f"deadlock: programs in flight kept waiting for each other and none finished "
            f"(waiting: {waiting}); a GPU with {slots} programs in flight would hang too",
            kernel=launch.kernel_name,
        )


def _stop(sched: Scheduler, threads: list[threading.Thread]) -> None:
    """Stop every in-flight program and end its thread, however often the main thread is interrupted.

    The program holding the baton may be running: it stops at its next yield point and hands the
    baton back, then the others are drained in turn.
    """
    sched.patience = -1
    while True:
        try:
            sched.wait_turn(MAIN)
            _drain(sched)
            for thread in threads:
                thread.join()
            return
        except KeyboardInterrupt:
            continue


def _drain(sched: Scheduler) -> None:
    """Stop every in-flight program: each raises at its next yield point."""
    sched.patience = -1
    while sched.active:
        sched.hand_to(sched.active[0])
        sched.wait_turn(MAIN)
