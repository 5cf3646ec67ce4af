"""How a warp would issue one memory op: lanes grouped into requests, counted in sectors and lines.

The model (documented in ``docs/profiler.md``):

* **Layout.** Triton's coalescing pass orders a block's dimensions by the contiguity it can prove
  for the pointer: the dimension whose neighbouring lanes are one element apart runs fastest; with
  none, the last dimension does (the default row-major order). Lanes are flattened in that order.
* **Vector width.** Each thread takes ``v`` consecutive lanes: the width the compiled kernel uses at
  that source location when the offline compile is known, else the widest power of two up to 16
  bytes that the block holds (``v`` at most lanes / threads of the program) and for which every
  thread's lanes are contiguous in memory and aligned to ``v * itemsize`` bytes in every program
  (what the hardware can do with these addresses; the compiler may prove less).
* **Request.** One warp instruction: ``warp_size`` threads, so ``warp_size * v`` consecutive lanes.
  A request with no enabled lane is not issued.
* **Traffic.** A request moves every distinct 32-byte sector its enabled lanes touch (the L1/L2
  transaction unit); lines are 128 bytes. Useful bytes are its distinct enabled element bytes.

Factored addresses (a per-program offset plus a block shared by every program) are analysed once
per distinct offset modulo 128 bytes, which is exact: sector and line boundaries repeat every 128.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from ...ir import ArgumentInfo, OpRecord

SECTOR = 32
LINE = 128
MAX_VECTOR_BYTES = 16
#: what a GPU allocator aligns an allocation to (cudaMalloc: 256 bytes)
ALLOCATION_ALIGNMENT = 256

#: access patterns from best to worst (a site that shows several reports the worst)
PATTERNS = ("broadcast", "contiguous", "strided", "scattered")


@dataclass
class Traffic:
    """Additive memory-traffic counters of one site (or one record)."""

    lanes: int = 0  #: lanes of the programs that executed the op
    active: int = 0  #: enabled lanes
    requests: int = 0  #: warp requests issued (at least one enabled lane)
    sectors: int = 0  #: 32-byte sectors moved
    lines: int = 0  #: 128-byte lines touched (per request)
    useful_bytes: int = 0  #: distinct enabled bytes per request

    def add(self, other: Traffic) -> None:
        """Add ``other``'s counts to these."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def scaled(self, n: int) -> Traffic:
        """These counts ``n`` times over."""
        return Traffic(**{f.name: getattr(self, f.name) * n for f in fields(self)})

    @property
    def moved_bytes(self) -> int:
        """Bytes the memory system moves: whole sectors."""
        return self.sectors * SECTOR


@dataclass(frozen=True)
class Shape:
    """How one op's block is laid out over a warp: the lane order and the vector width."""

    fast_axis: int  #: block axis that runs fastest across threads
    vector: int  #: elements per thread per instruction, as requests were cut
    achievable: int  #: the widest vector these addresses allow
    pattern: str  #: one of PATTERNS
    stride_bytes: int  #: distance between neighbouring lanes along the fast axis (strided pattern)


def placement(argument: ArgumentInfo) -> int:
    """Bytes to subtract from a tensor's host addresses so its allocation starts where a GPU's would.

    Host allocators align less than a GPU's (NumPy: 16 bytes); the profiler keeps each tensor's
    offset inside its allocation (a view that starts mid-allocation stays misaligned) and puts the
    allocation on an :data:`ALLOCATION_ALIGNMENT` boundary.
    """
    return (argument.address - argument.offset) % ALLOCATION_ALIGNMENT


def flatten(addresses: np.ndarray, fast_axis: int) -> np.ndarray:
    """``(B, *S)`` lanes in warp order: the fast axis last, then flattened to ``(B, L)``."""
    moved = np.moveaxis(addresses, fast_axis + 1, -1) if addresses.ndim > 1 else addresses
    return moved.reshape(moved.shape[0], -1)


def fast_axis(sample: np.ndarray, itemsize: int) -> int:
    """The block axis whose neighbouring lanes are one element apart (the last such); else the last axis.

    ``sample`` is ``(b, *S)`` addresses of a few programs.
    """
    ndim = sample.ndim - 1
    if ndim == 0:
        return 0
    for axis in reversed(range(ndim)):
        if sample.shape[axis + 1] > 1 and np.all(np.diff(sample, axis=axis + 1) == itemsize):
            return axis
    return ndim - 1


