"""Facts about a fault in the user's terms: which lanes, which programs, which tensor element.

Shared by the engine's own errors and by the sanitizer's findings, so both say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .records import Fault, FaultKind, ViewInfo

_DIM_NAMES = {1: ("index",), 2: ("row", "column"), 3: ("dim 0", "dim 1", "dim 2")}


@dataclass(frozen=True)
class FirstBad:
    """The first faulting lane in (program, lane) order."""

    program: tuple[int, int, int]
    lane: tuple[int, ...]
    address: int | None
    element: tuple[int, ...] | None


def bad_lanes(fault: Fault) -> np.ndarray:
    """(B, *block) boolean array of faulting lanes, program axis expanded to the batch."""
    bad = np.asarray(fault.bad)
    if fault.wrapped is not None:
        bad = bad | np.broadcast_to(fault.wrapped, bad.shape) if bad.shape else fault.wrapped
    rows = fault.program_ids.shape[0]
    if bad.shape[0] != rows:
        bad = np.broadcast_to(bad, (rows, *bad.shape[1:]))
    return bad


def first_bad(fault: Fault) -> FirstBad | None:
    """The first faulting lane: lowest program, then lowest row-major lane index."""
    bad = bad_lanes(fault)
    if not bad.any():
        return None
    flat = bad.reshape(bad.shape[0], -1)
    row = int(np.flatnonzero(flat.any(axis=1))[0])
    lane_flat = int(np.flatnonzero(flat[row])[0])
    lane = tuple(int(i) for i in np.unravel_index(lane_flat, bad.shape[1:])) if bad.ndim > 1 else ()
    address = None
    element = None
    if fault.address is not None:
        addr = np.broadcast_to(fault.address, bad.shape) if fault.address.ndim == bad.ndim else fault.address
        address = int(addr[(min(row, addr.shape[0] - 1), *lane)])
        if fault.view is not None:
            element = fault.view.coordinates(address)
    pid = tuple(int(v) for v in fault.program_ids[row])
    return FirstBad(pid, lane, address, element)


def bounds_relation(view: ViewInfo, element: tuple[int, ...]) -> str:
    """How an element relates to the view's bounds: ``row 64 >= 64 rows``."""
    names = _DIM_NAMES.get(len(view.shape), tuple(f"dim {d}" for d in range(len(view.shape))))
    parts = []
    for name, i, n in zip(names, element, view.shape, strict=False):
        if i >= n:
            parts.append(f"{name} {i} >= {n} {name}s" if name in ("row", "column") else f"{name} {i} >= {n}")
        elif i < 0:
            parts.append(f"{name} {i} < 0")
    return ", ".join(parts) if parts else "inside the shape but outside the view's storage"


def element_text(view: ViewInfo, element: tuple[int, ...]) -> str:
    """``a[64, 0]``."""
    return f"{view.name}[{', '.join(map(str, element))}]"


def describe_fault(fault: Fault) -> str:
    """One paragraph saying what went wrong, for errors raised without a sanitizer."""
    bad = bad_lanes(fault)
    lanes = int(bad.sum())
    programs = int(bad.reshape(bad.shape[0], -1).any(axis=1).sum()) if bad.ndim > 1 else int(bad.sum())
    first = first_bad(fault)
    if fault.kind is FaultKind.DEVICE_ASSERT:
        pid = first.program if first else None
        return f"device_assert failed in {programs} program(s), first program {pid}" + (
            f": {fault.message}" if fault.message else ""
        )
    if fault.kind is FaultKind.SHARED_RACE:
        fix = fault.attrs.get("fix")
        return f"{fault.kind} in {programs} program(s): {fault.message}" + (f" (fix: {fix})" if fix else "")
    if fault.kind in (FaultKind.DESCRIPTOR_RULE, FaultKind.TILE_RULE):
        fix = fault.attrs.get("fix")
        what = "tensor descriptor" if fault.kind is FaultKind.DESCRIPTOR_RULE else "hardware tile"
        return f"{what} rule broken: {fault.message}" + (f" (fix: {fix})" if fix else "")
    target = fault.view.describe() if fault.view is not None else "any tensor argument"
    verb = {
        FaultKind.OUT_OF_BOUNDS_LOAD: "read",
        FaultKind.OUT_OF_BOUNDS_STORE: "write",
        FaultKind.OUT_OF_BOUNDS_ATOMIC: "update",
    }.get(fault.kind, "access")
    text = f"{fault.kind}: {lanes} lane(s) in {programs} program(s) {verb} outside {target}"
    if first is not None:
        text += f"; first in program {first.program}"
        if first.element is not None and fault.view is not None:
            text += (
                f", element {element_text(fault.view, first.element)} "
                f"({bounds_relation(fault.view, first.element)})"
            )
        elif first.address is not None:
            text += f", address {first.address:#x}"
    if fault.loops:
        text += "; " + ", ".join(f"loop at line {s.line} iteration {i}" for s, i in fault.loops)
    if fault.misaligned is not None and np.any(fault.misaligned):
        text += "; some addresses are not aligned to the element size"
    return text
