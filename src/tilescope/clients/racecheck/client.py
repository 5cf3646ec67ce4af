"""The ``racecheck`` client: conflicting accesses of different programs that nothing orders.

Within a launch, two accesses from different programs conflict when their bytes overlap and at
least one writes; the conflict is a race unless happens-before orders it (:mod:`.clocks`). Two
atomics never race; a plain access against an atomic does; races inside one program are out of
scope; launches are ordered (each launch starts with fresh shadow state).
"""

from __future__ import annotations

import os

import numpy as np

from ...ir import ArgumentInfo, LaunchInfo, Need, OpKind, OpRecord
from ..base import Client, Finding
from ..sanitizer.programs import linear_ids
from .clocks import Clocks
from .findings import Access, Pair, build
from .report import RaceReport
from .shadow import AddressMap, Region, view_info

_KINDS = frozenset({OpKind.LOAD, OpKind.STORE, OpKind.ATOMIC, OpKind.DESCRIPTOR_LOAD,
                    OpKind.DESCRIPTOR_STORE})


def _access(record: OpRecord) -> Access:
    kind = record.kind
    if kind is OpKind.ATOMIC:
        op = record.attrs.get("op", "")
        what = ("descriptor reduce " if record.attrs.get("descriptor") else "atomic ") + op
        return Access(record.site, what, op != "load", True, record.attrs.get("sem", ""),
                      record.attrs.get("scope", ""))  # fmt: skip
    what = kind.value.replace("_", " ")
    if record.attrs.get("gather"):
        what = "descriptor gather"
    elif record.attrs.get("scatter"):
        what = "descriptor scatter"
    return Access(record.site, what, kind.writes, False)


class _LaunchState:
    """Shadow memory, clocks and races of the launch being run."""

    def __init__(self, launch: LaunchInfo, max_programs: int):
        self.launch = launch
        self.map = AddressMap()
        self.views = {}
        for argument in launch.arguments:
            self.add(argument)
        self.clocks = Clocks(int(np.prod(launch.grid)), max_programs=max_programs)
        self.sites: dict[tuple, int] = {}
        self.accesses: list[Access] = []
        self.pairs: dict[tuple, Pair] = {}
        self.peak_shadow = 0

    def add(self, argument: ArgumentInfo) -> None:
        if argument.kind == "tensor":
            self.map.add(argument)
            self.views[argument.name] = view_info(argument)

    def site_of(self, record: OpRecord) -> int:
        access = _access(record)
        index = self.sites.get(access)
        if index is None:
            index = self.sites[access] = len(self.accesses)
            self.accesses.append(access)
        return index

    def on_op(self, record: OpRecord) -> None:
        addresses = record.addresses()
        if addresses is None:
            return
        batch = record.program_ids.shape[0]
        programs = linear_ids(record.program_ids, self.launch.grid)
        clocks = self.clocks.tick(programs)
        enabled = record.enabled()
        if record.in_bounds is not None:
            enabled = enabled & record.in_bounds
        flat = np.broadcast_to(enabled, (batch, *record.shape)).reshape(batch, -1)
        rows, cols = np.nonzero(flat)
        if rows.size == 0:
            return
        address = np.broadcast_to(addresses, (batch, *record.shape)).reshape(batch, -1)[rows, cols]
        address = address.astype(np.int64)
        prog, clock = programs[rows].astype(np.int32), clocks[rows]
        site = self.site_of(record)
        region_of = self.map.locate(address)
        for r in np.unique(region_of[region_of >= 0]):
            take = region_of == r
            self._check(self.map.regions[r], site, record, address[take], prog[take], clock[take])
        access = self.accesses[site]
        if access.atomic:
            op = record.attrs.get("op", "")
            self.clocks.synchronise(address, prog, clock, op, access.sem, access.scope)
        self.peak_shadow = max(self.peak_shadow, self.map.nbytes + self.clocks.nbytes)

    def _check(self, region: Region, site: int, record: OpRecord, address: np.ndarray, prog: np.ndarray,
               clock: np.ndarray) -> None:  # fmt: skip
        granule, per = region.granules(address, record.itemsize)
        lane = np.arange(address.size)
        if per > 1:
            granule = (granule[:, None] + np.arange(per)).reshape(-1)
            lane, prog, clock = (np.repeat(v, per) for v in (lane, prog, clock))
        me = self.accesses[site]
        argument = record.argument
        for other, slots in region.slots.items():
            them = self.accesses[other]
            if not (me.writes or them.writes) or (me.atomic and them.atomic):
                continue
            hit = np.zeros(granule.size, bool)
            who = np.full(granule.size, -1, np.int32)
            for p, c in ((slots.p1, slots.c1), (slots.p2, slots.c2)):
                theirs, when = p[granule], c[granule]
                race = (theirs >= 0) & ~hit & ~self.clocks.ordered(theirs, when, prog)
                who[race] = theirs[race]
                hit |= race
            if hit.any():
                first = np.unique(lane[hit], return_index=True)[1]
                at = np.flatnonzero(hit)[first]
                self._pair(other, site, argument, who[at], prog[at], address[lane[at]])
        several = region.slots_of(site).update(granule, prog, clock)
        if me.writes and not me.atomic and several.size:
            addr = region.lo + several[:, 0] * region.granule
            before, after = several[:, 1].astype(np.int32), several[:, 2].astype(np.int32)
            self._pair(site, site, argument, before, after, addr)

    def _pair(self, a: int, b: int, argument: str | None, a_prog, b_prog, address) -> None:
        key = (min(a, b), max(a, b), argument)
        pair = self.pairs.get(key)
        if pair is None:
            pair = self.pairs[key] = Pair((key[0], key[1]), argument)
        pair.add(a, b, a_prog, b_prog, address, self.accesses)

    def findings(self) -> list[Finding]:
        return [build(p, self.accesses, self.launch, self.views.get(p.argument), self.clocks.untracked)
                for p in self.pairs.values()]  # fmt: skip


