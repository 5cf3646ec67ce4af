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

import collections
import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...ir import ArgumentInfo, OpRecord

#: bytes of a sector and of a cache line, as shifts too (``a >> SECTOR_SHIFT`` is ``a // SECTOR`` for
#: ints, several times faster on lane arrays)
SECTOR_SHIFT, LINE_SHIFT = 5, 7
SECTOR, LINE = 1 << SECTOR_SHIFT, 1 << LINE_SHIFT
MAX_VECTOR_BYTES = 16
#: arrays up to this size are handled with Python's ints (see :func:`distinct`)
SMALL = 64
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

    def add(self, other: Traffic, times: int = 1) -> None:
        """Add ``other``'s counts (``times`` over) to these."""
        self.lanes += other.lanes * times
        self.active += other.active * times
        self.requests += other.requests * times
        self.sectors += other.sectors * times
        self.lines += other.lines * times
        self.useful_bytes += other.useful_bytes * times

    @property
    def moved_bytes(self) -> int:
        """Bytes the memory system moves: whole sectors."""
        return self.sectors * SECTOR


@dataclass(frozen=True)
class Issue:
    """How one op's block is laid out over a warp: the lane order and the vector width."""

    fast_axis: int  #: block axis that runs fastest across threads
    vector: int  #: elements per thread per instruction, as requests were cut
    achievable: int  #: the widest vector these addresses allow
    pattern: str  #: one of PATTERNS
    stride_bytes: int  #: distance between neighbouring lanes along the fast axis (strided pattern)
    layout: Layout | None = None  #: the blocked layout the requests were cut from
    compiled: bool = False  #: whether that layout is the offline compile's


