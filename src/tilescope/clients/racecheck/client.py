"""The ``racecheck`` client: conflicting accesses of different programs that nothing orders.

Within a launch, two accesses from different programs conflict when their bytes overlap and at
least one writes; the conflict is a race unless happens-before orders it (:mod:`.clocks`). Two
atomics never race; a plain access against an atomic does; races inside one program are out of
scope; launches are ordered (each launch starts with fresh shadow state).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...ir import ArgumentInfo, Fault, LaunchInfo, Need, OpKind, OpRecord
from ..base import Client, Finding
from ..sanitizer.programs import linear_ids
from . import sharedrace
from .clocks import Clocks
from .findings import Access, Pair, access_of, build
from .report import RaceReport
from .shadow import AddressMap, enabled_lanes


@dataclass
class _Lanes:
    """The granules one record touches in one region: where (a slice when consecutive), and per
    granule the program and clock; ``address(lanes)`` gives back the byte address of lanes."""

    where: slice | np.ndarray
    size: int
    per: int  # granules per lane
    prog: np.ndarray
    clock: np.ndarray | None
    address: Callable[[np.ndarray], np.ndarray]
    other: np.ndarray | None = None  # per granule, a second program making the same access (-1: none)


def _run_of(record: OpRecord) -> tuple[int, int] | None:
    """(first byte address, lanes) when every lane of the record is enabled and the lanes are
    consecutive elements, program after program (a proven contiguous access); else None."""
    affine = record.address_affine
    if affine is None or record.in_bounds is not None or (record.mask is not None and not record.mask.all()):
        return None
    block = affine.block.reshape(-1)
    scalar = affine.scalar.reshape(-1)
    batch, step = record.program_ids.shape[0], record.itemsize
    if block.size == 0 or scalar.size != batch or (block.size > 1 and not (np.diff(block) == step).all()):
        return None
    starts = scalar + block[0]
    if batch > 1 and not (np.diff(starts) == block.size * step).all():
        return None
    return int(starts[0]), batch * block.size


def _shared_rows(record: OpRecord, programs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(addresses, program, second program) of the distinct rows of a factored record whose
    programs share rows (matmul tiles every program of a row or column loads), else None.

    Programs at the same per-program offset touch the same lanes: one row stands for all of them,
    with the highest program and the next highest (-1 when alone).
    """
    affine = record.address_affine
    if affine is None or record.in_bounds is not None or programs.size < 2:
        return None
    if record.mask is not None and record.mask.shape[0] != 1:
        return None
    scalar = affine.scalar.reshape(-1)
    if scalar.size != programs.size:
        return None
    rows, inverse = np.unique(scalar, return_inverse=True)
    if rows.size == scalar.size:
        return None
    order = np.lexsort((programs, inverse))
    group, prog = inverse[order], programs[order]
    ends = np.r_[np.flatnonzero(group[1:] != group[:-1]), group.size - 1]
    starts = np.r_[0, ends[:-1] + 1]
    last, other = prog[ends], np.where(ends > starts, prog[ends - 1], -1)
    lanes = rows[:, None] + affine.block.reshape(1, -1)
    if record.mask is None:
        row = np.repeat(np.arange(rows.size), lanes.shape[1])
        return lanes.reshape(-1), last[row], other[row]
    mask = np.broadcast_to(record.mask, (1, *record.shape)).reshape(1, -1)
    row, col = np.nonzero(np.broadcast_to(mask, lanes.shape))
    return lanes[row, col], last[row], other[row]


def _as_slice(index: np.ndarray) -> np.ndarray | slice:
    """``index`` as a slice when it counts up by one (indexing is then a copy, not a gather)."""
    if index.size > 1 and index[-1] - index[0] == index.size - 1 and bool((np.diff(index) == 1).all()):
        return slice(int(index[0]), int(index[-1]) + 1)
    return index


