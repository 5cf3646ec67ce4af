"""The client API: what an analysis client subscribes to and what it reports.

A client declares the op kinds it wants (``kinds``), the fault kinds it turns into findings
(``fault_kinds``; faults nobody handles raise), whether it needs values (``needs_values``) or only
addresses and masks (``addresses_only``), and whether its events may stream before an attempt
commits (``buffered = False``). It receives launch/attempt/op/fault hooks and yields a
:class:`Report`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from ..ir import Fault, LaunchInfo, OpKind, OpRecord


@dataclass
class Finding:
    """One problem a client found, in the fields every client shares."""

    kind: str
    severity: str  # "error", "warning", "note"
    message: str
    kernel: str
    file: str
    line: int
    column: int
    program_ids: list[tuple[int, int, int]]
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        d = asdict(self)
        d["program_ids"] = [list(p) for p in self.program_ids]
        return d


@dataclass
class Report:
    """What one client has to say about the launches it saw."""

    client: str
    findings: list[Finding] = field(default_factory=list)
    summary: dict = field(default_factory=dict)

    @property
    def errors(self) -> list[Finding]:
        """Findings of severity ``error``."""
        return [f for f in self.findings if f.severity == "error"]

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON (stable schema: client, summary, findings)."""
        return json.dumps(
            {
                "client": self.client,
                "summary": self.summary,
                "findings": [f.to_dict() for f in self.findings],
            },
            indent=indent,
            default=str,
        )

    def __rich__(self) -> Any:
        from ..render import render_report

        return render_report(self)


class Client:
    """Base class of analysis clients; override the hooks you need."""

    name: str = "client"
    kinds: frozenset[OpKind] = frozenset()
    fault_kinds: frozenset[str] = frozenset()
    needs_values: bool = False
    addresses_only: bool = False
    buffered: bool = True

    def on_launch_start(self, launch: LaunchInfo) -> None:
        """A launch begins (its arguments are in ``launch.arguments``)."""

    def on_launch_end(self, launch: LaunchInfo) -> None:
        """A launch ended."""

    def on_attempt_begin(self, program_ids) -> None:
        """Streaming clients only: a batch of programs starts."""

    def on_attempt_commit(self) -> None:
        """Streaming clients only: the batch's events are final."""

    def on_attempt_abort(self) -> None:
        """Streaming clients only: drop the batch's events."""

    def on_op(self, record: OpRecord) -> None:
        """One op executed by a batch of programs."""

    def on_fault(self, fault: Fault) -> None:
        """A fault of a kind in ``fault_kinds``."""

    def report(self) -> Report:
        """The client's report so far."""
        return Report(self.name)