def distinct(values: np.ndarray, counts: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values of an int array (and how often each occurs): ``np.unique`` by
    sorting, which NumPy 2.4's hashing ``unique`` is up to a hundred times slower than on large ones.
    Values that are already strictly increasing (one factored record's sectors) are not sorted; a few
    values (one per program of a small batch) are counted in Python, which NumPy's calls outweigh."""
    flat = values.reshape(-1)
    if flat.size <= SMALL:
        found = collections.Counter(flat.tolist())
        keys = sorted(found)
        unique = np.array(keys, dtype=flat.dtype)
        return (unique, np.array([found[k] for k in keys], dtype=np.int64)) if counts else unique
    if not counts and flat.size > 1 and bool(np.all(flat[1:] > flat[:-1])):
        return flat
    ordered = np.sort(flat)
    starts = np.ones(ordered.size, dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    found = ordered[starts]
    if not counts:
        return found
    return found, np.diff(np.append(np.flatnonzero(starts), ordered.size))


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


def vector_width(rows: np.ndarray, residues: np.ndarray | None, itemsize: int, limit: int,
                 aligned: bool = True) -> int:  # fmt: skip
    """The widest power-of-two run of lanes (elements) that is contiguous in memory (and, when
    ``aligned``, starts on a multiple of its own size), up to 16 bytes and ``limit`` elements.

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
        offsets = np.zeros(1, np.int64) if residues is None else residues
        if aligned and np.any((chunks[None, :, :, 0] + offsets.reshape(-1, 1, 1)) % (candidate * itemsize)):
            break
        width = candidate
        candidate *= 2
    return width


@dataclass(frozen=True)
class Layout:
    """A blocked layout (Triton's ``#ttg.blocked``): which thread of which warp holds each element."""

    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]  #: dimensions, fastest first

    @classmethod
    def from_dict(cls, d: dict) -> Layout:
        """The layout of an offline compile's ``accesses[].layout`` entry."""
        return cls(*(tuple(d[k]) for k in ("size_per_thread", "threads_per_warp", "warps_per_cta", "order")))

    @classmethod
    def default(cls, shape: tuple[int, ...], fast: int, per_thread: int, warp: int, warps: int) -> Layout:
        """Triton's default blocked layout for a block whose ``fast`` axis holds ``per_thread``
        contiguous elements per thread: threads, then warps, fill the dimensions fastest first."""
        rank = len(shape)
        if rank == 0:  # a scalar access (tl.store(out_ptr + row, total)): one thread of one warp
            return cls((), (), (), ())
        order = (fast, *[d for d in reversed(range(rank)) if d != fast])
        spt = [1] * rank
        spt[fast] = min(per_thread, shape[fast])
        tpw, wpc = [1] * rank, [1] * rank
        for counts, left, covered in ((tpw, warp, spt), (wpc, warps, None)):
            for d in order:
                room = shape[d] // (spt[d] * (tpw[d] if covered is None else 1))
                counts[d] = max(1, min(left, room))
                left //= counts[d]
            counts[order[-1]] *= left  # what is left over holds copies
        return cls(tuple(spt), tuple(tpw), tuple(wpc), order)

    @functools.lru_cache(maxsize=256)  # noqa: B019 - layouts are few and small; the cache is the point
    def instructions(self, shape: tuple[int, ...], vector: int, copies: bool = False) -> np.ndarray:
        """``(R, C)`` flat lane indices of each warp instruction (``-1`` pads a short one): thread
        ``t`` of a warp moves ``vector`` consecutive elements of its registers along the fastest
        dimension. Where the layout is larger than the block, several threads hold each element:
        with ``copies`` every copy is moved (a load: each thread reads what it holds), else once (a
        store or an atomic: the compiler masks off the copies)."""
        if not shape:
            return np.zeros((1, 1), dtype=np.int64)
        spt, tpw, wpc = (np.array(x, dtype=np.int64)[:, None] for x in
                         (self.size_per_thread, self.threads_per_warp, self.warps_per_cta))  # fmt: skip
        tile = spt * tpw * wpc
        held = np.maximum(np.array(shape), tile[:, 0]) if copies else np.array(shape)
        index = np.indices(tuple(held)).reshape(len(shape), -1)
        element = np.ravel_multi_index(tuple(index % np.array(shape)[:, None]), shape)
        position = index % tile
        reg = position % spt
        fast = self.order[0]
        vector = max(1, min(vector, int(spt[fast, 0])))
        reg_group = reg.copy()
        reg_group[fast] //= vector
        groups = np.maximum(spt[:, 0], 1)
        groups[fast] = -(-groups[fast] // vector)
        reps = -(-held // tile[:, 0])
        key = np.ravel_multi_index((*(position // (spt * tpw)), *(index // tile), *reg_group),
                                   (*wpc[:, 0], *reps, *groups))  # fmt: skip
        thread = np.ravel_multi_index(tuple((position // spt) % tpw), tuple(tpw[:, 0]))
        slot = thread * vector + reg[fast] % vector
        order = np.lexsort((slot, key))
        keys = key[order]
        starts = np.r_[True, keys[1:] != keys[:-1]]
        group = np.cumsum(starts) - 1
        rank = np.arange(keys.size) - np.flatnonzero(starts)[group]
        out = np.full((int(group[-1]) + 1, int(rank.max()) + 1), -1, dtype=np.int64)
        out[group, rank] = element[order]
        out.flags.writeable = False  # shared by every record that asks (cached)
        return out


def requests(flat: np.ndarray, enabled: np.ndarray | None, itemsize: int, groups: np.ndarray) -> Traffic:
    """Traffic of programs' lanes ``flat`` ``(B, L)`` (int64 byte addresses, block order).

    ``enabled`` is ``(B, L)`` or None (every lane); ``groups`` the ``(R, C)`` lanes of each warp
    instruction (:meth:`Layout.instructions`; ``-1`` for none).
    """
    batch, lanes = flat.shape
    active = batch * lanes if enabled is None else int(np.count_nonzero(enabled))
    groups, copies = _copies(np.ascontiguousarray(groups, dtype=np.int64).tobytes(), groups.shape)
    rows, cols = groups.shape
    owned = True  # whether ``ordered`` below is this function's own array (sorted and shifted in place)
    if rows * cols == lanes and np.array_equal(groups.reshape(-1), np.arange(lanes)):
        # each instruction takes consecutive lanes (the common layouts): a reshape, not a gather
        shaped = flat.reshape(batch, rows, cols)
        ok = None if enabled is None else enabled.reshape(batch, rows, cols)
        owned = ok is not None
    else:
        valid = np.ones(flat.shape, dtype=bool) if enabled is None else enabled
        if (groups < 0).any():
            flat = np.concatenate([flat, np.zeros((batch, 1), np.int64)], axis=1)
            valid = np.concatenate([valid, np.zeros((batch, 1), bool)], axis=1)
        shaped = flat[:, groups]
        ok = valid[:, groups]
    if ok is None:
        ordered, issued = shaped, np.ones((batch, rows), dtype=bool)
    else:
        # disabled lanes take the address of the request's last enabled lane, so they add nothing
        # distinct (and lanes in address order stay so)
        last = cols - 1 - np.argmax(ok[:, :, ::-1], axis=2)[:, :, None]
        ordered, issued = np.where(ok, shaped, np.take_along_axis(shaped, last, axis=2)), ok.any(axis=2)
    down = ordered[:, :, 1:] < ordered[:, :, :-1]
    steps = int(np.count_nonzero(down))
    if steps:  # lanes in address order already (most accesses) need no sort
        if not owned:
            ordered = np.array(ordered)  # never sort the caller's addresses in place
        if 2 * steps > batch * rows:  # scattered lanes: sort every request
            ordered.sort(axis=2)
        else:
            unsorted = down.any(axis=2)
            ordered[unsorted] = np.sort(ordered[unsorted], axis=1)
        owned = True
    # distinct values per issued request: one plus the changes between neighbours of its sorted lanes
    # (a request with no lane enabled holds one address throughout: no change)
    issues = int(np.count_nonzero(issued))
    elements = _changes(ordered)
    if owned:  # sectors and lines of sorted addresses, shifted in place
        ordered >>= SECTOR_SHIFT
        sectors = _changes(ordered)
        ordered >>= LINE_SHIFT - SECTOR_SHIFT
        lines = _changes(ordered)
    else:
        sectors, lines = _changes(ordered >> SECTOR_SHIFT), _changes(ordered >> LINE_SHIFT)
    return Traffic(
        lanes=batch * lanes,
        active=active,
        requests=issues * copies,
        sectors=(issues + sectors) * copies,
        lines=(issues + lines) * copies,
        useful_bytes=(issues + elements) * itemsize * copies,
    )


@functools.lru_cache(maxsize=256)
def _copies(groups: bytes, shape: tuple[int, int]) -> tuple[np.ndarray, int]:
    """Warp instructions ``(R, C)`` (as bytes) without repeats, and how often each occurs, when
    every distinct one occurs equally often (a block smaller than the layout: each warp loads
    every element, so each instruction's traffic counts once per copy); else all of them, once."""
    lanes = np.frombuffer(groups, dtype=np.int64).reshape(shape)
    _, first, counts = np.unique(lanes, axis=0, return_index=True, return_counts=True)
    if counts.size == shape[0] or np.any(counts != counts[0]):
        return lanes, 1
    return lanes[np.sort(first)], int(counts[0])


#: lanes held back in a :class:`Pending` before they are counted
PENDING_LANES = 1 << 15


class Pending:
    """Warp requests of per-lane addresses held back and counted together: one :func:`requests`
    over the programs of many records (a loop run as rows of the batch gives a record per iteration
    of a few programs each), per element size and warp instructions. Traffic is additive, so the
    total is the same as record by record; the fixed cost of a call is paid once per batch."""

    def __init__(self) -> None:
        self._batches: dict[tuple[int, int], tuple[np.ndarray, list, list]] = {}
        self._lanes = 0
        self._counted = Traffic()

    def add(self, flat: np.ndarray, enabled: np.ndarray | None, itemsize: int, groups: np.ndarray) -> None:
        """Hold :func:`requests`'s arguments back (counted at :meth:`total` or once enough are held)."""
        # the batch keeps ``groups`` (a cached array), so its id names it while the batch lives
        _, addresses, masks = self._batches.setdefault((itemsize, id(groups)), (groups, [], []))
        addresses.append(flat)
        masks.append(enabled)
        self._lanes += flat.size
        if self._lanes > PENDING_LANES:
            self._count()

    def total(self) -> Traffic:
        """The traffic of every request held back so far."""
        self._count()
        return self._counted

    def _count(self) -> None:
        for (itemsize, _), (groups, addresses, masks) in self._batches.items():
            flat = addresses[0] if len(addresses) == 1 else np.concatenate(addresses)
            self._counted.add(requests(flat, joined_masks(addresses, masks), itemsize, groups))
        self._batches.clear()
        self._lanes = 0


def joined_masks(addresses: Sequence[np.ndarray], masks: Sequence[np.ndarray | None]) -> np.ndarray | None:
    """The masks of held per-lane ``addresses`` as one array along their first axis (a None mask
    enables every lane of its addresses); None when every lane of every one is enabled."""
    if all(m is None for m in masks):
        return None
    return np.concatenate([np.ones(a.shape, bool) if m is None else m
                           for a, m in zip(addresses, masks, strict=True)])  # fmt: skip


def row_requests(found: Rows, itemsize: int, groups: np.ndarray) -> Traffic:
    """:func:`requests` of every lane of per-lane addresses that are whole contiguous rows, counted
    per row, not per lane: each warp instruction's lanes are a few runs of consecutive lanes of one
    row each (:func:`pieces`), so a request moves the union of a few address intervals."""
    starts, n = found.starts, found.n
    batch = starts.shape[0]
    row, lo, hi = pieces(groups, n)
    first = starts[:, row] + lo * itemsize  # (B, R, k) addresses of each run's first and last lane
    last = starts[:, row] + (hi - 1) * itemsize
    return Traffic(
        lanes=batch * starts.shape[1] * n,
        active=batch * starts.shape[1] * n,
        requests=batch * row.shape[0],
        sectors=_union(first // SECTOR, last // SECTOR + 1),  # a lane counts where it starts
        lines=_union(first // LINE, last // LINE + 1),
        useful_bytes=_union(first // itemsize, first // itemsize + (hi - lo)) * itemsize,
    )


@functools.lru_cache(maxsize=256)
def _pieces(groups: bytes, shape: tuple[int, int], n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lanes = np.frombuffer(groups, dtype=np.int64).reshape(shape)
    found = []
    for instruction in lanes:
        mine = np.unique(instruction[instruction >= 0])
        if mine.size == 0:
            continue  # no lane: not issued
        breaks = np.flatnonzero((np.diff(mine) != 1) | (np.diff(mine // n) != 0)) + 1
        heads, tails = np.r_[0, breaks], np.r_[breaks, mine.size] - 1
        found.append([(int(mine[h]) // n, int(mine[h]) % n, int(mine[t]) % n + 1)
                      for h, t in zip(heads, tails, strict=True)])  # fmt: skip
    k = max(len(f) for f in found)
    padded = np.array([f + [f[0]] * (k - len(f)) for f in found], dtype=np.int64)  # a repeat adds nothing
    return padded[..., 0], padded[..., 1], padded[..., 2]


def pieces(groups: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(row, lo, hi)``, each ``(R, k)``: warp instruction ``r`` (a row of ``groups``, ``-1`` for
    none; instructions with no lane left out) takes lanes ``[lo, hi)`` of block rows ``row`` of
    ``n`` lanes each, ``k`` runs (padded with repeats)."""
    return _pieces(np.ascontiguousarray(groups, dtype=np.int64).tobytes(), groups.shape, n)


def _union(first: np.ndarray, last: np.ndarray) -> int:
    """Total over requests of the distinct units covered by their intervals ``[first, last)``
    ``(B, R, k)`` (non-empty)."""
    if first.shape[-1] > 1:
        order = np.argsort(first, axis=-1)
        first, last = np.take_along_axis(first, order, -1), np.take_along_axis(last, order, -1)
    reach = np.maximum.accumulate(last, axis=-1)
    fresh = last[..., 1:] - np.maximum(first[..., 1:], reach[..., :-1])
    return int((last[..., 0] - first[..., 0]).sum() + np.maximum(fresh, 0).sum())


def _changes(ordered: np.ndarray) -> int:
    """How often a value differs from the one before it within a request, over sorted ``(B, R, C)``."""
    return int(np.count_nonzero(ordered[:, :, 1:] != ordered[:, :, :-1]))


def _broadcast(values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``np.broadcast_to``, skipped (a few microseconds a record) where ``values`` has the shape."""
    return values if values.shape == shape else np.broadcast_to(values, shape)


def factored(record: OpRecord, shift: int = 0) -> tuple[np.ndarray, np.ndarray] | None:
    """The record's addresses (less ``shift``) as a per-program offset ``(B,)`` plus a block shared by
    every program ``(1, *shape)``: the engine's factored form, or per-lane addresses that turn out
    to have it (a proof that needed lane-by-lane checks often does); None when they do not."""
    batch, shape = record.program_ids.shape[0], tuple(record.shape)
    if record.address_affine is not None:
        affine = record.address_affine
        scalar = _broadcast(affine.scalar.astype(np.int64, copy=False) - shift, (batch,))
        return scalar, _broadcast(affine.block, (1, *shape)).astype(np.int64, copy=False)
    addresses = np.broadcast_to(record.addresses().view(np.int64), (batch, *shape)).reshape(batch, -1)
    if addresses.shape[1] == 0:
        return None
    first = addresses[:, :1]
    block = addresses[:1] - first[:1]
    if not np.array_equal(addresses - first, np.broadcast_to(block, addresses.shape)):
        return None
    return first[:, 0] - shift, block.reshape(1, *shape)


@dataclass(frozen=True)
class Rows:
    """Per-lane addresses that are whole rows of contiguous elements: lanes ``[i * n, (i + 1) * n)``
    (block order) of program ``p`` lie at ``starts[p, i] + j * itemsize`` (an embedding gather)."""

    starts: np.ndarray  #: ``(B, N)`` int64 byte address of each row's first lane (the tensor placed)
    n: int  #: lanes per row

    def lanes(self, programs: int, shape: tuple[int, ...], itemsize: int) -> np.ndarray:
        """The ``(programs, *shape)`` per-lane addresses of the first ``programs`` programs."""
        steps = np.arange(self.n, dtype=np.int64) * itemsize
        return (self.starts[:programs, :, None] + steps).reshape(-1, *shape)


def rows(record: OpRecord, shift: int = 0) -> Rows | None:
    """The record's addresses (less ``shift``) as :class:`Rows`, from the engine's row form
    (``record.address_rows``): when the rows vary only on leading block axes, the shared block only
    on the trailing ones, contiguous in block order, and every row start has the same residue modulo
    the element size (so distinct addresses are distinct elements); else None."""
    form = record.address_rows
    if form is None or record.mask is not None or not record.shape:
        return None
    shape, itemsize = tuple(record.shape), record.itemsize
    rows_shape, block = form.rows.shape[1:], form.block
    varies = [n > 1 for n in block.shape[1:]]
    k = varies.index(True) if any(varies) else len(shape)
    if any(varies[:k]) or any(n > 1 for n in rows_shape[k:]) or len(rows_shape) != len(shape):
        return None
    n = int(np.prod(shape[k:], dtype=np.int64))
    flat = np.broadcast_to(block, (1, *shape)).reshape(-1)[:n].astype(np.int64)
    if not np.array_equal(flat - flat[0], np.arange(n, dtype=np.int64) * itemsize):
        return None
    batch = record.program_ids.shape[0]
    starts = np.broadcast_to(form.rows, (batch, *shape[:k], *rows_shape[k:])).reshape(batch, -1)
    starts = starts.astype(np.int64) + (int(flat[0]) - shift)
    if starts.size and np.any(starts % itemsize != starts.flat[0] % itemsize):
        return None
    return Rows(starts, n)


@dataclass(frozen=True)
class Lanes:
    """One memory record's lanes, prepared once for every figure the profiler takes of them."""

    batch: int  #: programs in the record
    shape: tuple[int, ...]  #: the block
    mask: np.ndarray | None  #: ``(B, L)`` enabled lanes (None: every lane)
    uniform: bool  #: the mask is the same for every program (or there is none)
    whole: np.ndarray  #: ``(B,)`` programs whose enabled lanes are the shared ones (all or the uniform mask)
    scalar: np.ndarray | None  #: ``(B,)`` per-program offset of a factored access, else None
    block: np.ndarray | None  #: ``(1, *shape)`` block shared by every program of a factored access
    addresses: np.ndarray | None  #: ``(B, *shape)`` per-lane byte addresses when neither factored nor rows
    rows: Rows | None = None  #: per-lane addresses that are whole contiguous rows (every lane enabled)

    @functools.cached_property
    def block_key(self) -> bytes:
        """The bytes of a factored access's shared block (what caches of what it gives are keyed by)."""
        return self.block.tobytes()

    @functools.cached_property
    def alignments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Of a factored access: the distinct per-program offsets modulo a line (128 bytes), those
        of the whole programs and how many whole programs have each (one sort when all are whole)."""
        residues = self.scalar % LINE
        if self.whole.all():
            values, counts = distinct(residues, counts=True)
            return values, values, counts
        values, counts = distinct(residues[self.whole], counts=True)
        return distinct(residues), values, counts


def lanes(record: OpRecord, shift: int = 0) -> Lanes:
    """``record``'s lanes with its tensor placed (``shift`` subtracted, see :func:`placement`)."""
    batch, shape = record.program_ids.shape[0], tuple(record.shape)
    full = (batch, *shape)
    mask = None if record.mask is None else _broadcast(record.mask, full)
    uniform = mask is None or mask.strides[0] == 0
    flat = None if mask is None else mask.reshape(batch, -1)
    whole = np.ones(batch, dtype=bool) if uniform else flat.all(axis=1)
    if not uniform and whole.all():  # a mask that enables every lane (rows of a loop's batch): none
        flat, uniform = None, True
    gathered = rows(record, shift) if record.address_affine is None else None
    if gathered is not None:
        starts = gathered.starts
        offsets = starts - starts[:, :1]
        if not np.array_equal(offsets, np.broadcast_to(offsets[:1], offsets.shape)):
            return Lanes(batch, shape, flat, uniform, whole, None, None, None, gathered)
        block = gathered.lanes(1, shape, record.itemsize) - starts[0, 0]  # factored after all
        return Lanes(batch, shape, flat, uniform, whole, starts[:, 0], block, None)
    found = factored(record, shift)
    if found is not None:
        return Lanes(batch, shape, flat, uniform, whole, found[0], found[1], None)
    addresses = np.broadcast_to(record.addresses().view(np.int64) - shift, full)
    return Lanes(batch, shape, flat, uniform, whole, None, None, addresses)


def analyse(record: OpRecord, prepared: Lanes, warp: int, warps: int, compiled: dict | None = None,
            cache: dict | None = None, pending: Pending | None = None) -> tuple[Issue, Traffic]:  # fmt: skip
    """The warp layout and the traffic of one memory record (its lanes ``prepared``).

    ``warp`` is the warp size, ``warps`` the warps of one program. ``compiled`` is the offline
    compile's entry for this access (``vector_bytes``, ``layout``), when known: then its layout and
    access width are used, else Triton's default layout for these addresses. ``cache`` (one per
    launch) keeps what a factored block gives, so a loop's later iterations over the same block
    and alignments reuse it. With ``pending``, the requests of per-lane addresses (and of programs
    that do not share a factored access's mask) go there, and the traffic returned leaves them out.
    """
    itemsize = record.itemsize
    measure = _counter(pending)
    batch, scalar, whole, flat_mask = prepared.batch, prepared.scalar, prepared.whole, prepared.mask
    if scalar is None:
        issue, groups = _issue(record, prepared, None, warp, warps, compiled)
        if prepared.rows is not None:
            return issue, row_requests(prepared.rows, itemsize, groups)
        return issue, measure(prepared.addresses.reshape(batch, -1), flat_mask, itemsize, groups)
    block = prepared.block_key
    cache = {} if cache is None else cache
    if prepared.block.size == 1:  # one lane per program: one request and one sector each, if enabled
        # (a lane has no vector width, so the programs' alignments do not matter)
        key = (record.site, record.kind, block, prepared.shape)
        if key not in cache:
            cache[key] = _issue(record, prepared, np.zeros(1, np.int64), warp, warps, compiled)
        active = batch if flat_mask is None else int(np.count_nonzero(flat_mask))
        return cache[key][0], Traffic(batch, active, active, active, active, active * itemsize)
    offsets, values, counts = prepared.alignments
    key = (record.site, record.kind, block, prepared.shape, offsets.tobytes())
    if key not in cache:
        cache[key] = _issue(record, prepared, offsets, warp, warps, compiled)
    issue, groups = cache[key]
    traffic = Traffic()
    base = prepared.block.reshape(1, -1)
    shared = None if flat_mask is None else (flat_mask[:1] if prepared.uniform else None)
    if whole.any():
        # what one program's requests move depends on the block, its alignment, the mask and the
        # instructions (the issue's layout and vector), not on the other programs' alignments
        same = (
            record.kind,
            itemsize,
            block,
            prepared.shape,
            issue,
            None if shared is None else shared.tobytes(),
        )
        for residue, count in zip(values.tolist(), counts.tolist(), strict=True):
            one = cache.get((same, residue))
            if one is None:
                one = cache[(same, residue)] = requests(base + residue, shared, itemsize, groups)
            traffic.add(one, count)
    partial = ~whole
    if partial.any():
        traffic.add(measure(scalar[partial].reshape(-1, 1) + base, flat_mask[partial], itemsize, groups))
    return issue, traffic


def _counter(pending: Pending | None):
    """:func:`requests`, or one that holds its arguments back in ``pending`` and counts nothing yet."""
    if pending is None:
        return requests

    def later(flat: np.ndarray, enabled: np.ndarray | None, itemsize: int, groups: np.ndarray) -> Traffic:
        pending.add(flat, enabled, itemsize, groups)
        return Traffic()

    return later


def _issue(record: OpRecord, prepared: Lanes, offsets: np.ndarray | None, warp: int, warps: int,
           compiled: dict | None) -> tuple[Issue, np.ndarray]:  # fmt: skip
    """How the record's block is laid out over a warp, and the lanes of each warp instruction.

    ``offsets`` are the distinct per-program offsets modulo 128 bytes of a factored access (None:
    per-lane addresses, sampled from the first programs)."""
    itemsize, shape = record.itemsize, prepared.shape
    if offsets is not None:
        sample = prepared.block
    elif prepared.rows is not None:  # every lane enabled
        sample = prepared.rows.lanes(64, shape, itemsize)
    else:
        whole, addresses = prepared.whole, prepared.addresses
        sample = addresses[whole] if prepared.mask is not None and whole.any() else addresses
        sample = sample[:64]
    axis = fast_axis(sample[:64], itemsize)
    rows = flatten(sample, axis)
    lanes = rows.shape[1]
    width = shape[axis] if shape else 1
    limit = max(1, lanes // (warp * warps))
    kind, stride = pattern(rows, itemsize, width)
    contiguous = kind == "contiguous"
    achievable = vector_width(rows, offsets, itemsize, limit) if contiguous else 1
    layout = None
    compiled = compiled or {}
    if compiled.get("layout") and tuple(compiled["layout"]["shape"]) == shape:
        layout = Layout.from_dict(compiled["layout"])
    known = layout is not None
    if layout is None:
        per_thread = vector_width(rows, offsets, itemsize, limit, aligned=False) if contiguous else 1
        layout = Layout.default(shape, axis, per_thread, warp, warps)
    fast = layout.order[0] if shape else 0
    vector = compiled["vector_bytes"] // itemsize if compiled.get("vector_bytes") else achievable
    vector = max(1, min(vector, layout.size_per_thread[fast] if shape else 1))
    groups = layout.instructions(shape, vector, copies=record.kind.value == "load")
    return Issue(fast, vector, achievable, kind, stride, layout, known), groups