class _LaunchState:
    """Shadow memory, clocks and races of the launch being run."""

    def __init__(self, launch: LaunchInfo, max_programs: int):
        self.launch = launch
        self.map = AddressMap()
        self.views = {}
        for argument in launch.arguments:
            self.add(argument)
        programs = int(np.prod(launch.grid))
        self.clocks = Clocks(programs, max_programs=max_programs)
        self.program_dtype = np.dtype(np.int16 if programs < 2**15 else np.int32)
        self.clocked = False  # whether slots keep clocks (from the launch's first atomic on)
        self.sites: dict[Access, int] = {}
        self.accesses: list[Access] = []
        self.pairs: dict[tuple, Pair] = {}
        self.arguments: dict[tuple[int, int], str | None] = {}  # (site, region): the argument it used
        self.peak_shadow = 0

    def add(self, argument: ArgumentInfo) -> None:
        if argument.kind == "tensor":
            self.map.add(argument)
            self.views[argument.name] = argument.view_info()

    def site_of(self, record: OpRecord) -> int:
        access = access_of(record)
        index = self.sites.get(access)
        if index is None:
            index = self.sites[access] = len(self.accesses)
            self.accesses.append(access)
        return index

    def on_op(self, record: OpRecord) -> None:
        programs = linear_ids(record.program_ids, self.launch.grid)
        clocks = self.clocks.tick(programs)
        site = self.site_of(record)
        access = self.accesses[site]
        if access.atomic and not self.clocked:
            self.clocked = True
            for region in self.map.regions:
                for slots in region.slots.values():
                    slots.add_clocks()
        run = _run_of(record)
        if run is not None and not access.atomic:
            first, lanes = run
            (where,) = self.map.split(np.array([first, first + lanes * record.itemsize - 1], np.int64))
            if where[1] is None:  # one region: the record's lanes are one slice of its granules
                run_lanes = self._run_lanes(where[0], record, first, lanes, programs, clocks)
                self._check(where[0], site, record, run_lanes)
                self._note_peak()
                return
        shared = None if access.writes or self.clocked else _shared_rows(record, programs)
        if shared is not None:
            address, prog, other = shared
            for r, take in self.map.split(address):
                part = (address, prog, other) if take is None else (address[take], prog[take], other[take])
                lanes = self._lanes(r, record, part[0], part[1].astype(self.program_dtype), None)
                lanes.other = np.repeat(part[2], lanes.per).astype(self.program_dtype)
                self._check(r, site, record, lanes)
            self._note_peak()
            return
        rows, address = enabled_lanes(record)
        if rows.size == 0:
            return
        prog = programs[rows].astype(self.program_dtype)
        clock = clocks[rows] if self.clocked else None
        for r, take in self.map.split(address):
            part = (
                (address, prog, clock)
                if take is None
                else (address[take], prog[take], None if clock is None else clock[take])
            )
            self._check(r, site, record, self._lanes(r, record, *part))
        if access.atomic:
            op = record.attrs.get("op", "")
            self.clocks.synchronise(address, prog.astype(np.int64), clock, op, access.sem, access.scope)
        self._note_peak()

    def _note_peak(self) -> None:
        self.peak_shadow = max(self.peak_shadow, self.map.nbytes + self.clocks.nbytes)

    def _lanes(self, r: int, record: OpRecord, address: np.ndarray, prog: np.ndarray,
               clock: np.ndarray | None) -> _Lanes:  # fmt: skip
        """Lanes at arbitrary addresses, as granules of region ``r``."""
        granule, per = self.map.regions[r].granules(address, record.itemsize)
        if per > 1:
            granule = (granule[:, None] + np.arange(per)).reshape(-1)
            prog = np.repeat(prog, per)
            clock = None if clock is None else np.repeat(clock, per)
        return _Lanes(_as_slice(granule), granule.size, per, prog, clock, lambda lanes: address[lanes])

    def _run_lanes(self, r: int, record: OpRecord, first: int, lanes: int, programs: np.ndarray,
                   clocks: np.ndarray) -> _Lanes:  # fmt: skip
        """Lanes that are one run of consecutive elements, program after program (no per-lane addresses)."""
        region = self.map.regions[r]
        itemsize = record.itemsize
        region.fit(np.array([first], np.int64), itemsize)
        per = itemsize // region.granule
        start = (first - region.lo) // region.granule
        size = lanes * per
        each = size // programs.size
        prog = np.repeat(programs.astype(self.program_dtype), each)
        clock = np.repeat(clocks, each) if self.clocked else None
        return _Lanes(slice(start, start + size), size, per, prog, clock,
                      lambda lane: first + lane.astype(np.int64) * itemsize)  # fmt: skip

    def _check(self, r: int, site: int, record: OpRecord, lanes: _Lanes) -> None:
        """Race the lanes against every conflicting site's slots, then record them in their site's."""
        region = self.map.regions[r]
        me = self.accesses[site]
        tensor = (r, record.argument)
        self.arguments.setdefault((site, r), record.argument)
        where, prog, second = lanes.where, lanes.prog, lanes.other
        for other, slots in region.slots.items():
            them = self.accesses[other]
            if not (me.writes or them.writes) or (me.atomic and them.atomic):
                continue
            hit = np.zeros(lanes.size, bool)
            who = np.full(lanes.size, -1, np.int32)
            for p, c in ((slots.p1, slots.c1), (slots.p2, slots.c2)):
                theirs, when = p[where], (c[where] if c is not None else None)
                unordered = ~self.clocks.ordered(theirs, when, prog)
                if second is not None:  # no clocks: the lane's second program races unless it is theirs
                    unordered |= (second >= 0) & (theirs != second)
                race = (theirs >= 0) & ~hit & unordered
                who[race] = theirs[race]
                hit |= race
            if hit.any():
                positions = np.flatnonzero(hit)
                lane, first = np.unique(positions // lanes.per, return_index=True)
                at = positions[first]
                mine = prog[at] if second is None else np.where(who[at] == prog[at], second[at], prog[at])
                self._pair(other, site, tensor, who[at], mine.astype(np.int32), lanes.address(lane))
        slots = region.slots_of(site, self.program_dtype, self.clocked)
        if not me.writes and second is None and not isinstance(where, slice):
            slots.update_reads(where, prog, self.clocks.clock if self.clocked else None)
            return
        several = slots.update(where, prog, lanes.clock, second)
        if me.writes and not me.atomic and several.size:
            addr = region.lo + several[:, 0] * region.granule
            before, after = several[:, 1].astype(np.int32), several[:, 2].astype(np.int32)
            self._pair(site, site, tensor, before, after, addr)

    def _pair(self, a: int, b: int, tensor: tuple[int, str | None], a_prog, b_prog, address) -> None:
        """Count conflicts of sites ``a`` and ``b`` in region ``tensor[0]`` (named by the argument of
        the access that found the pair first: arguments that alias one tensor are one finding)."""
        key = (min(a, b), max(a, b), tensor[0])
        pair = self.pairs.get(key)
        if pair is None:
            pair = self.pairs[key] = Pair((key[0], key[1]), tensor[1], tensor[0])
        pair.add(a, b, a_prog, b_prog, address, self.accesses)

    def findings(self) -> list[Finding]:
        return [build(p, self.accesses, self.launch, self.views,
                      {s: self.arguments.get((s, p.region)) for s in p.sites}, self.clocks.untracked,
                      self.clocked) for p in self.pairs.values()]  # fmt: skip


class RaceCheck(Client):
    """Data races between the programs of a launch (read-after-write, write-after-read, write-after-write).

    Options: ``sarif_path`` writes the SARIF log there after every launch; ``max_programs`` bounds
    the launches whose happens-before is tracked with vector clocks (4 bytes per pair of programs).
    The kernel runs for real: which write an acquire reads, and whether a spin-wait ends, depend on
    the values in memory. With ``compute_outputs=False`` (addresses only) the verdicts hold for
    kernels whose control flow does not depend on memory.
    """

    name = "racecheck"
    kinds = frozenset(k for k in OpKind if k.is_memory)  # every access, whatever its memory op
    fault_kinds = frozenset({sharedrace.KIND})
    needs = frozenset({Need.ARGUMENT_EVENTS})
    options = ("sarif_path", "max_programs")
    report_format = "sarif"

    def __init__(self, sarif_path: str | os.PathLike | None = None, max_programs: int = 4096):
        self.sarif_path = sarif_path
        self.report_path = sarif_path
        self.max_programs = max_programs
        self._state: _LaunchState | None = None
        self._findings: list[Finding] = []
        self._launches = 0
        self.peak_shadow_bytes = 0  # the most shadow memory and clocks one launch held
        self.touched_bytes = 0  # the largest total size of the tensors one launch touched

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

    def on_fault(self, fault: Fault) -> None:
        """A read of shared memory that an asynchronous copy still writes (:mod:`.sharedrace`)."""
        grid = self._state.launch.grid if self._state is not None else (1, 1, 1)
        found = RaceReport(self.name, [sharedrace.finding(fault, tuple(grid))])
        self._findings = RaceReport.merge([RaceReport(self.name, self._findings), found]).findings

    def on_launch_end(self, launch: LaunchInfo) -> None:
        """Turn the launch's races into findings and drop its shadow memory."""
        state, self._state = self._state, None
        if state is None:
            return
        self._findings = RaceReport.merge([RaceReport(self.name, self._findings),
                                           RaceReport(self.name, state.findings())]).findings  # fmt: skip
        self.peak_shadow_bytes = max(self.peak_shadow_bytes, state.peak_shadow)
        touched = sum(r.hi - r.lo for r in state.map.regions if r.slots)
        self.touched_bytes = max(self.touched_bytes, touched)

    def report(self) -> RaceReport:
        """Every race found so far, in source order."""
        summary = {"launches": self._launches, "findings": len(self._findings)}
        return RaceReport(self.name, list(self._findings), summary)
