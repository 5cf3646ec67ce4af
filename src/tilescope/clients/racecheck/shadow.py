"""Shadow memory: which programs touched which bytes, from which source site, at which moment.

Every tensor argument's bytes (arguments that share bytes, like an in-place ``x`` and ``out``, form
one *region*) get shadow arrays in *granules*: the largest size that divides every access seen so
far (an fp32 tensor starts with 4-byte granules; a 2-byte access into it splits them into bytes),
so neighbouring fp16 or fp8 elements written by different programs never look like one location.

For each (region, access site) the shadow keeps two *slots* per granule: the program that touched
the granule last through the site, with its clock, and the most recent other program before it.
Two slots are enough to know whether some program other than a given one touched the granule
through the site, so every conflicting site pair of a kernel without synchronisation is found
whatever order the programs ran in. All updates are NumPy operations over the lanes of a record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...ir import ArgumentInfo, OpRecord


@dataclass
class Slots:
    """Per granule: the last program (``p1``, -1: none) and the last other program before it (``p2``),
    with the clocks of their accesses (``c1``, ``c2``; None until the launch runs its first atomic:
    before that no access can be ordered, and clock 0 stands in for every earlier one)."""

    p1: np.ndarray
    p2: np.ndarray
    c1: np.ndarray | None = None
    c2: np.ndarray | None = None

    @classmethod
    def empty(cls, n: int, programs: np.dtype, clocked: bool) -> Slots:
        """No program has touched any of ``n`` granules (``programs``: the dtype of program ids)."""
        slots = cls(np.full(n, -1, programs), np.full(n, -1, programs))
        if clocked:
            slots.add_clocks()
        return slots

    def add_clocks(self) -> None:
        """Start keeping clocks (every access so far at clock 0)."""
        if self.c1 is None:
            self.c1, self.c2 = np.zeros(self.p1.size, np.int32), np.zeros(self.p1.size, np.int32)

    def refine(self, factor: int) -> None:
        """Split every granule into ``factor`` granules carrying the same state."""
        for name in ("p1", "c1", "p2", "c2"):
            if getattr(self, name) is not None:
                setattr(self, name, np.repeat(getattr(self, name), factor))

    @property
    def nbytes(self) -> int:
        """Shadow bytes held."""
        return sum(a.nbytes for a in (self.p1, self.p2, self.c1, self.c2) if a is not None)

    def update(
        self,
        gi: np.ndarray | slice,
        prog: np.ndarray,
        clock: np.ndarray | None,
        other: np.ndarray | None = None,
    ) -> np.ndarray:
        """Record accesses (granule, program, clock); the batch's own cross-program pairs.

        ``gi`` is a slice when the lanes cover consecutive granules in order. Returned as rows
        (granule, previous program, program): each program touching a granule that a lower
        program of this batch touched too, paired with the next lower one (what a run of these
        programs one after another would pair). ``other``: per lane, a second program that made the
        same access (-1: none), for lanes that stand for several programs (no clocks then).
        """
        if isinstance(gi, slice) or gi.size < 2 or bool((gi[1:] > gi[:-1]).all()):
            single = True if other is None else other < 0
            self._set(gi, prog, clock, single, other, None)  # every granule once
            return np.zeros((0, 3), np.int64)
        order = np.lexsort((prog, gi))
        g, p = gi[order], prog[order]
        c = clock[order] if clock is not None else np.zeros(g.size, np.int32)
        head = np.r_[True, g[1:] != g[:-1]]
        starts = np.flatnonzero(head)
        ends = np.r_[starts[1:], g.size] - 1
        several = p[starts] != p[ends]
        # the last program of the group other than the highest: the one before its first lane
        group = np.cumsum(head) - 1
        changes = np.r_[False, (p[1:] != p[:-1]) & ~head[1:]]
        before = np.flatnonzero(changes) - 1  # last lane of each lower program within a group
        second = np.zeros(starts.size, np.int64)
        second[group[before]] = before  # lanes ascend, so the highest lower program wins
        second_p = p[second]
        if other is not None:  # a granule of one lane: its lane's second program, if any
            alone = (starts == ends) & (other[order][ends] >= 0)
            second_p = np.where(alone, other[order][ends], second_p)
            several = several | alone
        self._set(g[starts], p[ends], c[ends], ~several, second_p, c[second])
        pairs = np.flatnonzero(changes)
        return np.stack([g[pairs], p[pairs - 1], p[pairs]], axis=1)

    def update_reads(self, gi: np.ndarray, prog: np.ndarray, clock_of: np.ndarray | None) -> None:
        """Record reads (granule, program) without sorting: per granule the highest and the lowest
        program of the batch (reads need no pairs of their own). ``clock_of[q]`` is program q's clock."""
        old_p1, old_p2 = self.p1[gi], self.p2[gi]
        self.p1[gi] = -1
        np.maximum.at(self.p1, gi, prog)
        self.p2[gi] = np.iinfo(self.p2.dtype).max
        np.minimum.at(self.p2, gi, prog)
        hi, lo = self.p1[gi], self.p2[gi]
        single = lo == hi
        keep = single & (old_p1 != hi)
        self.p2[gi] = np.where(single, np.where(keep, old_p1, old_p2), lo)
        if self.c1 is not None:
            old_c1, old_c2 = self.c1[gi], self.c2[gi]
            self.c1[gi] = clock_of[hi]
            self.c2[gi] = np.where(single, np.where(keep, old_c1, old_c2), clock_of[lo])

    def _set(self, ug, last, last_clock, single, other, other_clock) -> None:
        """Granules ``ug`` were last touched by ``last``; ``other`` (where not ``single``) before it."""
        old = self.p1[ug]
        keep = single & (old != last)  # the previous last program becomes the other one
        p2 = np.where(keep, old, self.p2[ug])
        if other is not None:
            p2 = np.where(single, p2, other)
        if self.c1 is not None:
            c2 = np.where(keep, self.c1[ug], self.c2[ug])
            if other is not None:
                c2 = np.where(single, c2, other_clock)
            self.c1[ug], self.c2[ug] = last_clock, c2
        self.p1[ug], self.p2[ug] = last, p2


