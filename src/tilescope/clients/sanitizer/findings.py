"""A finding from what its accumulator saw: headline, location, first bad element, notes."""

from __future__ import annotations

import re

from ...engine.faults import bounds_relation, element_text
from ...ir import ViewInfo
from ..base import Finding
from .aggregate import Accumulator
from .events import MEMORY_KINDS, OVERFLOW
from .explain import Note, address_notes, mask_note, overflow_notes
from .programs import grid_rank, pid_text, summarize

_VERBS = {"out-of-bounds load": "read", "out-of-bounds store": "write", "out-of-bounds atomic": "update"}
_ACCESS = {"out-of-bounds load": "load from", "out-of-bounds store": "store to",
           "out-of-bounds atomic": "atomic on"}
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


def _headline(acc: Accumulator, programs: int) -> str:
    first = acc.first
    event = first.event
    fault = event.fault
    kind = event.kind
    view = fault.view
    of_block = f"{first.lanes_in_program} of {event.block_lanes} lane{'s' if event.block_lanes != 1 else ''}"
    if kind in MEMORY_KINDS:
        target = view.describe() if view is not None else "every tensor argument"
        text = f"{of_block} {_VERBS[kind]} {_place(view, first.lane.address)} {target}"
    elif kind == OVERFLOW:
        access = _ACCESS.get(fault.kind, "access to")
        target = view.describe() if view is not None else "memory"
        text = f"{of_block} {access} {target} go through an address whose int32 arithmetic wrapped"
    elif kind == "descriptor rule":
        on = f" on `{event.argument}`" if event.argument else ""
        text = f"tensor descriptor{on} breaks {'a rule' if len(acc.rules) == 1 else 'rules'}: " + \
            "; ".join(acc.rules)
    else:
        text = "device_assert failed" + (f": {fault.message}" if fault.message else "")
    if kind == "descriptor rule":
        if acc.lanes > 1:
            text += f"; made by {acc.lanes} programs"
    elif acc.lanes != first.lanes_in_program or programs > 1:
        text += f"; {acc.lanes} lane{'s' if acc.lanes != 1 else ''} in {programs} program" \
                f"{'s' if programs != 1 else ''} in all"
    return text


def _notes(acc: Accumulator, element: tuple[int, ...] | None) -> list[Note]:
    event = acc.first.event
    fault = event.fault
    notes: list[Note] = []
    if event.kind in MEMORY_KINDS:
        notes += address_notes(fault.address_node, fault.site)
        mask = mask_note(fault.mask_node, fault.site, fault.view, element)
        if mask is not None:
            notes.append(mask)
        if fault.misaligned is not None and fault.misaligned.any():
            notes.append(Note("misaligned", "some addresses are not a multiple of the element size"))
    elif event.kind == OVERFLOW:
        notes += overflow_notes(fault.address_node, fault.site)
    elif event.kind == "descriptor rule":
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
    memory = event.kind in MEMORY_KINDS or event.kind == OVERFLOW
    if memory:
        element = first.lane.element
    elif event.kind == "device assert":
        element = first.lane.lane
    else:
        element = None
    pids = acc.program_ids()
    rank = max(grid_rank(launch.grid) for launch in acc.launches.values())
    details = {
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
        if event.kind in MEMORY_KINDS or address is None or not view.lo <= address < view.hi:
            details["relation"] = bounds_relation(view, element)
    if event.kind == "descriptor rule":
        details["rules"] = list(acc.rules)
    if event.kind == "device assert":
        details["message"] = fault.message
    site = event.site
    return Finding(
        kind=event.kind, severity="error", message=_headline(acc, acc.program_count()),
        kernel=fault.kernel, file=site.file if site else "", line=site.line if site else 0,
        column=site.column if site else 0, program_ids=pids, details=details,
    )
