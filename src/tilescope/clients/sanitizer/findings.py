"""A finding from what its accumulator saw: headline, location, first bad element, notes."""

from __future__ import annotations

import re

from ...ir import ViewInfo, bounds_relation, element_text
from ..base import Finding
from .aggregate import Accumulator
from .events import ADDRESSED_KINDS, MEMORY_KINDS, OVERFLOW, RULE_KINDS, VIEW_KINDS, severity
from .explain import Note, address_notes, mask_note, overflow_notes
from .programs import grid_rank, pid_text, summarize

_VERBS = {"out-of-bounds load": "read", "out-of-bounds store": "write", "out-of-bounds atomic": "update",
          "load outside view": "read", "store outside view": "write", "atomic outside view": "update"}
_ACCESS = {"out-of-bounds load": "load from", "out-of-bounds store": "store to",
           "out-of-bounds atomic": "atomic on"}


def merged(finding: Finding) -> Finding:
    """A merged finding with its headline and program summary rebuilt from the merged totals."""
    d = dict(finding.details)
    rank = int(d.get("grid_rank") or 3)
    d["program_summary"] = summarize(finding.program_ids, rank)
    finding.details = d
    finding.message = headline(finding.kind, d)
    return finding
_LOOP_VAR = re.compile(r"\bfor\s+(\w+)\s+in\b")


def _place(view: ViewInfo | None, address: int | None) -> str:
    """``past the end of``, ``before the start of`` or ``outside`` a view."""
    if view is None or address is None:
        return "outside"
    if address >= view.hi:
        return "past the end of"
    if address < view.lo:
        return "before the start of"
    return "between the elements of"


def _loops(acc: Accumulator) -> list[dict]:
    out = []
    for site, iteration in acc.first.event.fault.loops:
        match = _LOOP_VAR.search(site.source)
        out.append({"line": site.line, "variable": match.group(1) if match else None, "iteration": iteration})
    return out


def headline(kind: str, d: dict) -> str:
    """The one-line summary of a finding, from its details (so merged findings get theirs anew)."""
    first_lanes, block = d["first_program_lanes"], d["block_lanes"]
    of_block = f"{first_lanes} of {block} lane{'s' if block != 1 else ''}"
    if kind in MEMORY_KINDS:
        text = f"{of_block} {_VERBS[kind]} {d['place']} {d['target']}"
    elif kind in VIEW_KINDS:
        text = f"{of_block} {_VERBS[kind]} outside the view {d['target']}, inside its storage"
    elif kind == OVERFLOW:
        text = f"{of_block} {d['access']} {d['target']} go through an address whose int32 arithmetic wrapped"
    elif kind in RULE_KINDS:
        argument = d.get("argument")
        on = f" on `{argument}`" if argument else ""
        rules = d.get("rules", [])
        what = "tensor descriptor" if kind == "descriptor rule" else "tile"
        text = f"{what}{on} breaks {'a rule' if len(rules) == 1 else 'rules'}: " + "; ".join(rules)
    else:
        message = d.get("message")
        text = "device_assert failed" + (f": {message}" if message else "")
    lanes, programs = d["lanes"], d["programs"]
    if kind in RULE_KINDS:
        if lanes > 1:
            text += f"; made by {lanes} programs"
    elif lanes != first_lanes or programs > 1:
        lanes_s, programs_s = "s" if lanes != 1 else "", "s" if programs != 1 else ""
        text += f"; {lanes} lane{lanes_s} in {programs} program{programs_s} in all"
    return text


def _target(kind: str, view: ViewInfo | None) -> str:
    if view is not None:
        return view.describe()
    return "every tensor argument" if kind in MEMORY_KINDS else "memory"


def relation(kind: str, view: ViewInfo, element: tuple[int, ...]) -> str:
    """How the first bad element relates to the view (and, outside the view, to its storage)."""
    if kind not in VIEW_KINDS:
        return bounds_relation(view, element)
    inside = all(0 <= i < n for i, n in zip(element, view.shape, strict=False))
    return "inside its storage" if inside else f"{bounds_relation(view, element)}, inside its storage"


def _notes(acc: Accumulator, element: tuple[int, ...] | None) -> list[Note]:
    event = acc.first.event
    fault = event.fault
    notes: list[Note] = []
    if event.kind in MEMORY_KINDS or event.kind in VIEW_KINDS:
        notes += address_notes(fault.address_node, fault.site)
        mask = mask_note(fault.mask_node, fault.site, fault.view, element)
        if mask is not None:
            notes.append(mask)
        if fault.misaligned is not None and fault.misaligned.any():
            notes.append(Note("misaligned", "some addresses are not a multiple of the element size"))
    elif event.kind == OVERFLOW:
        notes += overflow_notes(fault.address_node, fault.site)
    elif event.kind in RULE_KINDS:
        notes += [Note("fix", fix) for fix in acc.fixes]
    else:
        notes += address_notes(fault.address_node, fault.site, "condition")[:1]
    return notes


def build(acc: Accumulator) -> Finding:
    """The finding for one accumulator (which has seen at least one event)."""
    first = acc.first
    event = first.event
    fault = event.fault
    view = fault.view
    memory = event.kind in ADDRESSED_KINDS
    if memory:
        element = first.lane.element
    elif event.kind == "device assert":
        element = first.lane.lane
    else:
        element = None
    pids = acc.program_ids()
    rank = max(grid_rank(launch.grid) for launch in acc.launches.values())
    details = {
        "first_program_lanes": first.lanes_in_program,
        "block_lanes": event.block_lanes,
        "place": _place(view, first.lane.address),
        "target": _target(event.kind, view),
        "access": _ACCESS.get(fault.kind, "access to"),
        "grid_rank": rank,
        "argument": event.argument,
        "lanes": acc.lanes,
        "first_element": element,
        "iteration": fault.loops[-1][1] if fault.loops else None,
        "first_program": list(first.lane.program),
        "first_lane": list(first.lane.lane),
        "first_address": first.lane.address,
        "programs": acc.program_count(),
        "program_summary": summarize(pids, rank),
        "program_text": pid_text(first.lane.program, rank),
        "loops": _loops(acc),
        "launches": len(acc.launches),
        "notes": [n.to_dict() for n in _notes(acc, element if memory else None)],
    }
    if view is not None:
        details["tensor"] = {"name": view.name, "dtype": view.dtype, "shape": list(view.shape),
                             "strides": list(view.strides)}
    if memory and view is not None and element is not None:
        details["element_text"] = element_text(view, element)
        address = first.lane.address
        if event.kind != OVERFLOW or address is None or not view.lo <= address < view.hi:
            details["relation"] = relation(event.kind, view, element)
    if event.kind in RULE_KINDS:
        details["rules"] = list(acc.rules)
    if event.kind == "device assert":
        details["message"] = fault.message
    site = event.site
    return Finding(
        kind=str(event.kind), severity=severity(event.kind), message=headline(event.kind, details),
        kernel=fault.kernel, file=site.file if site else "", line=site.line if site else 0,
        column=site.column if site else 0, program_ids=pids, details=details,
    )
