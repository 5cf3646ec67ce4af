"""The one place clients hook into a running launch.

Clients subscribe to op kinds and fault kinds and declare their needs (:class:`~tilescope.ir.Need`);
the hub serves the union. Records of an attempt that the executor abandons (divergence, a needed
value, a batch too large) must never reach a client as if they happened: *buffered* clients (the
default) get an attempt's records only when it commits; *streaming* clients (``buffered = False``,
e.g. a tracer writing to disk) get them at once, with the attempt hooks that let them drop an
aborted attempt's output. Clients that need ``Need.COMPUTE_COUNTS`` get, when an attempt commits,
one :class:`~tilescope.ir.ComputeCount` per distinct compute op it ran instead of a record per op
(an aborted attempt's counts are dropped).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import (
    ArgumentInfo,
    ComputeCount,
    Fault,
    LaunchInfo,
    LoopEvent,
    LoopEventKind,
    Loops,
    Need,
    OpKind,
    OpRecord,
    Site,
)


class Hub:
    """Dispatches launch, attempt, op, loop, argument and fault events to the clients of one launch."""

    def __init__(self, clients: list[Any], launch_id: int = 0):
        self.clients = list(clients)
        self.launch_id = launch_id
        self.attempt = 0
        self._seq = 0
        self._pending: list[tuple[str, Any]] = []
        self._counts: dict[tuple, int] = {}  # the current attempt's compute counts, by ComputeCount key
        self._op_kinds = {k for c in self.clients for k in getattr(c, "kinds", ())}
        self._fault_kinds = {k for c in self.clients for k in getattr(c, "fault_kinds", ())}
        self.needs: frozenset[Need] = frozenset(n for c in self.clients for n in getattr(c, "needs", ()))
        self.needs_values = Need.VALUES in self.needs
        self.wants_loops = Need.LOOP_EVENTS in self.needs
        self.wants_memory = Need.MEMORY in self.needs
        self.wants_counts = Need.COMPUTE_COUNTS in self.needs

    # ------------------------------------------------------------------ subscriptions

    def wants(self, kind: OpKind) -> bool:
        """True when some client subscribed to op records of ``kind``."""
        return kind in self._op_kinds

    def handles(self, fault_kind: str) -> bool:
        """True when some client turns faults of ``fault_kind`` into findings (else they raise)."""
        return fault_kind in self._fault_kinds

    # ------------------------------------------------------------------ launch and attempts

    def launch_start(self, info: LaunchInfo) -> None:
        """A launch begins."""
        for c in self.clients:
            c.on_launch_start(info)

    def launch_end(self, info: LaunchInfo) -> None:
        """A launch ended (normally or not)."""
        for c in self.clients:
            c.on_launch_end(info)

    def attempt_begin(self, pids) -> None:
        """A batch of programs starts executing."""
        self.attempt += 1
        self._pending = []
        self._counts = {}
        for c in self.clients:
            if not getattr(c, "buffered", True):
                c.on_attempt_begin(pids)

    def attempt_commit(self) -> None:
        """The batch finished: its records become real."""
        pending, self._pending = self._pending, []
        counts, self._counts = self._counts, {}
        for c in self.clients:
            if getattr(c, "buffered", True):
                for what, item in pending:
                    self._deliver(c, what, item)
            else:
                c.on_attempt_commit()
        if counts:
            tallies = [ComputeCount(kind, self.launch_id, *rest, n) for (kind, *rest), n in counts.items()]
            for c in self.clients:
                if Need.COMPUTE_COUNTS in getattr(c, "needs", ()):
                    for tally in tallies:
                        c.on_compute(tally)

    def attempt_abort(self) -> None:
        """The batch is abandoned: drop its records."""
        self._pending = []
        self._counts = {}
        for c in self.clients:
            if not getattr(c, "buffered", True):
                c.on_attempt_abort()

    # ------------------------------------------------------------------ events

    def emit_op(self, **fields: Any) -> None:
        """Record one op executed by the current batch."""
        self._seq += 1
        record = OpRecord(launch_id=self.launch_id, seq=self._seq, attempt=self.attempt, **fields)
        self._dispatch("op", record, lambda c: record.kind in getattr(c, "kinds", ()))

    def count_compute(self, key: tuple, programs: int) -> None:
        """Add ``programs`` runs of one compute op to the current attempt's counts; ``key`` is
        ``(kind, site, dtype, shape, operands, attrs)`` as :class:`~tilescope.ir.ComputeCount` names them."""
        if programs:
            self._counts[key] = self._counts.get(key, 0) + programs

    def fault(self, fault: Fault) -> None:
        """Report a fault to the clients that handle its kind."""
        self._dispatch("fault", fault, lambda c: fault.kind in getattr(c, "fault_kinds", ()))

    def loop_event(self, kind: LoopEventKind, site: Site | None, iteration: int, pids: np.ndarray,
                   loops: Loops) -> None:  # fmt: skip
        """A loop was entered, iterated or left by the current batch (for clients that need loops)."""
        event = LoopEvent(kind, self.launch_id, site, iteration, pids, loops)
        self._dispatch("loop", event, lambda c: Need.LOOP_EVENTS in getattr(c, "needs", ()))

    def argument(self, info: ArgumentInfo) -> None:
        """A tensor was registered mid-launch (found behind a pointer loaded from memory)."""
        for c in self.clients:
            if Need.ARGUMENT_EVENTS in getattr(c, "needs", ()):
                c.on_argument(info)

    def memory(self, info: ArgumentInfo, elements: np.ndarray) -> None:
        """A tensor argument's elements as the launch leaves them (for clients that need memory)."""
        for c in self.clients:
            if Need.MEMORY in getattr(c, "needs", ()):
                c.on_memory(info, elements)

    def _dispatch(self, what: str, item: Any, subscribed) -> None:
        buffered = False
        for c in self.clients:
            if not subscribed(c):
                continue
            if getattr(c, "buffered", True):
                buffered = True
            else:
                self._deliver(c, what, item)
        if buffered:
            self._pending.append((what, item))

    @staticmethod
    def _deliver(client: Any, what: str, item: Any) -> None:
        if what == "op":
            if item.kind in getattr(client, "kinds", ()):
                client.on_op(item)
        elif what == "fault":
            if item.kind in getattr(client, "fault_kinds", ()):
                client.on_fault(item)
        elif Need.LOOP_EVENTS in getattr(client, "needs", ()):
            client.on_loop(item)
