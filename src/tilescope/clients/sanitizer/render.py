"""The sanitizer's diagnostics: the shared layout of :mod:`tilescope.render`, with the caret labelled.

The caret under an access names the first bad element and how it relates to the bounds
(``first bad element a[64, 0]: row 64 >= 64 rows``), the first failing lane of an assert, or the
descriptor that broke a rule.
"""

from __future__ import annotations

from typing import Any

from ... import render
from ..base import Finding


def caret_label(f: Finding) -> str:
    """What the caret points at: the first bad element, the failing lane, the descriptor."""
    d = f.details
    if f.kind == "descriptor rule":
        return "tensor descriptor made here"
    if f.kind == "tile rule":
        return "tile made here"
    if f.kind == "device assert":
        lane = d.get("first_element")
        return f"first failing lane [{', '.join(map(str, lane))}]" if lane else "assertion fails"
    element = d.get("element_text")
    relation = d.get("relation")
    if element:
        head = {"int32 overflow": "first wrapped address lands on"}.get(f.kind, "first bad element")
        if f.severity == "warning":
            head = "first element outside the view"
        return f"{head} {element}" + (f": {relation}" if relation else "")
    address = d.get("first_address")
    return f"first bad address {address:#x}" if isinstance(address, int) else ""


def to_text(findings: list[Finding]) -> str:
    """Plain text of the sanitizer's diagnostics."""
    return render.to_text(findings, caret_label)


def to_rich(findings: list[Finding]) -> Any:
    """Rich renderable of the sanitizer's diagnostics."""
    return render.to_rich(findings, caret_label)
