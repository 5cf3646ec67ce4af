"""Findings built up event by event: one per (site, kind, argument), over programs, loops and launches.

Lane counts add up; program ids are kept as sorted linear numbers per launch (bounded by the grid,
compacted as they arrive); the *first* event is the one of the lowest program (z, then y, then x),
then the lowest lane, element and loop iteration, then the lowest launch, then execution order
(events of one program arrive in the order it ran them). Everything but the launch is what a
finding's details say, so reports of runs split across processes merge to the same finding
(``Report.merge`` orders merged findings the same way).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...ir import FirstBad, LaunchInfo
from .events import RULE_KINDS, Event
from .programs import linear_ids, program_ids

_COMPACT_AT = 1 << 16  # pending program numbers before they are merged into the sorted set


def first_order(lane: FirstBad, loops: tuple, launch_id: int) -> tuple:
    """Where a first bad lane sits in the user's order (see the module docstring)."""
    x, y, z = lane.program
    element = tuple(lane.element) if lane.element is not None else ()
    iteration = loops[-1][1] if loops else -1
    return ((z, y, x), tuple(lane.lane), element, iteration, launch_id)


@dataclass
class First:
    """The first bad event of a finding, in the user's order."""

    launch: LaunchInfo
    linear: int
    event: Event
    lane: FirstBad
    lanes_in_program: int
    order: tuple = ()


@dataclass
class Accumulator:
    """Everything one finding has seen so far."""

    event: Event  # the first event to arrive (kind, site, argument)
    lanes: int = 0
    launches: dict[int, LaunchInfo] = field(default_factory=dict)
    _programs: dict[int, np.ndarray] = field(default_factory=dict)
    _pending: dict[int, list[np.ndarray]] = field(default_factory=dict)
    first: First | None = None
    rules: list[str] = field(default_factory=list)  # descriptor rules broken here, in order
    fixes: list[str] = field(default_factory=list)
    _rule_call: tuple | None = None
    _rule_seen: np.ndarray | None = None

    def add(self, event: Event, launch: LaunchInfo) -> None:
        """Count one event of ``launch``."""
        rows = event.program_rows
        self.lanes += self._count(event, rows)
        if event.kind in RULE_KINDS:
            fault = event.fault
            if fault.message and fault.message not in self.rules:
                self.rules.append(fault.message)
            fix = fault.attrs.get("fix")
            if fix and fix not in self.fixes:
                self.fixes.append(fix)
        self.launches.setdefault(launch.launch_id, launch)
        linear = linear_ids(event.fault.program_ids[rows], launch.grid)
        pending = self._pending.setdefault(launch.launch_id, [])
        pending.append(linear)
        if sum(len(p) for p in pending) > _COMPACT_AT:
            self._compact(launch.launch_id)
        self._offer_first(event, launch, int(linear.min()))

    def _count(self, event: Event, rows: np.ndarray) -> int:
        """Lanes for memory and assert events; for descriptor rules, programs per descriptor made.

        One ``make_tensor_descriptor`` may break several rules (one fault each, consecutively, on
        the same batch and loop state): a program counts once per descriptor it makes.
        """
        if event.kind not in RULE_KINDS:
            return event.lanes
        # the batch's program-id table (held, so never a recycled object) tells one attempt from the next
        call = (event.fault.program_ids, event.fault.launch_id, event.fault.loops)
        last = self._rule_call
        same = last is not None and call[0] is last[0] and call[1:] == last[1:]
        if not same or self._rule_seen is None:
            self._rule_call, self._rule_seen = call, np.zeros(rows.shape, dtype=bool)
        new = rows & ~self._rule_seen
        self._rule_seen = self._rule_seen | rows
        return int(new.sum())

    def _offer_first(self, event: Event, launch: LaunchInfo, linear: int) -> None:
        current = self.first
        lane = event.first()
        order = first_order(lane, event.fault.loops, launch.launch_id)
        if current is not None and current.order <= order:
            return
        self.first = First(launch, linear, event, lane, event.first_lanes(), order)

    def _compact(self, launch_id: int) -> None:
        parts = self._pending.pop(launch_id, [])
        if parts:
            known = self._programs.get(launch_id, np.zeros(0, dtype=np.int64))
            self._programs[launch_id] = np.union1d(known, np.concatenate(parts))

    def program_ids(self) -> list[tuple[int, int, int]]:
        """Every program (x, y, z) that hit this finding, sorted, over all launches."""
        found: set[tuple[int, int, int]] = set()
        for launch_id, launch in self.launches.items():
            self._compact(launch_id)
            found.update(program_ids(self._programs[launch_id], launch.grid))
        return sorted(found)

    def program_count(self) -> int:
        """How many (launch, program) pairs hit this finding."""
        for launch_id in list(self._pending):
            self._compact(launch_id)
        return sum(len(p) for p in self._programs.values())
