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
import re
from dataclasses import dataclass, field

import numpy as np

from ...ir import ArgumentInfo, ViewInfo


@dataclass
class Slots:
    """Per granule: last program (``p1``, -1: none) and clock, and the last other program before it."""

    p1: np.ndarray
    c1: np.ndarray
    p2: np.ndarray
    c2: np.ndarray

    @classmethod
    def empty(cls, n: int) -> Slots:
        """No program has touched any of ``n`` granules."""
        return cls(np.full(n, -1, np.int32), np.zeros(n, np.int32), np.full(n, -1, np.int32),
                   np.zeros(n, np.int32))  # fmt: skip

    def refine(self, factor: int) -> None:
        """Split every granule into ``factor`` granules carrying the same state."""
        for name in ("p1", "c1", "p2", "c2"):
            setattr(self, name, np.repeat(getattr(self, name), factor))

    @property
    def nbytes(self) -> int:
        """Shadow bytes held."""
        return self.p1.nbytes * 4

    def update(self, gi: np.ndarray, prog: np.ndarray, clock: np.ndarray) -> np.ndarray:
        """Record accesses (granule, program, clock); the batch's own cross-program pairs.

        Returned as rows (granule, previous program, program): each program touching a granule
        that a lower program of this batch touched too, paired with the next lower one (what a
        run of these programs one after another would pair).
        """
        order = np.lexsort((prog, gi))
        g, p, c = gi[order], prog[order], clock[order]
        head = np.r_[True, g[1:] != g[:-1]]
        starts = np.flatnonzero(head)
        ends = np.r_[starts[1:], g.size] - 1
        ug, lo_p, hi_p, hi_c = g[starts], p[starts], p[ends], c[ends]
        several = lo_p != hi_p
        old_p1, old_c1 = self.p1[ug], self.c1[ug]
        keep_old = ~several & (old_p1 != hi_p)
        # the last program of the group other than the highest: the one before its first lane
        group = np.cumsum(head) - 1
        changes = np.r_[False, (p[1:] != p[:-1]) & ~head[1:]]
        before = np.flatnonzero(changes) - 1  # last lane of each lower program within a group
        second = np.full(ug.size, -1, np.int64)
        second[group[before]] = before  # lanes ascend, so the highest lower program wins
        new_p2 = np.where(several, p[np.maximum(second, 0)], np.where(keep_old, old_p1, self.p2[ug]))
        new_c2 = np.where(several, c[np.maximum(second, 0)], np.where(keep_old, old_c1, self.c2[ug]))
        self.p1[ug], self.c1[ug], self.p2[ug], self.c2[ug] = hi_p, hi_c, new_p2, new_c2
        pairs = np.flatnonzero(changes)
        return np.stack([g[pairs], p[pairs - 1], p[pairs]], axis=1)


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

    def slots_of(self, site: int) -> Slots:
        """The slots of one access site (made on first use)."""
        have = self.slots.get(site)
        if have is None:
            have = self.slots[site] = Slots.empty(self.size)
        return have

    def fit(self, addresses: np.ndarray, itemsize: int) -> None:
        """Make granules small enough for accesses of ``itemsize`` bytes at ``addresses``."""
        offsets = (addresses - self.lo) if addresses.size else np.zeros(0, np.int64)
        align = math.gcd(itemsize, int(np.gcd.reduce(offsets)) if offsets.size else 0)
        new = math.gcd(self.granule, align or itemsize)
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
        view = view_info(argument)
        lo, hi = view.lo, view.hi
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


def itemsize(dtype: str) -> int:
    """Bytes per element of an op-stream dtype name (``fp16`` -> 2, ``pointer<fp32>`` -> 8, ``int1`` -> 1)."""
    if dtype.startswith("pointer"):
        return 8
    bits = re.search(r"\d+", dtype)
    return max(1, int(bits.group()) // 8) if bits else 1


def view_info(argument: ArgumentInfo) -> ViewInfo:
    """The tensor argument as a view of memory (to turn addresses into element coordinates)."""
    return ViewInfo(argument.name, int(argument.address), tuple(argument.shape), tuple(argument.strides),
                    itemsize(argument.dtype), argument.dtype)  # fmt: skip
