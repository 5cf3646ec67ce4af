"""Findings as compiler diagnostics: headline, location, the source line with a caret, then notes.

One layout, two outputs: each line is a list of (text, style) segments; :func:`to_text` joins the
text, :func:`to_rich` keeps the styles for a terminal. Only :class:`Finding` fields and details are
read, so a finding loaded back from JSON renders the same.
"""

from __future__ import annotations

import linecache
import os
from typing import Any

from ..base import Finding

Segment = tuple[str, str]
Line = list[Segment]

_GUTTER = "blue"
_SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow", "note": "bold cyan"}


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


def _label(f: Finding) -> str:
    d = f.details
    if f.kind == "descriptor rule":
        return "tensor descriptor made here"
    if f.kind == "device assert":
        lane = d.get("first_element")
        return f"first failing lane [{', '.join(map(str, lane))}]" if lane else "assertion fails"
    element = d.get("element_text")
    relation = d.get("relation")
    if element:
        head = "first bad element" if f.kind != "int32 overflow" else "first wrapped address lands on"
        return f"{head} {element}" + (f": {relation}" if relation else "")
    address = d.get("first_address")
    return f"first bad address {address:#x}" if isinstance(address, int) else ""


def _location(f: Finding) -> str:
    d = f.details
    text = f"program {d.get('program_text', '')}".rstrip()
    loops = d.get("loops") or []
    for loop in loops:
        name = loop.get("variable") or f"at line {loop.get('line')}"
        text += f", loop {name}: iteration {loop.get('iteration')}"
    return text


def lines(f: Finding) -> list[Line]:
    """The diagnostic for one finding, line by line."""
    d = f.details
    out: list[Line] = [[(f"{f.severity}[{f.kind}]", _SEVERITY_STYLE.get(f.severity, "bold")),
                        (f": {f.message}", "bold")]]
    width = len(str(f.line))
    pad = " " * width
    out.append([(f"{pad}--> ", _GUTTER), (f"{display_path(f.file)}:{f.line}:{f.column}", ""),
                (f"   {_location(f)}", "dim")])
    source = linecache.getline(f.file, f.line).rstrip("\n") if f.file and f.line else ""
    if source:
        start, length = caret_span(source, f.column)
        out.append([(f"{pad} |", _GUTTER)])
        out.append([(f"{f.line} | ", _GUTTER), (source, "")])
        out.append([(f"{pad} | ", _GUTTER), (" " * start + "^" * length, "bold red"),
                    (f" {_label(f)}", "bold red")])
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
        out.append([(f"{pad} = ", _GUTTER), (note["label"], "cyan"), (f": {note['text']}", ""),
                    (where, "dim")])
    return out


def to_text(findings: list[Finding]) -> str:
    """Plain text of the diagnostics, separated by blank lines."""
    blocks = ["\n".join("".join(text for text, _ in line) for line in lines(f)) for f in findings]
    return "\n\n".join(blocks)


def to_rich(findings: list[Finding]) -> Any:
    """A rich renderable of the diagnostics (styled like the plain text)."""
    from rich.console import Group
    from rich.text import Text

    parts: list[Any] = []
    for i, f in enumerate(findings):
        if i:
            parts.append(Text(""))
        parts.extend(Text.assemble(*line) for line in lines(f))
    return Group(*parts)
