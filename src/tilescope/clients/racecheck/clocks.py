"""Happens-before between the programs of a launch: vector clocks driven by acquire/release atomics.

The model is the one GPU race sanitizers document. Each program has a clock that ticks at every
memory op. An atomic that *releases* (``release`` or ``acq_rel``, at ``gpu`` or ``sys`` scope, any
op but ``load``) publishes the program's vector clock at the address it writes; an atomic that
*acquires* (``acquire`` or ``acq_rel`` at ``gpu``/``sys``, any op but ``store``) and reads that
address joins the published clock into its own. Read-modify-writes continue a release sequence
(what an RMW publishes adds to what the address already carried, whatever its own ``sem``); an
atomic store that does not release ends it. ``relaxed`` atomics and ``cta`` scope order nothing
across programs. Which write an acquire read is what the engine actually ran: lanes of one record
apply in program order (lowest program first), records in the order they ran.

Vector clocks are dense rows of ``programs`` int32, made only once some program imports another's
clock; a launch with more programs than ``max_programs``, or one record whose synchronisation would
cost more than ``max_work`` clock entries, stops tracking (and the report says so).
"""

from __future__ import annotations

import numpy as np

RELEASES = frozenset({"release", "acq_rel"})
ACQUIRES = frozenset({"acquire", "acq_rel"})
WIDE_SCOPES = frozenset({"gpu", "sys"})


class Clocks:
    """Per-program clocks and vector clocks, and the clocks published at synchronising addresses."""

    def __init__(self, programs: int, max_programs: int = 4096, max_work: int = 1 << 26):
        self.programs = programs
        self.clock = np.zeros(programs, np.int32)
        self.vc: np.ndarray | None = None  # vc[q, p]: the latest clock of p that happens before q
        self._keys = np.zeros(0, np.int64)  # synchronising addresses, sorted
        self._published = np.zeros((0, programs), np.int32)  # one row of clocks per address
        self.max_work = max_work
        self.untracked = "" if programs <= max_programs else (
            f"{programs} programs exceed the {max_programs} whose clocks racecheck tracks")

    def tick(self, programs: np.ndarray) -> np.ndarray:
        """Advance the clocks of ``programs`` (distinct linear ids) by one op; their new clocks."""
        self.clock[programs] += 1
        return self.clock[programs]

    def ordered(self, before: np.ndarray, clock: np.ndarray | None, after: np.ndarray) -> np.ndarray:
        """Whether the op of program ``before`` at ``clock`` happens before ``after``'s current op
        (``clock`` may be None while no program has imported another's clock)."""
        same = before == after
        if self.vc is None or self.untracked:
            return same
        return same | (self.vc[after, np.maximum(before, 0)] >= clock)

    def synchronise(self, address: np.ndarray, program: np.ndarray, clock: np.ndarray, op: str, sem: str,
                    scope: str) -> None:  # fmt: skip
        """Apply one atomic record's lanes (start address, program, clock; in the engine's order)."""
        if self.untracked or address.size == 0:
            return
        wide = scope in WIDE_SCOPES
        acquires = wide and sem in ACQUIRES and op != "store"
        releases = wide and sem in RELEASES and op != "load"
        rmw = op not in ("load", "store")
        if not (acquires or releases) and (rmw or op == "load"):
            return  # a relaxed RMW continues the sequence, a relaxed load learns nothing
        if address.size * self.programs > self.max_work:
            self.untracked = (f"an atomic of {address.size} lanes would cost more clock entries than "
                              f"racecheck allows ({self.max_work})")  # fmt: skip
            return
        order = np.lexsort((program, address))
        address, program, clock = address[order], program[order], clock[order]
        self._insert(np.unique(address) if releases else np.zeros(0, np.int64))
        head = np.r_[True, address[1:] != address[:-1]]
        rank = np.arange(address.size) - np.maximum.accumulate(np.where(head, np.arange(address.size), 0))
        for r in range(int(rank.max()) + 1):
            take = rank == r
            self._round(address[take], program[take], clock[take], acquires, releases, rmw, op == "store")

    def _round(self, address, program, clock, acquires: bool, releases: bool, rmw: bool, store: bool) -> None:
        """Lanes at distinct addresses: acquire what each address carries, then publish."""
        rows = np.searchsorted(self._keys, address)
        found = rows < self._keys.size
        found[found] = self._keys[rows[found]] == address[found]
        if acquires and found.any():
            imported = self._published[rows[found]]
            if (imported >= 0).any():
                np.maximum.at(self._matrix(), program[found], imported)
        if releases:  # every address has a row (made before the rounds)
            own = self._rows_of(program, clock)
            self._published[rows] = np.maximum(self._published[rows], own) if rmw else own
        elif store and found.any():
            self._published[rows[found]] = -1  # a store that does not release ends the release sequence

    def _rows_of(self, program: np.ndarray, clock: np.ndarray) -> np.ndarray:
        """The vector clocks of ``program`` at ``clock`` (one row each)."""
        if self.vc is None:
            rows = np.full((program.size, self.programs), -1, np.int32)
        else:
            rows = self.vc[program].copy()
        rows[np.arange(program.size), program] = clock
        return rows

    def _matrix(self) -> np.ndarray:
        if self.vc is None:
            self.vc = np.full((self.programs, self.programs), -1, np.int32)
        return self.vc

    def _insert(self, keys: np.ndarray) -> None:
        new = np.setdiff1d(keys, self._keys)
        if new.size == 0:
            return
        merged = np.union1d(self._keys, new)
        table = np.full((merged.size, self.programs), -1, np.int32)
        table[np.searchsorted(merged, self._keys)] = self._published
        self._keys, self._published = merged, table

    @property
    def nbytes(self) -> int:
        """Bytes held by the clocks."""
        return self.clock.nbytes + self._published.nbytes + (self.vc.nbytes if self.vc is not None else 0)
