"""The one place observers hook into a running launch.

Clients subscribe to op kinds and fault kinds. Records of an attempt that the executor abandons
(divergence, a needed value, a batch too large) must never reach a client as if they happened:
*buffered* clients (the default) get an attempt's records only when it commits; *streaming* clients
(``buffered = False``, e.g. a tracer writing to disk) get them at once, with the attempt hooks that
let them drop an aborted attempt's output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ir import Fault, LaunchInfo, OpKind, OpRecord

#: process-wide callables run with every launch's hub as it starts (``tilescope.reports()`` finds
#: every client that saw a launch this way); observers must not raise
LAUNCH_OBSERVERS: list[Callable[[Hub, LaunchInfo], None]] = []


class Hub:
    """Dispatches launch, attempt, op and fault events to the clients of one launch."""

    def __init__(self, clients: list[Any], launch_id: int = 0):
        self.clients = list(clients)
        self.launch_id = launch_id
        self._seq = 0
        self._pending: list[tuple[str, Any]] = []
        self._op_kinds = {k for c in self.clients for k in getattr(c, "kinds", ())}
        self._fault_kinds = {k for c in self.clients for k in getattr(c, "fault_kinds", ())}
        self.needs_values = any(getattr(c, "needs_values", False) for c in self.clients)
        self.wants_overflow = "int32 overflow" in self._fault_kinds

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
        for observe in LAUNCH_OBSERVERS:
            observe(self, info)
        for c in self.clients:
            c.on_launch_start(info)

    def launch_end(self, info: LaunchInfo) -> None:
        """A launch ended (normally or not)."""
        for c in self.clients:
            c.on_launch_end(info)

    def attempt_begin(self, pids) -> None:
        """A batch of programs starts executing."""
        self._pending = []
        for c in self.clients:
            if not getattr(c, "buffered", True):
                c.on_attempt_begin(pids)

    def attempt_commit(self) -> None:
        """The batch finished: its records become real."""
        pending, self._pending = self._pending, []
        for c in self.clients:
            if getattr(c, "buffered", True):
                for what, item in pending:
                    self._deliver(c, what, item)
            else:
                c.on_attempt_commit()

    def attempt_abort(self) -> None:
        """The batch is abandoned: drop its records."""
        self._pending = []
        for c in self.clients:
            if not getattr(c, "buffered", True):
                c.on_attempt_abort()

    # ------------------------------------------------------------------ events

    def emit_op(self, **fields: Any) -> None:
        """Record one op executed by the current batch."""
        self._seq += 1
        record = OpRecord(launch_id=self.launch_id, seq=self._seq, **fields)
        self._dispatch("op", record, record.kind)

    def fault(self, fault: Fault) -> None:
        """Report a fault to the clients that handle its kind."""
        self._dispatch("fault", fault, fault.kind)

    def _dispatch(self, what: str, item: Any, kind: Any) -> None:
        attr = "kinds" if what == "op" else "fault_kinds"
        buffered = False
        for c in self.clients:
            if kind not in getattr(c, attr, ()):
                continue
            if getattr(c, "buffered", True):
                buffered = True
            else:
                self._deliver(c, what, item)
        if buffered:
            self._pending.append((what, item))

    @staticmethod
    def _deliver(client: Any, what: str, item: Any) -> None:
        kind = item.kind
        if what == "op" and kind in getattr(client, "kinds", ()):
            client.on_op(item)
        elif what == "fault" and kind in getattr(client, "fault_kinds", ()):
            client.on_fault(item)