class RaceCheck(Client):
    """Data races between the programs of a launch (read-after-write, write-after-read, write-after-write).

    Options: ``sarif_path`` writes the SARIF log there after every launch; ``max_programs`` bounds
    the launches whose happens-before is tracked with vector clocks (4 bytes per pair of programs).
    Racecheck needs only addresses, so alone it lets the engine skip the arithmetic on values.
    """

    name = "racecheck"
    kinds = _KINDS
    needs = frozenset({Need.ADDRESSES_ONLY, Need.ARGUMENT_EVENTS})
    options = ("sarif_path", "max_programs")
    report_format = "sarif"

    def __init__(self, sarif_path: str | os.PathLike | None = None, max_programs: int = 4096):
        self.sarif_path = sarif_path
        self.report_path = sarif_path
        self.max_programs = max_programs
        self._state: _LaunchState | None = None
        self._findings: list[Finding] = []
        self._launches = 0
        self.peak_shadow_bytes = 0

    def on_launch_start(self, launch: LaunchInfo) -> None:
        """Fresh shadow memory: launches on a stream are ordered."""
        self._state = _LaunchState(launch, self.max_programs)
        self._launches += 1

    def on_argument(self, argument: ArgumentInfo) -> None:
        """A tensor found behind a pointer joins the shadow memory."""
        if self._state is not None:
            self._state.add(argument)

    def on_op(self, record: OpRecord) -> None:
        """Check one memory op of a batch against the shadow memory, then record it."""
        if self._state is not None:
            self._state.on_op(record)

    def on_launch_end(self, launch: LaunchInfo) -> None:
        """Turn the launch's races into findings and drop its shadow memory."""
        state, self._state = self._state, None
        if state is None:
            return
        self._findings = RaceReport.merge([RaceReport(self.name, self._findings),
                                           RaceReport(self.name, state.findings())]).findings  # fmt: skip
        self.peak_shadow_bytes = max(self.peak_shadow_bytes, state.peak_shadow)

    def report(self) -> RaceReport:
        """Every race found so far, in source order."""
        summary = {"launches": self._launches, "findings": len(self._findings)}
        return RaceReport(self.name, list(self._findings), summary)
