"""One engine fault as the sanitizer counts it: which finding it belongs to and what it adds.

A memory fault can hold two findings' worth of lanes: lanes whose address came from wrapped int32
arithmetic are an ``int32 overflow`` (the wrap is the bug, wherever the address landed), the other
bad lanes are out-of-bounds accesses of the fault's own kind.

A descriptor whose extent (base, shape, strides) reaches past its tensor is not a finding by itself:
the GPU only touches the block elements inside the descriptor's shape, and the engine checks each of
those lanes at the access, where the finding then names the element. (The engine reports the extent
as a ``descriptor rule`` fault carrying the extent's end addresses; the rule faults carry none.)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ...ir import Fault, FaultKind, FirstBad, Node, Site, bad_lanes, first_bad

OVERFLOW = FaultKind.INT32_OVERFLOW
MEMORY_KINDS = (FaultKind.OUT_OF_BOUNDS_LOAD, FaultKind.OUT_OF_BOUNDS_STORE, FaultKind.OUT_OF_BOUNDS_ATOMIC)
#: broken rules of a descriptor or an on-chip tile: counted per program that made it, with fixes
RULE_KINDS = (FaultKind.DESCRIPTOR_RULE, FaultKind.TILE_RULE)
#: accesses outside their view but inside its storage (``bounds="warn"``): warnings
VIEW_KINDS = (FaultKind.LOAD_OUTSIDE_VIEW, FaultKind.STORE_OUTSIDE_VIEW, FaultKind.ATOMIC_OUTSIDE_VIEW)
#: kinds whose lanes have an address and an element
ADDRESSED_KINDS = (*MEMORY_KINDS, *VIEW_KINDS, FaultKind.INT32_OVERFLOW)
KINDS = (*MEMORY_KINDS, *VIEW_KINDS, *RULE_KINDS, OVERFLOW, FaultKind.DEVICE_ASSERT)


def severity(kind: str) -> str:
    """A finding's severity by kind: accesses outside the view inside its storage are warnings."""
    return "warning" if kind in VIEW_KINDS else "error"


@dataclass
class Event:
    """The part of one fault that belongs to one finding (site, kind, argument)."""

    kind: str
    site: Site | None
    argument: str | None
    bad: np.ndarray  # (B, *block) lanes of this event, program axis expanded
    fault: Fault  # view, expression graphs, loops, message and attrs of the access

    @property
    def key(self) -> tuple:
        """What findings are de-duplicated by."""
        return (self.site, self.kind, self.argument)

    @property
    def program_rows(self) -> np.ndarray:
        """Rows of ``fault.program_ids`` with at least one bad lane."""
        return self.bad.reshape(self.bad.shape[0], -1).any(axis=1)

    @property
    def lanes(self) -> int:
        """Bad lanes over all programs of the batch."""
        return int(self.bad.sum())

    @property
    def block_lanes(self) -> int:
        """Lanes of one program's access."""
        return int(np.prod(self.bad.shape[1:], dtype=np.int64))

    def first(self) -> FirstBad:
        """The first bad lane (lowest program of the batch, then row-major lane)."""
        memory = self.kind in ADDRESSED_KINDS
        narrowed = dataclasses.replace(self.fault, bad=self.bad, wrapped=None,
                                       address=self.fault.address if memory else None)
        found = first_bad(narrowed)
        assert found is not None, "an event always has a bad lane"
        return found

    def first_lanes(self) -> int:
        """Bad lanes of the first bad program."""
        rows = self.bad.reshape(self.bad.shape[0], -1)
        return int(rows[int(np.flatnonzero(rows.any(axis=1))[0])].sum())


def events_of(fault: Fault, tensor_names: frozenset[str]) -> list[Event]:
    """The events a fault contributes: none, one, or (overflow plus out-of-bounds) two."""
    if fault.kind == "descriptor rule" and fault.address is not None:
        return []  # the descriptor's extent: its accesses are checked lane by lane instead
    bad = np.asarray(bad_lanes(dataclasses.replace(fault, wrapped=None)), dtype=bool)
    argument = fault.view.name if fault.view is not None else None
    if fault.kind == "descriptor rule" and argument is None:
        argument = argument_of(fault.address_node, tensor_names)
    if fault.kind == "device assert":
        argument = None
    out = []
    if fault.wrapped is not None:
        wrapped = np.broadcast_to(np.asarray(fault.wrapped, dtype=bool), bad.shape)
        out.append(Event(OVERFLOW, fault.site, argument, wrapped, fault))
        bad = bad & ~wrapped
    if bad.any():
        out.append(Event(fault.kind, fault.site, argument, bad, fault))
    return [e for e in out if e.bad.any()]


def argument_of(node: Node | None, tensor_names: frozenset[str]) -> str | None:
    """The tensor argument an expression graph starts from (nearest first), if any."""
    seen = set()
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current.op.startswith("argument "):
            name = current.op[len("argument "):]
            if name in tensor_names:
                return name
        stack.extend(current.inputs)
    return None
