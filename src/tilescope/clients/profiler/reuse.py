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
from .coalescing import SECTOR


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
        affine = record.address_affine
        if affine is not None and (mask is None or mask.strides[0] == 0):
            block = np.broadcast_to(affine.block, (1, *record.shape)).reshape(-1)
            if mask is not None:
                block = block[mask[0].reshape(-1)]
            if block.size == 0:
                return
            scalar = np.broadcast_to(affine.scalar, (batch,)).astype(np.int64) - shift
            residues = scalar % SECTOR
            for residue in np.unique(residues).tolist():
                rows = residues == residue
                offsets = np.unique((residue + block) // SECTOR)
                base = (scalar[rows] - residue) // SECTOR
                parts.append((np.repeat(linear[rows], offsets.size), (base[:, None] + offsets).reshape(-1)))
            return
        addresses = np.broadcast_to(record.addresses().view(np.int64) - shift, full).reshape(batch, -1)
        if mask is None:
            rows, lanes = np.indices(addresses.shape).reshape(2, -1)
        else:
            rows, lanes = np.nonzero(mask.reshape(batch, -1))
        parts.append((linear[rows], addresses[rows, lanes] // SECTOR))

    def summarize(self, grid: tuple[int, int, int], wave: int) -> dict:
        """Per tensor reuse, and the wave footprints in launch order and the best grouped order."""
        programs = int(np.prod(grid))
        per_tensor = {}
        per_program: list[tuple[np.ndarray, np.ndarray]] = []
        for name in sorted(self._parts):
            program = np.concatenate([p for p, _ in self._parts[name]])
            sector = np.concatenate([s for _, s in self._parts[name]])
            low = int(sector.min())
            span = int(sector.max()) - low + 1
            pairs = np.unique(program * span + (sector - low))
            touched = np.unique(pairs % span)
            readers = np.bincount(pairs % span)[touched]
            per_tensor[name] = {
                "unique_bytes": int(touched.size) * SECTOR,
                "program_bytes": int(pairs.size) * SECTOR,
                "programs_per_byte": round(float(pairs.size / touched.size), 3),
                "max_programs_per_byte": int(readers.max()),
            }
            per_program.append((pairs // span, pairs % span))
        orders = [_footprint("launch order", 0, "", np.arange(programs), per_program, wave, programs)]
        orders += _grouped(grid, per_program, wave, programs)
        best = min(orders, key=lambda o: (o.mean_bytes, o.group))
        return {
            "tensors": per_tensor,
            "wave_programs": min(wave, programs),
            "waves": -(-programs // wave),
            "launch_order": _order_dict(orders[0]),
            "best_grouped": _order_dict(best) if best is not orders[0] else None,
        }


def _footprint(name: str, group: int, axis: str, rank: np.ndarray, per_program: list, wave: int,
               programs: int) -> Order:  # fmt: skip
    """Footprints of the waves when the programs run in the order ``rank`` (rank of each linear id)."""
    waves = -(-programs // wave)
    counts = np.zeros(waves, dtype=np.int64)
    for program, sector in per_program:  # one tensor at a time: tensors never share a sector
        span = int(sector.max()) + 1 if sector.size else 1
        keys = np.unique((rank[program] // wave) * span + sector)
        counts += np.bincount(keys // span, minlength=waves)
    full = counts[: programs // wave] if programs >= wave else counts
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
        while group < n:
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
