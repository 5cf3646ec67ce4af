"""Reuse across programs and the L2 footprint of one wave, in launch order and in grouped orders.

Per tensor the profiler keeps the 32-byte sectors each program touches, as *runs* of consecutive
sectors ``[start, end)`` per program: a contiguous tile row is one run however wide it is, so the
summary sorts runs, not sectors (a scattered access degrades to runs of one sector). A *wave* is as
many programs as the GPU has SMs, taken in the order the hardware dispatches them (linear program
number ``x + gx * (y + gy * z)``, as :mod:`tilescope.ir` numbers them). For a 2-D grid the same
programs are also taken in *grouped* orders (Triton's matmul tutorial: bands of ``G`` along one
grid axis, that axis fastest inside the band) to say whether regrouping would shrink what one wave
keeps in L2. Every figure is an exact count of distinct sectors: runs are merged, never estimated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir import OpRecord
from .coalescing import PENDING_LANES, SECTOR, SECTOR_SHIFT, Lanes, distinct, joined_masks

#: waves whose footprint is measured (the first ones of each order): enough to see a steady state
MEASURED_WAVES = 4
#: the largest band of a grouped order tried (Triton's tutorials use 8)
MAX_GROUP = 64
#: runs kept unmerged per tensor before they are merged per program (a loop adds runs every iteration)
PENDING_RUNS = 1 << 19


@dataclass(frozen=True)
class Order:
    """One program order: its name, and the wave footprints it gives."""

    name: str
    group: int  #: band size (0: launch order)
    axis: str  #: grid axis of the bands ("" for launch order)
    mean_bytes: float  #: mean footprint of the full waves (the only wave when there is one)
    max_bytes: int


@dataclass(frozen=True)
class Runs:
    """Runs of sectors ``[start, end)``, each owned by one program (or one group of programs)."""

    owner: np.ndarray
    start: np.ndarray
    end: np.ndarray

    @staticmethod
    def concat(parts: list[Runs]) -> Runs:
        """One set of runs holding all of ``parts``."""
        if len(parts) == 1:
            return parts[0]
        return Runs(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("owner", "start", "end")))

    def merged(self) -> Runs:
        """The same sectors per owner as disjoint runs, sorted by owner then start."""
        if self.start.size == 0:
            return self
        low = int(self.start.min())
        span = int(self.end.max()) - low + 1
        # one key orders by owner then start (an owner's keys end at least 2 before the next owner's
        # begin, so runs of two owners never join), and makes "overlaps an earlier run of the same
        # owner" a comparison with the running maximum of the earlier runs' ends. Arrays this size
        # cost more to allocate (page faults) than to compute: each step writes into one it owns.
        start = self.owner * span
        start += self.start
        start -= low
        length = self.end - self.start  # scratch from here on
        bits = (int(length.max()) - 1).bit_length()
        # ties in any order: runs of one start merge whatever their order
        if bits == 0:  # runs of one sector (scattered lanes): the keys alone, each reaching one on
            start.sort()
            reach = np.add(start[:-1], 1, out=length[:-1])
        elif (int(start.max()) + 1) << bits < 1 << 62:  # (start, length - 1) packed in one sortable int64
            length -= 1
            start <<= bits
            start |= length
            start.sort()
            np.bitwise_and(start, (1 << bits) - 1, out=length)
            start >>= bits
            length += 1
            length += start
            reach = np.maximum.accumulate(length, out=length)
        else:
            order = np.argsort(start, kind="stable")  # fast on the sorted pieces runs are added in
            start = start[order]
            reach = np.maximum.accumulate(start + length[order])
        fresh = np.ones(start.size, dtype=bool)
        np.greater(start[1:], reach[: start.size - 1], out=fresh[1:])
        first = np.flatnonzero(fresh)
        last = np.r_[first[1:], start.size] - 1
        owner = start[first] // span
        base = owner * span - low
        end = start[last] + 1 if bits == 0 else reach[last]
        return Runs(owner, start[first] - base, end - base)

    @property
    def sectors(self) -> int:
        """Sectors the runs cover, counted once per run (merged runs: once per owner)."""
        return int((self.end - self.start).sum())


def _runs(sectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, lengths)`` of the runs of consecutive values of sorted distinct ``sectors``."""
    if sectors.size == 0:
        return sectors, sectors
    breaks = np.flatnonzero(np.diff(sectors) != 1) + 1
    firsts = np.append(0, breaks)
    return sectors[firsts], np.diff(np.append(firsts, sectors.size))


