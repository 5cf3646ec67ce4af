"""Where a site's traffic goes to waste, as a few elements a viewer can mark (``docs/profiler.md``).

Two samples per (site, kind, tensor), each at most :data:`MAX_ELEMENTS` lanes, taken from the first
record that shows them:

- ``sectors``: the first warp request issued by the record's first program with an enabled lane:
  the request's first enabled lane in each 32-byte sector it moves, with the bytes of that sector
  the request uses (a strided access shows one lane per sector, walking the stride);
- ``masked``: the first masked-off lanes of the record's first program that has any.

Elements come from the lanes' host addresses through the tensor argument's view (the coordinates
the sanitizer and the viewer use; a tail mask's lanes lie past the end of the tensor). Sectors are
cut from the addresses as the GPU would place the tensor (``shift``, :func:`.coalescing.placement`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...ir import OpRecord, ViewInfo
from .coalescing import SECTOR, Issue

#: elements kept per sample
MAX_ELEMENTS = 8


@dataclass
class Places:
    """The samples of one site (None until a record showed them)."""

    sectors: list[dict] | None = None
    masked: list[dict] | None = None

    def add(self, record: OpRecord, issue: Issue, view: ViewInfo | None, shift: int) -> None:
        """Take the samples ``record`` shows that are still missing (none without the tensor's view)."""
        if view is None or (self.sectors is not None and self.masked is not None):
            return
        batch = record.program_ids.shape[0]
        lanes = math.prod(record.shape)
        mask = record.mask  # (B or 1, *shape) or None
        if lanes == 0 or (self.sectors is not None and (mask is None or bool(mask.all()))):
            return  # only the masked sample is missing, and this record masks nothing off
        enabled = None if mask is None else np.broadcast_to(mask, (batch, *record.shape)).reshape(batch, -1)
        if self.sectors is None:
            rows = np.arange(batch) if enabled is None else np.flatnonzero(enabled.any(axis=1))
            if rows.size:
                row = int(rows[0])
                on = None if enabled is None else enabled[row]
                self.sectors = _request(record, issue, view, shift, row, on)
        if self.masked is None and enabled is not None:
            rows = np.flatnonzero(~enabled.all(axis=1))
            if rows.size:
                row = int(rows[0])
                off = np.flatnonzero(~enabled[row])
                label = f"masked-off lane ({off.size} of {lanes} in program)"
                self.masked = _elements(record, view, row, off[:MAX_ELEMENTS], [label] * MAX_ELEMENTS)


def _row(record: OpRecord, row: int) -> np.ndarray:
    """The int64 host byte addresses of batch row ``row``'s lanes, in block order."""
    affine = record.address_affine
    if affine is not None:
        scalar = affine.scalar.reshape(-1)
        return (scalar[row if scalar.size > 1 else 0] + affine.block.reshape(-1)).astype(np.int64)
    form = record.address_rows
    if record.address is None and form is not None:  # one row of the row form, not every lane
        mine = form.rows[row if form.rows.shape[0] > 1 else 0][None]
        return np.broadcast_to(mine + form.block, (1, *record.shape)).reshape(-1).astype(np.int64)
    batch = record.program_ids.shape[0]
    addresses = np.broadcast_to(record.addresses().view(np.int64), (batch, *record.shape))
    return addresses.reshape(batch, -1)[row]


def _request(record: OpRecord, issue: Issue, view: ViewInfo, shift: int, row: int,
             enabled: np.ndarray | None) -> list[dict]:  # fmt: skip
    """One lane per sector of the first request of batch row ``row`` that has an enabled lane."""
    if issue.layout is None:
        return []
    groups = issue.layout.instructions(tuple(record.shape), issue.vector)
    address = _row(record, row)
    for lanes in groups:
        lanes = lanes[lanes >= 0]
        if enabled is not None:
            lanes = lanes[enabled[lanes]]
        if lanes.size:
            break
    else:
        return []
    mine = address[lanes]
    sector = (mine - shift) // SECTOR
    found, first = np.unique(sector, return_index=True)
    picked = sorted(first.tolist())[:MAX_ELEMENTS]  # request order
    labels = []
    for k, i in enumerate(picked):
        used = np.unique(mine[sector == sector[i]]).size * record.itemsize
        labels.append(f"sector {k + 1}/{found.size} of request 1: {min(used, SECTOR)} of {SECTOR} bytes used")
    return _elements(record, view, row, lanes[picked], labels)


def _elements(record: OpRecord, view: ViewInfo, row: int, lanes: np.ndarray, labels: list[str]) -> list[dict]:
    """Marked elements: lanes ``lanes`` (flat, block order) of batch row ``row``, with the program
    and what happened there. A tensor-descriptor box names its elements by its coordinates (a box
    past the tensor's last column is clipped, not the next row); a pointer access by its addresses."""
    program = [int(p) for p in record.program_ids[row]]
    coords = record.coords
    if coords is not None and len(coords) == len(record.shape) and all(np.ndim(c) == 1 for c in coords):
        within = np.unravel_index(lanes, tuple(record.shape))
        elements = [
            [int(c[row if c.size > 1 else 0]) + int(i[j]) for c, i in zip(coords, within, strict=True)]
            for j in range(len(lanes))
        ]
    else:
        elements = [list(view.coordinates(int(a))) for a in _row(record, row)[lanes]]
    return [{"element": e, "program": program, "label": t} for e, t in zip(elements, labels, strict=False)]
