"""Terminal rendering of any client's :class:`~tilescope.Report` (rich), and its plain-text form.

A finding reads like a compiler diagnostic: ``severity[kind]: message``, then ``--> file:line:col``
with the program ids, the source line and a caret under the column, then its details as notes.
Clients with their own format (the sanitizer) override ``Report.__rich__`` and may still use
:func:`render_finding` for the frame.
"""

from __future__ import annotations

import io
import linecache
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.text import Text

from .clients.base import Finding, Report

_STYLE = {"error": "bold red", "warning": "bold yellow", "note": "bold cyan"}


def render_finding(finding: Finding) -> RenderableType:
    """One finding as a diagnostic block."""
    out = Text()
    out.append(finding.severity, _STYLE.get(finding.severity, "bold"))
    out.append(f"[{finding.kind}]", _STYLE.get(finding.severity, "bold"))
    out.append(f": {finding.message}\n", "bold")
    where = f"{finding.file}:{finding.line}:{finding.column}" if finding.file else f"`{finding.kernel}`"
    out.append("  --> ", "blue")
    out.append(where)
    if finding.program_ids:
        shown = ", ".join(str(tuple(p)) for p in finding.program_ids[:3])
        more = f" and {len(finding.program_ids) - 3} more" if len(finding.program_ids) > 3 else ""
        out.append(f"   program {shown}{more}", "dim")
    out.append("\n")
    source = linecache.getline(finding.file, finding.line).rstrip("\n") if finding.file else ""
    if source:
        gutter = " " * len(str(finding.line))
        out.append(f"{gutter} |\n", "blue")
        out.append(f"{finding.line} | ", "blue")
        out.append(source + "\n")
        if finding.column > 0:
            out.append(f"{gutter} | ", "blue")
            out.append(" " * (finding.column - 1) + "^\n", _STYLE.get(finding.severity, "bold"))
    for key, value in finding.details.items():
        out.append(f"   = {key}: {value}\n", "dim")
    return out


def render_report(report: Report) -> RenderableType:
    """A report as rich renderables: its findings, then one line of summary."""
    parts: list[RenderableType] = [render_finding(f) for f in report.findings]
    n = len(report.findings)
    tally = Text(f"{report.client}: {n} finding{'s' if n != 1 else ''}", style="bold")
    if report.summary:
        tally.append("  " + "  ".join(f"{k}={_short(v)}" for k, v in report.summary.items()), style="dim")
    parts.append(tally)
    return Group(*parts)


def report_text(report: Any, width: int = 110) -> str:
    """A report (anything rich can print) as plain text, without colour."""
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None, force_terminal=False).print(report)
    return buffer.getvalue().rstrip()


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."