class Sectors:
    """The sectors every program touches, per tensor, as runs."""

    def __init__(self) -> None:
        self._parts: dict[str, list[Runs]] = {}
        self._pending: dict[str, int] = {}
        self._blocks: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # see _block_table
        self._held: dict[tuple[str, int], list[tuple]] = {}  # see _hold
        #: per (tensor, block table): the offsets and programs of whole programs sharing the block
        self._shifted: dict[tuple[str, tuple], tuple[list, list]] = {}
        self._held_lanes = 0

    def add(self, record: OpRecord, prepared: Lanes, linear: np.ndarray) -> None:
        """Add the sectors of the enabled lanes of ``record`` (its lanes ``prepared``, the tensor placed);
        ``linear`` numbers its programs."""
        name = record.argument or "?"
        flat_mask, whole = prepared.mask, prepared.whole
        parts = self._parts.setdefault(name, [])
        added = 0
        if prepared.rows is not None:  # a run per contiguous row
            starts, span = prepared.rows.starts, (prepared.rows.n - 1) * record.itemsize  # to the last lane
            first, end = (starts // SECTOR).reshape(-1), ((starts + span) // SECTOR + 1).reshape(-1)
            parts.append(Runs(np.repeat(linear, starts.shape[1]), first, end))
            added += first.size
        elif prepared.scalar is None:
            self._hold(name, prepared.addresses.reshape(prepared.batch, -1), flat_mask, linear)
        else:
            scalar, block = prepared.scalar, prepared.block.reshape(-1)
            if prepared.uniform and flat_mask is not None:
                block = block[flat_mask[0]]
            if prepared.block.size == 1:  # one lane per program: one sector each, if enabled
                on = whole if flat_mask is None or prepared.uniform else flat_mask[:, 0]
                if block.size and on.any():
                    first = (scalar[on] + int(block[0])) // SECTOR
                    parts.append(Runs(linear[on], first, first + 1))
                    added += first.size
            elif block.size and whole.any():
                # whole programs share the block: its runs once per residue, shifted per program
                on = None if whole.all() else np.flatnonzero(whole)
                mine = scalar if on is None else scalar[on]
                # the block (its enabled lanes, with a mask shared by every program) names its table
                shared = flat_mask[0].tobytes() if prepared.uniform and flat_mask is not None else None
                residues = distinct(prepared.alignments[1] % SECTOR)
                key = self._block_table(block, (prepared.block_key, shared), residues)
                offsets, owners = self._shifted.setdefault((name, key), ([], []))
                offsets.append(mine)
                owners.append(linear if on is None else linear[on])
                self._held_lanes += mine.size * self._blocks[key][1].shape[1]
                if self._held_lanes > PENDING_LANES:
                    self._release()
            if prepared.block.size > 1 and not whole.all():
                rows = ~whole
                block_lanes = scalar[rows, None] + block[None, :]
                self._hold(name, block_lanes, flat_mask[rows], linear[rows])
        self._pending[name] = self._pending.get(name, 0) + added
        self._merge_if_many(name)

    def _merge_if_many(self, name: str) -> None:
        """Merge a tensor's runs per program once many are pending (a loop adds runs every iteration)."""
        parts = self._parts[name]
        if self._pending[name] > PENDING_RUNS and len(parts) > 1:
            merged = Runs.concat(parts).merged()
            self._parts[name] = [merged]
            self._pending[name] = 0 if merged.start.size < PENDING_RUNS else -merged.start.size

    def _block_table(self, block: np.ndarray, named: tuple, residues: np.ndarray) -> tuple:
        """The key of the sector runs of a shared ``block`` at each byte offset of ``residues``
        (sorted, below a sector), kept for the launch (a loop's iterations shift the same blocks)
        under ``named``: ``residues`` and the ``(R, k)`` starts and ends of each one's runs (padded
        with repeats, which add nothing) in ``self._blocks``."""
        key = (named, residues.tobytes())
        if key not in self._blocks:
            runs = [_runs(distinct((int(r) + block) // SECTOR)) for r in residues.tolist()]
            k = max(starts.size for starts, _ in runs)
            start = np.array([np.resize(starts, k) for starts, _ in runs], dtype=np.int64)
            end = start + np.array([np.resize(lengths, k) for _, lengths in runs], dtype=np.int64)
            self._blocks[key] = (residues, start, end)
        return key

    def _hold(self, name: str, addresses: np.ndarray, enabled: np.ndarray | None, linear: np.ndarray) -> None:
        """Keep per-lane ``(b, L)`` addresses (enabled lanes only) to be cut into runs with others of
        the same ``L`` (:meth:`_lanes`): one call for many records' programs."""
        held = self._held.setdefault((name, addresses.shape[1]), [])
        held.append((addresses, enabled, linear))
        self._held_lanes += addresses.size
        if self._held_lanes > PENDING_LANES:
            self._release()

    def _release(self) -> None:
        """Cut every held record's lanes into runs, and shift the block runs of held whole programs."""
        for (name, key), (offsets, owners) in self._shifted.items():
            residues, start, end = self._blocks[key]
            mine, owner = (x[0] if len(x) == 1 else np.concatenate(x) for x in (offsets, owners))
            # each program's residue as a table row; its runs shifted by its whole sectors
            which = 0 if residues.size == 1 else np.searchsorted(residues, mine % SECTOR)
            base = (mine >> SECTOR_SHIFT)[:, None]
            owner = np.repeat(owner, start.shape[1])
            self._parts[name].append(Runs(owner, (base + start[which]).reshape(-1),
                                          (base + end[which]).reshape(-1)))  # fmt: skip
            self._pending[name] = self._pending.get(name, 0) + owner.size
            self._merge_if_many(name)
        self._shifted.clear()
        for (name, _), held in self._held.items():
            parts, masks, owners = zip(*held, strict=True)
            addresses, linear = np.concatenate(parts), np.concatenate(owners)
            added = self._lanes(self._parts[name], addresses, joined_masks(parts, masks), linear)
            self._pending[name] = self._pending.get(name, 0) + added
            self._merge_if_many(name)
        self._held.clear()
        self._held_lanes = 0

    @staticmethod
    def _lanes(parts: list, addresses: np.ndarray, enabled: np.ndarray | None, linear: np.ndarray) -> int:
        """Runs of per-lane ``(b, L)`` addresses, enabled lanes only; how many.

        Neighbouring lanes (in lane order, within one program) whose sectors are equal or adjacent
        join one run without sorting: a gathered row is one run however many lanes it has. Lanes in
        no order give runs of one sector, which :meth:`Runs.merged` sorts out later.
        """
        if enabled is None:
            sectors = addresses.reshape(-1) >> SECTOR_SHIFT
            per_row = np.full(addresses.shape[0], addresses.shape[1])
        else:
            sectors = addresses[enabled]  # row by row, in lane order
            sectors >>= SECTOR_SHIFT
            per_row = np.count_nonzero(enabled, axis=1)
        if sectors.size == 0:
            return 0
        # a run ends where the next lane's sector is neither the same nor the next one (a step below 0
        # or above 1: above 1 as unsigned), and where a program's lanes end
        fresh = np.empty(sectors.size, dtype=bool)
        fresh[0] = True
        np.greater(np.diff(sectors).view(np.uint64), 1, out=fresh[1:])
        ends = np.cumsum(per_row)
        fresh[ends[:-1][per_row[1:] > 0]] = True
        first = np.flatnonzero(fresh)
        last = np.r_[first[1:], sectors.size] - 1
        owner = linear[np.searchsorted(ends, first, side="right")]
        parts.append(Runs(owner, sectors[first], sectors[last] + 1))  # steps of 0 or 1 inside
        return first.size

    def summarize(self, grid: tuple[int, int, int], wave: int) -> dict:
        """Per tensor reuse, and the wave footprints in launch order and the best grouped order."""
        programs = int(np.prod(grid))
        per_tensor = {}
        per_program: list[list[Runs]] = []
        self._release()
        groupable = _groupable(grid, wave, programs)
        for name in sorted(self._parts):
            parts = self._parts[name]
            found = _scattered(parts, programs)
            if found is None:
                runs = Runs.concat(parts).merged()
                (pairs, (touched, depth)), parts = (runs.sectors, _cover(runs)), [runs]
            else:
                pairs, touched, depth = found
                # the footprints take a few programs' runs from each part, unless every order
                # (grouped ones too) takes them from all of them
                parts = [Runs.concat(parts)] if groupable else parts
            per_tensor[name] = {
                "unique_bytes": touched * SECTOR,
                "program_bytes": pairs * SECTOR,
                "programs_per_byte": round(float(pairs / touched), 3),
                "max_programs_per_byte": depth,
            }
            per_program.append(parts)
        orders = [_footprint("launch order", 0, "", None, per_program, wave, programs)]
        orders += _grouped(grid, per_program, wave, programs) if groupable else []
        best = min(orders, key=lambda o: (o.mean_bytes, o.group))
        return {
            "tensors": per_tensor,
            "wave_programs": min(wave, programs),
            "waves": -(-programs // wave),
            "launch_order": _order_dict(orders[0]),
            "best_grouped": _order_dict(best) if best is not orders[0] else None,
        }


def _scattered(parts: list[Runs], owners: int) -> tuple[int, int, int] | None:
    """``(pairs, touched, depth)`` of runs of one or two sectors each (scattered lanes), owned by
    programs below ``owners``: the distinct (program, sector) pairs, the distinct sectors and the
    most programs reading one sector, by one sort of (sector, owner) keys instead of a merge per
    owner and a sort of the boundaries; the keys are made part by part (small arrays, no copy of
    the runs). None when some run is longer, or the keys would not fit an int64."""
    parts = [p for p in parts if p.start.size]
    if not parts:
        return None
    low = min(int(p.start.min()) for p in parts)
    if (max(int(p.end.max()) for p in parts) - low) * owners >= 1 << 62:
        return None
    keys = []
    for p in parts:
        length = p.end - p.start
        longest = int(length.max())
        if longest > 2:
            return None
        key, owner = p.start - low, p.owner
        if longest == 2:  # one key per sector of each run
            key = np.repeat(key, length)
            key[1:][np.diff(np.repeat(np.arange(length.size), length)) == 0] += 1
            owner = np.repeat(owner, length)
        key *= owners
        key += owner
        keys.append(key)
    key = keys[0] if len(keys) == 1 else np.concatenate(keys)
    key.sort()
    fresh = np.ones(key.size, dtype=bool)
    np.not_equal(key[1:], key[:-1], out=fresh[1:])
    key = key[fresh]  # distinct (sector, owner) pairs, by sector
    key //= owners
    first = np.ones(key.size + 1, dtype=bool)  # where a sector's pairs begin (and one past the end)
    np.not_equal(key[1:], key[:-1], out=first[1:-1])
    starts = np.flatnonzero(first)
    return key.size, starts.size - 1, int(np.diff(starts).max())


def _cover(runs: Runs) -> tuple[int, int]:
    """The sectors some run covers, and the most runs covering one sector (of per-program merged
    runs: the most programs reading it)."""
    n = runs.start.size
    if n == 0:
        return 0, 0
    # boundaries as one sorted key: a run's start ``2s + 1`` (+1), its end ``2e`` (-1), so that at one
    # sector boundary runs end before others begin (written in place: see :meth:`Runs.merged`)
    keys = np.empty(2 * n, dtype=np.int64)
    np.left_shift(runs.start, 1, out=keys[:n])
    keys[:n] |= 1
    np.left_shift(runs.end, 1, out=keys[n:])
    keys.sort()
    depth = keys & 1
    depth <<= 1
    depth -= 1
    np.cumsum(depth, out=depth)
    keys >>= 1
    # from each boundary to the next, where some run is
    covered = int(np.sum(np.diff(keys), where=depth[:-1] > 0))
    return covered, int(depth.max())


def _footprint(name: str, group: int, axis: str, rank: np.ndarray | None, per_program: list[list[Runs]],
               wave: int, programs: int) -> Order:  # fmt: skip
    """Footprints of the first :data:`MEASURED_WAVES` waves when program ``p`` runs ``rank[p]``-th
    (None: launch order): the mean of the full ones and the largest. ``per_program`` holds each
    tensor's runs (in parts) with their programs as owners (overlapping or not: each wave's are
    merged)."""
    waves = min(-(-programs // wave), MEASURED_WAVES)
    counts = np.zeros(waves, dtype=np.int64)
    for parts in per_program:  # one tensor at a time: tensors never share a sector
        pieces = []
        for runs in parts:
            if rank is None:  # the programs of the first waves
                inside = runs.owner < waves * wave
                wave_of = runs.owner[inside] // wave
            else:
                wave_of = rank[runs.owner] // wave
                inside = wave_of < waves
                wave_of = wave_of[inside]
            pieces.append(Runs(wave_of, runs.start[inside], runs.end[inside]))
        union = Runs.concat(pieces).merged()
        counts += np.bincount(union.owner, weights=union.end - union.start, minlength=waves).astype(np.int64)
    full = counts[: min(programs // wave, waves)] if programs >= wave else counts
    return Order(name, group, axis, float(full.mean()) * SECTOR, int(counts.max()) * SECTOR)


def _groupable(grid: tuple[int, int, int], wave: int, programs: int) -> bool:
    """Whether grouped program orders are tried: a 2-D grid of more than one wave."""
    gx, gy, gz = grid
    return gz == 1 and gx >= 2 and gy >= 2 and programs > wave


def _grouped(grid: tuple[int, int, int], per_program: list[list[Runs]], wave: int,
             programs: int) -> list[Order]:  # fmt: skip
    """Footprints of grouped orders of a 2-D grid (bands of G programs along x or along y; see
    :func:`_groupable`)."""
    gx, gy, _ = grid
    x, y = np.meshgrid(np.arange(gx), np.arange(gy), indexing="xy")
    x, y = x.reshape(-1), y.reshape(-1)  # linear id = x + gx * y
    orders = []
    for axis, along, across, n in (("x", x, y, gx), ("y", y, x, gy)):
        group = 2
        while group < n and group <= MAX_GROUP:
            sequence = np.lexsort((along % group, across, along // group))
            rank = np.empty(programs, dtype=np.int64)
            rank[sequence] = np.arange(programs)
            orders.append(_footprint(f"groups of {group} along {axis}", group, axis, rank, per_program, wave,
                                     programs))  # fmt: skip
            group *= 2
    return orders


def _order_dict(order: Order) -> dict:
    return {"name": order.name, "group": order.group, "axis": order.axis,
            "wave_bytes_mean": round(order.mean_bytes), "wave_bytes_max": order.max_bytes}  # fmt: skip
