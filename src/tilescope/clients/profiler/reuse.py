"""Reuse across programs and the L2 footprint of one wave, in launch order and in grouped orders.

Per tensor the profiler keeps the 32-byte sectors each program touches. A *wave* is as many
programs as the GPU has SMs, taken in the order the hardware dispatches them (linear program
number ``x + gx * (y + gy * z)``, as :mod:`tilescope.ir` numbers them). For a 2-D grid the same
programs are also taken in *grouped* orders (Triton's matmul tutorial: bands of ``G`` along one
grid axis, that axis fastest inside the band) to say whether regrouping would shrink what one wave
keeps in L2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir import OpRecord
from .coalescing import SECTOR, distinct, factored

#: waves whose footprint is measured (the first ones of each order): enough to see a steady state
MEASURED_WAVES = 4
#: the largest band of a grouped order tried (Triton's tutorials use 8)
MAX_GROUP = 64


@dataclass(frozen=True)
class Order:
    """One program order: its name, and the wave footprints it gives."""

    name: str
    group: int  #: band size (0: launch order)
    axis: str  #: grid axis of the bands ("" for launch order)
    mean_bytes: float  #: mean footprint of the full waves (the only wave when there is one)
    max_bytes: int


class Sectors:
    """The sectors every program touches, per tensor."""

    def __init__(self) -> None:
        self._parts: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}

    def add(self, record: OpRecord, linear: np.ndarray, shift: int = 0) -> None:
        """Add the sectors of the enabled lanes of ``record``; ``linear`` numbers its programs, ``shift``
        places the tensor (:func:`~tilescope.clients.profiler.coalescing.placement`)."""
        name = record.argument or "?"
        batch = record.program_ids.shape[0]
        full = (batch, *record.shape)
        mask = None if record.mask is None else np.broadcast_to(record.mask, full)
        parts = self._parts.setdefault(name, [])
        flat_mask = None if mask is None else mask.reshape(batch, -1)
        found = factored(record, shift)
        if found is None:
            addresses = np.broadcast_to(record.addresses().view(np.int64) - shift, full).reshape(batch, -1)
            self._lanes(parts, addresses, flat_mask, linear)
            return
        scalar, block = found
        block = block.reshape(-1)
        uniform = mask is None or mask.strides[0] == 0
        whole = np.ones(batch, dtype=bool) if uniform else flat_mask.all(axis=1)
        if uniform and mask is not None:
            block = block[flat_mask[0]]
        if block.size and whole.any():
            # whole programs share the block: its sectors once per residue, shifted per program
            residues = scalar % SECTOR
            for residue in distinct(residues[whole]).tolist():
                rows = whole & (residues == residue)
                offsets = distinct((residue + block) // SECTOR)
                base = (scalar[rows] - residue) // SECTOR
                parts.append((np.repeat(linear[rows], offsets.size), (base[:, None] + offsets).reshape(-1)))
        if not whole.all():
            rows = ~whole
            self._lanes(parts, scalar[rows, None] + block[None, :], flat_mask[rows], linear[rows])

    @staticmethod
    def _lanes(parts: list, addresses: np.ndarray, enabled: np.ndarray | None, linear: np.ndarray) -> None:
        """Sectors of per-lane ``(b, L)`` addresses, enabled lanes only, each once per program."""
        if enabled is None:
            rows, lanes = np.indices(addresses.shape).reshape(2, -1)
        else:
            rows, lanes = np.nonzero(enabled)
        if rows.size == 0:
            return
        sectors = addresses[rows, lanes] // SECTOR
        low = int(sectors.min())
        span = int(sectors.max()) - low + 1
        rows, sectors = np.divmod(distinct(rows * span + (sectors - low)), span)
        parts.append((linear[rows], sectors + low))

    def summarize(self, grid: tuple[int, int, int], wave: int) -> dict:
        """Per tensor reuse, and the wave footprints in launch order and the best grouped order."""
        programs = int(np.prod(grid))
        per_tensor = {}
        per_program: list[tuple[np.ndarray, np.ndarray]] = []
        for name in sorted(self._parts):
            parts = self._parts[name]
            program = parts[0][0] if len(parts) == 1 else np.concatenate([p for p, _ in parts])
            sector = parts[0][1] if len(parts) == 1 else np.concatenate([s for _, s in parts])
            low = int(sector.min())
            span = int(sector.max()) - low + 1
            keys = program * span  # in place from here: fresh memory is what costs most
            keys += sector
            keys -= low
            pairs = distinct(keys)
            owners, sectors = np.divmod(pairs, span)
            if span <= 4 * pairs.size + 4096:  # dense: count readers per sector directly
                readers = np.bincount(sectors, minlength=span)
                touched, most = int(np.count_nonzero(readers)), int(readers.max())
            else:
                found, readers = distinct(sectors, counts=True)
                touched, most = int(found.size), int(readers.max())
            per_tensor[name] = {
                "unique_bytes": touched * SECTOR,
                "program_bytes": int(pairs.size) * SECTOR,
                "programs_per_byte": round(float(pairs.size / touched), 3),
                "max_programs_per_byte": most,
            }
            per_program.append((owners, sectors))  # sorted by program, then sector
        orders = [_footprint("launch order", 0, "", None, per_program, wave, programs)]
        orders += _grouped(grid, per_program, wave, programs)
        best = min(orders, key=lambda o: (o.mean_bytes, o.group))
        return {
            "tensors": per_tensor,
            "wave_programs": min(wave, programs),
            "waves": -(-programs // wave),
            "launch_order": _order_dict(orders[0]),
            "best_grouped": _order_dict(best) if best is not orders[0] else None,
        }


def _footprint(name: str, group: int, axis: str, sequence: np.ndarray | None, per_program: list,
               wave: int, programs: int) -> Order:  # fmt: skip
    """Footprints of the first :data:`MEASURED_WAVES` waves when the programs run in the order
    ``sequence`` (linear program ids in run order; None: launch order): the mean of the full ones
    and the largest."""
    waves = min(-(-programs // wave), MEASURED_WAVES)
    counts = np.zeros(waves, dtype=np.int64)
    first = None if sequence is None else sequence[: waves * wave]
    for program, sector in per_program:  # one tensor at a time: tensors never share a sector
        span = int(sector.max()) + 1 if sector.size else 1
        if first is None:  # programs are sorted: the first waves are a prefix
            end = int(np.searchsorted(program, waves * wave))
            ranks, inside = program[:end], sector[:end]
        else:  # gather the pairs of the first waves' programs (``program`` is sorted)
            starts = np.searchsorted(program, first)
            lengths = np.searchsorted(program, first, side="right") - starts
            offsets = starts - (np.cumsum(lengths) - lengths)
            index = np.arange(int(lengths.sum())) + np.repeat(offsets, lengths)
            ranks, inside = np.repeat(np.arange(first.size), lengths), sector[index]
        keys = (ranks // wave) * span + inside
        if waves * span <= 8 * keys.size + 4096:  # dense: mark sectors per wave instead of sorting
            seen = np.bincount(keys, minlength=waves * span).reshape(waves, span)
            counts += np.count_nonzero(seen, axis=1)
        else:
            counts += np.bincount(distinct(keys) // span, minlength=waves)
    full = counts[: min(programs // wave, waves)] if programs >= wave else counts
    return Order(name, group, axis, float(full.mean()) * SECTOR, int(counts.max()) * SECTOR)


def _grouped(grid: tuple[int, int, int], per_program: list, wave: int, programs: int) -> list[Order]:
    """Footprints of grouped orders of a 2-D grid (bands of G programs along x or along y)."""
    gx, gy, gz = grid
    if gz != 1 or gx < 2 or gy < 2 or programs <= wave:
        return []
    x, y = np.meshgrid(np.arange(gx), np.arange(gy), indexing="xy")
    x, y = x.reshape(-1), y.reshape(-1)  # linear id = x + gx * y
    orders = []
    for axis, along, across, n in (("x", x, y, gx), ("y", y, x, gy)):
        group = 2
        while group < n and group <= MAX_GROUP:
            sequence = np.lexsort((along % group, across, along // group))
            orders.append(_footprint(f"groups of {group} along {axis}", group, axis, sequence, per_program,
                                     wave, programs))  # fmt: skip
            group *= 2
    return orders


def _order_dict(order: Order) -> dict:
    return {"name": order.name, "group": order.group, "axis": order.axis,
            "wave_bytes_mean": round(order.mean_bytes), "wave_bytes_max": order.max_bytes}  # fmt: skip
