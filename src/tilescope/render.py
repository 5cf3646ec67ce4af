"""Findings as compiler diagnostics, for every client: headline, location, source line with a caret, notes.

One layout, two outputs: each line is a list of (text, style) segments; :func:`to_text` joins the
text, :func:`to_rich` keeps the styles for a terminal. Only :class:`Finding` fields and details are
read, so a finding loaded back from JSON renders the same. Structured details (``programs``,
``program_summary``, ``program_text``, ``loops``, ``notes``) get their own lines; a client without
them gets each detail as a ``= key: value`` note. A client may label the caret (the sanitizer names
the first bad element there).
"""

from __future__ import annotations

import io
import linecache
import os
from collections.abc import Callable
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.text import Text

from .clients.base import Finding, Report

Segment = tuple[str, str]
Line = list[Segment]
CaretLabel = Callable[[Finding], str]

_GUTTER = "blue"
_SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow", "note": "bold cyan"}
_STRUCTURED = ("programs", "program_summary", "program_text", "loops", "notes")


def display_path(path: str) -> str:
    """``path`` relative to the working directory when it lies under it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def caret_span(source: str, column: int) -> tuple[int, int]:
    """0-based (start, length) to underline: the callee of the call starting at ``column``."""
    start = max(column - 1, 0)
    if start >= len(source):
        return len(source.rstrip()), 1
    rest = source[start:]
    paren = rest.find("(")
    length = paren if paren > 0 else len(rest.rstrip())
    return start, max(length, 1)


def _location(f: Finding) -> str:
    d = f.details
    if "program_text" in d:
        text = f"program {d.get('program_text', '')}".rstrip()
    elif f.program_ids:
        shown = ", ".join(str(tuple(p)) for p in f.program_ids[:3])
        more = f" and {len(f.program_ids) - 3} more" if len(f.program_ids) > 3 else ""
        text = f"program {shown}{more}"
    else:
        text = ""
    for loop in d.get("loops") or []:
        name = loop.get("variable") or f"at line {loop.get('line')}"
        text += f", loop {name}: iteration {loop.get('iteration')}"
    return text


def lines(f: Finding, caret_label: CaretLabel | None = None) -> list[Line]:
    """The diagnostic for one finding, line by line."""
    d = f.details
    style = _SEVERITY_STYLE.get(f.severity, "bold")
    out: list[Line] = [[(f"{f.severity}[{f.kind}]", style), (f": {f.message}", "bold")]]
    width = len(str(f.line))
    pad = " " * width
    where = f"{display_path(f.file)}:{f.line}:{f.column}" if f.file else f"`{f.kernel}`"
    out.append([(f"{pad}--> ", _GUTTER), (where, ""), (f"   {_location(f)}", "dim")])
    source = linecache.getline(f.file, f.line).rstrip("\n") if f.file and f.line else ""
    if source:
        start, length = caret_span(source, f.column)
        label = caret_label(f) if caret_label else ""
        out.append([(f"{pad} |", _GUTTER)])
        out.append([(f"{f.line} | ", _GUTTER), (source, "")])
        out.append(
            [
                (f"{pad} | ", _GUTTER),
                (" " * start + "^" * length, style),
                (f" {label}" if label else "", style),
            ]
        )
    programs = d.get("programs")
    if programs is not None:
        summary = d.get("program_summary", "")
        count = f"{programs} program{'s' if programs != 1 else ''}"
        out.append([(f"{pad} = ", _GUTTER), ("programs", "cyan"), (f": {summary}  ({count})", "")])
    for note in d.get("notes", []):
        where = ""
        if note.get("line"):
            other = note.get("file") and os.path.realpath(note["file"]) != os.path.realpath(f.file)
            where = f"   ({display_path(note['file']) + ':' if other else 'line '}{note['line']})"
        out.append(
            [(f"{pad} = ", _GUTTER), (note["label"], "cyan"), (f": {note['text']}", ""), (where, "dim")]
        )
    if "notes" not in d:
        for key, value in d.items():
            if key not in _STRUCTURED:
                out.append([(f"{pad} = ", _GUTTER), (key, "cyan"), (f": {_short(value)}", "")])
    return out


def to_text(findings: list[Finding], caret_label: CaretLabel | None = None) -> str:
    """Plain text of the diagnostics, separated by blank lines."""
    blocks = [
        "\n".join("".join(text for text, _ in line) for line in lines(f, caret_label)) for f in findings
    ]
    return "\n\n".join(blocks)


def to_rich(findings: list[Finding], caret_label: CaretLabel | None = None) -> RenderableType:
    """A rich renderable of the diagnostics (styled like the plain text)."""
    parts: list[Any] = []
    for i, f in enumerate(findings):
        if i:
            parts.append(Text(""))
        parts.extend(Text.assemble(*line) for line in lines(f, caret_label))
    return Group(*parts)


def render_report(report: Report) -> RenderableType:
    """A report as rich renderables: its findings, then one line of summary."""
    n = len(report.findings)
    tally = Text(f"{report.client}: {n} finding{'s' if n != 1 else ''}", style="bold")
    if report.summary:
        tally.append("  " + "  ".join(f"{k}={_short(v)}" for k, v in report.summary.items()), style="dim")
    return Group(to_rich(report.findings), tally) if report.findings else tally


def console(stderr: bool = False) -> Console:
    """A rich console for diagnostics on stdout (or stderr).

    On a terminal it wraps to the terminal's width. Anywhere else (a pipe, a CI log, ``| tee``) it
    never wraps a line, so a location stays ``path:line:col`` on one line for editors and CI
    annotators that parse it (rich would otherwise wrap at 80 columns).
    """
    found = Console(stderr=stderr)
    found.soft_wrap = not found.is_terminal
    return found


def report_text(report: Any, width: int = 110) -> str:
    """A report (anything rich can print) as plain text, without colour; lines are not wrapped
    (``width`` only sizes tables)."""
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None, force_terminal=False, soft_wrap=True).print(report)
    return buffer.getvalue().rstrip()


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."