def pattern(rows: np.ndarray, itemsize: int, width: int) -> tuple[str, int]:
    """(pattern, stride in bytes) of flattened lanes ``rows`` ``(b, L)`` whose fast axis has ``width``."""
    lanes = rows.shape[1]
    if lanes < 2 or width < 2:
        return "broadcast" if lanes < 2 else "strided", 0
    steps = np.diff(rows.reshape(rows.shape[0], lanes // width, width), axis=2)
    first = int(steps.flat[0])
    if not np.all(steps == first):
        return "scattered", 0
    if first == 0:
        return "broadcast", 0
    if first == itemsize:
        return "contiguous", itemsize
    return "strided", first


def vector_width(rows: np.ndarray, residues: np.ndarray | None, itemsize: int, limit: int) -> int:
    """The widest power-of-two vector (elements) whose chunks are contiguous and aligned.

    ``rows`` are ``(b, L)`` flattened addresses (for a factored access: the shared block, with
    ``residues`` the distinct per-program offsets modulo 128 added in turn).
    """
    width = 1
    lanes = rows.shape[1]
    candidate = 2
    while candidate * itemsize <= MAX_VECTOR_BYTES and candidate <= limit and lanes % candidate == 0:
        chunks = rows.reshape(rows.shape[0], -1, candidate)
        if not np.all(np.diff(chunks, axis=2) == itemsize):
            break
        starts = chunks[:, :, 0]
        align = candidate * itemsize
        offsets = np.zeros(1, np.int64) if residues is None else residues
        if np.any((starts[None, :, :] + offsets.reshape(-1, 1, 1)) % align):
            break
        width = candidate
        candidate *= 2
    return width


def requests(flat: np.ndarray, enabled: np.ndarray | None, itemsize: int, per_request: int) -> Traffic:
    """Traffic of programs' flattened lanes ``flat`` ``(B, L)`` (int64 byte addresses).

    ``enabled`` is ``(B, L)`` or None (every lane); lanes are cut into requests of ``per_request``.
    """
    batch, lanes = flat.shape
    chunks = -(-lanes // per_request)
    pad = chunks * per_request - lanes
    valid = np.ones(flat.shape, dtype=bool) if enabled is None else enabled
    active = int(np.count_nonzero(valid))
    if pad:
        flat = np.pad(flat, ((0, 0), (0, pad)))
        valid = np.pad(valid, ((0, 0), (0, pad)))
    shaped = flat.reshape(batch, chunks, per_request)
    ok = valid.reshape(batch, chunks, per_request)
    # disabled lanes take the request's largest address, so they add nothing distinct
    fill = np.where(ok, shaped, np.iinfo(np.int64).min).max(axis=2, keepdims=True)
    ordered = np.sort(np.where(ok, shaped, fill), axis=2)
    issued = ok.any(axis=2)
    elements = _distinct(ordered) * issued
    sectors = _distinct(ordered // SECTOR) * issued
    lines = _distinct(ordered // LINE) * issued
    return Traffic(
        lanes=batch * lanes,
        active=active,
        requests=int(issued.sum()),
        sectors=int(sectors.sum()),
        lines=int(lines.sum()),
        useful_bytes=int(elements.sum()) * itemsize,
    )


def _distinct(ordered: np.ndarray) -> np.ndarray:
    """Distinct values per request of sorted ``(B, R, C)`` values."""
    return 1 + np.count_nonzero(ordered[:, :, 1:] != ordered[:, :, :-1], axis=2)


def analyse(record: OpRecord, warp: int, threads: int, shift: int = 0,
            compiled: int | None = None) -> tuple[Shape, Traffic]:  # fmt: skip
    """The warp layout and the traffic of one memory record.

    ``warp`` is the warp size, ``threads`` the threads of one program (``num_warps * warp``);
    ``shift`` is subtracted from every address (to place the tensor as the GPU would, see
    :func:`placement`); ``compiled`` is the vector width (elements) the compiled kernel uses at this
    site, when known: requests are cut at it, else at the widest the addresses allow.
    """
    itemsize = record.itemsize
    batch = record.program_ids.shape[0]
    full = (batch, *record.shape)
    mask = None if record.mask is None else np.broadcast_to(record.mask, full)
    uniform_mask = mask is None or mask.strides[0] == 0
    if record.address_affine is not None:
        affine = record.address_affine
        block = np.broadcast_to(affine.block, (1, *record.shape)).astype(np.int64, copy=False)
        scalar = np.broadcast_to(affine.scalar.astype(np.int64, copy=False) - shift, (batch,))
        axis = fast_axis(block, itemsize)
        rows = flatten(block, axis)
    else:
        addresses = np.broadcast_to(record.addresses().view(np.int64) - shift, full)
        axis = fast_axis(addresses[:8], itemsize)
        rows = flatten(addresses, axis)
        scalar = None
    lanes = rows.shape[1]
    enabled = None if mask is None else flatten(mask, axis)
    whole = np.ones(batch, dtype=bool) if enabled is None or uniform_mask else enabled.all(axis=1)
    width = record.shape[axis] if record.shape else 1
    limit = max(1, lanes // threads)
    if scalar is None:
        sample = rows[whole] if whole.any() else rows
        kind, stride = pattern(sample[:64], itemsize, width)
        achievable = vector_width(sample, None, itemsize, limit) if kind == "contiguous" else 1
        vector = compiled or achievable
        traffic = requests(rows, enabled, itemsize, warp * vector)
        return Shape(axis, vector, achievable, kind, stride), traffic
    kind, stride = pattern(rows, itemsize, width)
    residues = scalar % LINE
    achievable = vector_width(rows, np.unique(residues), itemsize, limit) if kind == "contiguous" else 1
    vector = compiled or achievable
    per_request = warp * vector
    traffic = Traffic()
    shared_mask = None if enabled is None else enabled[:1] if uniform_mask else None
    if whole.any():
        values, counts = np.unique(residues[whole], return_counts=True)
        for residue, count in zip(values.tolist(), counts.tolist(), strict=True):
            traffic.add(requests(rows + residue, shared_mask, itemsize, per_request).scaled(count))
    partial = ~whole
    if partial.any():
        flat = scalar[partial].reshape(-1, 1) + rows
        traffic.add(requests(flat, enabled[partial], itemsize, per_request))
    return Shape(axis, vector, achievable, kind, stride), traffic
