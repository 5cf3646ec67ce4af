"""A sweep's one merged report: every cell's reports merged per client, each finding with the cells
that triggered it, and the cells with how they ended.

Findings merge as reports across processes do (:meth:`Report.merge`: by kind, site and argument);
``details["cells"]`` lists the ids of the cells whose reports had that finding, in spec order. The
report is JSON (``to_dict``; schema in docs/sweep.md), SARIF (the sanitizer's writer; cells that
did not finish become tool notifications) and rich tables.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from ..clients.base import Report, merge_by_origin
from .cell import OK, STATUSES, CellResult

_SHOWN_CELLS = 3  # cells named per finding in the table (the JSON has them all)


@dataclass
class SweepReport:
    """Cells in spec order and one merged report per client."""

    name: str
    cells: list[CellResult]
    reports: list[Report]

    @classmethod
    def build(cls, name: str, results: list[CellResult]) -> SweepReport:
        """Merge the reports of ``results`` (in spec order) and name each finding's cells."""
        return cls(name, results, merge_by_origin([(r.cell.id, r.reports) for r in results], "cells"))

    def counts(self) -> dict[str, int]:
        """How many cells ended each way (every status, zeros included)."""
        return {status: sum(c.status == status for c in self.cells) for status in STATUSES}

    @property
    def errors(self) -> int:
        """Error findings plus cells that did not end ``ok``."""
        return sum(len(r.errors) for r in self.reports) + sum(c.status != OK for c in self.cells)

    def to_dict(self) -> dict:
        """JSON-ready dict: name, counts, cells (without their own reports) and merged reports."""
        cells = []
        for result in self.cells:
            d = result.to_dict()
            d.pop("reports")
            d["findings"] = result.findings
            cells.append(d)
        return {"sweep": self.name, "counts": self.counts(), "cells": cells,
                "reports": [r.to_dict() for r in self.reports]}

    def save(self, path: str | os.PathLike) -> None:
        """Write :meth:`to_dict` to ``path`` as JSON."""
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh, indent=2, default=str)

    def to_sarif(self) -> dict:
        """A SARIF 2.1.0 log: one run per client whose report exports SARIF (the sanitizer,
        racecheck), with each finding's cells among its properties; every run's invocation lists the
        cells that did not end ok as tool execution notifications."""
        from .. import __version__
        from ..clients import sarif
        from ..clients.diagnostics import DiagnosticReport

        logs = [r.to_sarif() for r in self.reports if isinstance(r, DiagnosticReport)]
        log = logs[0] if logs else sarif.to_sarif([], "tilescope-sweep", __version__, {})
        log["runs"] = [run for each in logs for run in each["runs"]] or log["runs"]
        notes = [{"level": "error", "message": {"text": f"cell {c.cell.id} {c.status}: {c.message}"},
                  "properties": {"cell": c.cell.id, "status": c.status}}
                 for c in self.cells if c.status != OK]
        for run in log["runs"]:
            run["invocations"] = [{"executionSuccessful": not notes, "toolExecutionNotifications": notes}]
        return log

    def write_sarif(self, path: str | os.PathLike) -> None:
        """Write :meth:`to_sarif` to ``path``."""
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_sarif(), fh, indent=2)

    def headline(self) -> str:
        """``sweep softmax: 126 cells (124 ok, 2 failed), 1 finding``."""
        counts = {k: v for k, v in self.counts().items() if v}
        findings = sum(len(r.findings) for r in self.reports)
        parts = ", ".join(f"{v} {k}" for k, v in counts.items())
        n = len(self.cells)
        return (f"sweep {self.name}: {n} cell{'s' if n != 1 else ''} ({parts}), "
                f"{findings} finding{'s' if findings != 1 else ''}")

    def __rich__(self) -> Any:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        from ..render import display_path

        parts: list[Any] = [report for report in self.reports if report.findings]  # each client's diagnostics
        findings = [(r.client, f) for r in self.reports for f in r.findings]
        if findings:
            table = Table(title="findings across cells", title_justify="left")
            for column in ("client", "kind", "where", "argument", "cells", "first cells"):
                table.add_column(column, overflow="fold")
            for client, f in findings:
                cells = f.details.get("cells", [])
                more = f" (+{len(cells) - _SHOWN_CELLS})" if len(cells) > _SHOWN_CELLS else ""
                argument = str(f.details.get("argument") or "")
                table.add_row(client, f.kind, f"{display_path(f.file)}:{f.line}", argument, str(len(cells)),
                              Text("\n".join(cells[:_SHOWN_CELLS]) + more))
            parts.append(table)
        noted = [c for c in self.cells if c.status != OK or c.findings]
        if noted:
            table = Table(title=f"cells with findings or not ok ({len(noted)} of {len(self.cells)})",
                          title_justify="left")
            for column in ("cell", "status", "seconds", "findings", "message"):
                table.add_column(column, overflow="fold")
            for c in noted:
                style = "green" if c.status == OK else "bold red"
                seconds = "-" if c.seconds is None else f"{c.seconds:.2f}"
                table.add_row(Text(c.cell.id), Text(c.status, style=style), seconds, str(c.findings),
                              Text(_first_line(c.message)))
            parts.append(table)
        parts.append(Text(self.headline(), style="bold"))
        return Group(*parts)


def _first_line(message: str) -> str:
    """The first line of a message with text (an assertion's often starts with a blank one)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].endswith(":"):
        return f"{lines[0]} {lines[1]}"
    return lines[0] if lines else ""