@dataclass
class Region:
    """Bytes ``[lo, hi)`` of one or more tensor arguments, with their shadow slots per access site."""

    lo: int
    hi: int
    granule: int
    arguments: list[ArgumentInfo] = field(default_factory=list)
    slots: dict[int, Slots] = field(default_factory=dict)

    @property
    def size(self) -> int:
        """Granules in the region."""
        return (self.hi - self.lo) // self.granule

    def slots_of(self, site: int, programs: np.dtype, clocked: bool) -> Slots:
        """The slots of one access site (made on first use)."""
        have = self.slots.get(site)
        if have is None:
            have = self.slots[site] = Slots.empty(self.size, programs, clocked)
        return have

    def fit(self, addresses: np.ndarray, itemsize: int) -> None:
        """Make granules small enough for accesses of ``itemsize`` bytes at ``addresses``.

        Granules and item sizes are powers of two, so the alignment every offset shares is the
        lowest bit set in any of them.
        """
        bits = np.bitwise_or.reduce(addresses - self.lo) if addresses.size else 0
        bits = int(bits) | itemsize | self.granule
        new = bits & -bits
        if new < self.granule:
            factor = self.granule // new
            for s in self.slots.values():
                s.refine(factor)
            self.granule = new

    def granules(self, addresses: np.ndarray, itemsize: int) -> tuple[np.ndarray, int]:
        """Granule indices of accesses at ``addresses`` (int64) and the granules each access covers."""
        self.fit(addresses, itemsize)
        return (addresses - self.lo) // self.granule, itemsize // self.granule

    @property
    def nbytes(self) -> int:
        """Shadow bytes held by the region."""
        return sum(s.nbytes for s in self.slots.values())


class AddressMap:
    """The regions of a launch's tensor arguments, found from byte addresses."""

    def __init__(self) -> None:
        self.regions: list[Region] = []
        self._starts = np.zeros(0, np.int64)

    def add(self, argument: ArgumentInfo) -> None:
        """Cover an argument's bytes (merging with regions it overlaps)."""
        if argument.nbytes <= 0:
            return
        view = argument.view_info()
        lo, hi = view.lo, view.hi
        for r in self.regions:
            if r.lo <= lo and hi <= r.hi:  # another view of a tensor already covered
                r.arguments.append(argument)
                return
        granule = math.gcd(view.itemsize, lo)
        merged = Region(lo, hi, granule, [argument])
        keep = []
        for r in self.regions:
            if r.lo < merged.hi and merged.lo < r.hi:
                merged = Region(min(r.lo, merged.lo), max(r.hi, merged.hi),
                                math.gcd(r.granule, merged.granule, r.lo, merged.lo),
                                r.arguments + merged.arguments)  # fmt: skip
                if r.slots:
                    raise RuntimeError("a tensor registered mid-launch overlaps one already accessed")
            else:
                keep.append(r)
        self.regions = sorted([*keep, merged], key=lambda r: r.lo)
        self._starts = np.array([r.lo for r in self.regions], np.int64)

    def split(self, addresses: np.ndarray) -> list[tuple[int, np.ndarray | None]]:
        """(region, lanes of ``addresses`` in it; None: all of them) for every region they touch."""
        if addresses.size and self.regions:
            lo, hi = int(addresses.min()), int(addresses.max())
            r = int(np.searchsorted(self._starts, lo, side="right")) - 1
            if r >= 0 and hi < self.regions[r].hi:
                return [(r, None)]  # one region holds them all (the usual case)
        region_of = self.locate(addresses)
        return [(int(r), region_of == r) for r in np.unique(region_of[region_of >= 0])]

    def locate(self, addresses: np.ndarray) -> np.ndarray:
        """Index of the region holding each byte address (-1: none)."""
        idx = np.searchsorted(self._starts, addresses, side="right") - 1
        ok = idx >= 0
        his = np.array([r.hi for r in self.regions], np.int64)
        ok[ok] = addresses[ok] < his[idx[ok]]
        return np.where(ok, idx, -1)

    @property
    def nbytes(self) -> int:
        """Shadow bytes held by every region."""
        return sum(r.nbytes for r in self.regions)


def enabled_lanes(record: OpRecord) -> tuple[np.ndarray, np.ndarray]:
    """(batch row, int64 byte address) of every enabled in-bounds lane of a memory record."""
    # not record.addresses(): that keeps the array on the record, and a buffered attempt holds them all
    addresses = record.address
    if addresses is None:
        form = record.address_affine if record.address_affine is not None else record.address_rows
        addresses = None if form is None else form.materialize()
    if addresses is None:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    batch = record.program_ids.shape[0]
    full = np.broadcast_to(addresses, (batch, *record.shape)).reshape(batch, -1).view(np.int64)
    if record.mask is None and record.in_bounds is None:
        return np.repeat(np.arange(batch), full.shape[1]), full.reshape(-1)
    enabled = record.enabled()
    if record.in_bounds is not None:
        enabled = enabled & record.in_bounds
    enabled = np.broadcast_to(enabled, (batch, *record.shape)).reshape(batch, -1)
    if enabled.all():
        return np.repeat(np.arange(batch), full.shape[1]), full.reshape(-1)
    rows, cols = np.nonzero(enabled)
    return rows, full[rows, cols]
