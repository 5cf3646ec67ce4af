"""The address table: every tensor argument is a view of a storage keyed by its real address.

A pointer value is a real byte address plus, where known, the view (argument) it was derived from.
Every access is resolved through this table and checked before any byte moves; nothing is ever
dereferenced raw: reads and writes go through NumPy arrays that share the tensors' memory.
Out-of-bounds lanes are reported to the caller and never touch memory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ir import ViewInfo
from .errors import SharedLoadWritten

#: how far a pointer derived from an argument may reach: "warn" (its view without a finding, the rest
#: of its storage with a warning fault), "view" (its view; past it is out of bounds), "storage" (all
#: of its storage, silently)
BOUNDS = ("warn", "view", "storage")

UNKNOWN = -1  # provenance of a pointer whose origin is not one argument (loaded, int_to_ptr, mixed)


@dataclass(repr=False, eq=False)
class Storage:
    """One host buffer: the memory behind one or more tensor arguments."""

    base: int
    nbytes: int
    buf: np.ndarray  # uint8, shares memory with the user's tensor
    _typed: dict = field(default_factory=dict)

    def typed(self, dtype: np.dtype) -> np.ndarray:
        """The buffer viewed as elements of ``dtype`` starting at the storage base."""
        dtype = np.dtype(dtype)
        view = self._typed.get(dtype)
        if view is None:
            usable = self.nbytes - self.nbytes % dtype.itemsize
            view = self.buf[:usable].view(dtype)
            self._typed[dtype] = view
        return view


@dataclass(frozen=True)
class View:
    """A kernel argument's view of a storage; ``vid`` is the provenance pointers carry."""

    vid: int
    info: ViewInfo
    storage: Storage
    writable: bool = True  # False for a read-only NumPy array (``flags.writeable``)

    @property
    def lo(self) -> int:
        """Lowest byte address of the view's extent."""
        return self.info.lo

    @property
    def hi(self) -> int:
        """One past the highest byte address of the view's extent."""
        return self.info.hi


@dataclass(frozen=True)
class Strided:
    """Lanes that form a strided box inside one storage: lane ``(p, j0, j1, ...)`` is element
    ``offset + p * strides[0] + j0 * strides[1] + ...`` (in elements). Whoever builds one has
    checked that every lane of the box, enabled or not, lies inside the storage, so the box can be
    read and written as a NumPy view: data then moves at memory speed, with no index arrays.

    ``rows``: programs whose blocks do not step evenly (a 2-D grid's tiles) give each program's
    start instead, ``offset + rows[p]``; rows of shape (B, *S[:k]) give one start per row of the
    first k block axes (an embedding lookup's loaded row indices), the strides of those axes being
    0. Such a box is read block by block (:meth:`gather`), one copy per row, with no per-lane index
    arrays.
    """

    storage: Storage
    offset: int
    strides: tuple[int, ...]
    rows: np.ndarray | None = None  # (B, *S[:k]) element offsets of each row's block from ``offset``

    def view(self, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """The box as a strided view of the storage (elements of ``dtype``); evenly stepping boxes only."""
        typed = self.storage.typed(dtype)
        item = typed.itemsize
        return np.lib.stride_tricks.as_strided(
            typed[self.offset :], shape=shape, strides=tuple(s * item for s in self.strides)
        )

    def gather(self, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """A copy of every lane of the box (elements of ``dtype``), each program's block copied at once."""
        if self.rows is None:
            return self.view(dtype, shape).copy()
        return self.blocks(dtype, shape)[self.rows]

    def blocks(self, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """A box with ``rows``: ``blocks[o]`` is the block starting ``o`` elements past ``offset``, so
        that ``blocks[rows]`` is every lane (a view of the storage; the blocks may overlap)."""
        typed = self.storage.typed(dtype)
        item = typed.itemsize
        inner = self.rows.ndim  # the first axis (program axis included) the rows do not index
        # whoever built the box proved every row's extremes inside the storage, so every block a
        # row picks lies inside it
        return np.lib.stride_tricks.as_strided(
            typed[self.offset :],
            shape=(int(self.rows.max()) + 1, *shape[inner:]),
            strides=(item, *(s * item for s in self.strides[inner:])),
        )

    def span(self, itemsize: int, shape: tuple[int, ...]) -> tuple[int, int]:
        """The byte addresses [lo, hi) the box's lanes (``itemsize`` bytes each) lie in."""
        extents = [(n - 1) * step for n, step in zip(shape, self.strides, strict=True)]
        if self.rows is not None:
            extents.append(int(self.rows.max()))
        first = self.storage.base + self.offset * itemsize
        lowest = first + sum(e for e in extents if e < 0) * itemsize
        return lowest, first + (sum(e for e in extents if e > 0) + 1) * itemsize

    def indices(self, shape: tuple[int, ...]) -> np.ndarray:
        """The element index of every lane of the box."""
        idx = np.full(shape, self.offset, dtype=np.int64)
        if self.rows is not None:
            idx = idx + self.rows.reshape(*self.rows.shape, *([1] * (len(shape) - self.rows.ndim)))
        for axis, (n, step) in enumerate(zip(shape, self.strides, strict=True)):
            along = [1] * len(shape)
            along[axis] = n
            idx = idx + (np.arange(n, dtype=np.int64) * step).reshape(along)
        return idx


@dataclass(repr=False, eq=False)
class Access:
    """The result of checking one access: which lanes are valid and where their data lives.

    ``storages`` lists (storage, lane mask, element index) per storage touched; when ``strided`` is
    set the lanes form one strided box and the index array is built only if asked for.
    """

    ok: np.ndarray  # enabled and in bounds
    bad: np.ndarray  # enabled and out of bounds (or misaligned)
    misaligned: np.ndarray
    storages: list[tuple[Storage, np.ndarray, np.ndarray | None]]
    view: View | None
    strided: Strided | None = None
    #: every lane is enabled and in bounds (proven): ``ok`` is all true and ``bad`` all false
    whole: bool = False

    def all_ok(self) -> bool:
        """Whether every lane is valid."""
        return self.whole or bool(self.ok.all())

    def any_ok(self) -> bool:
        """Whether some lane is valid."""
        return self.whole or bool(self.ok.any())

    outside_view: np.ndarray | None = None  # ``bounds="warn"``: valid lanes outside the view's extent

    def indexed(self) -> list[tuple[Storage, np.ndarray, np.ndarray]]:
        """``storages`` with every element index array built."""
        if self.strided is None:
            return self.storages
        return [(st, lanes, self.strided.indices(lanes.shape)) for st, lanes, _ in self.storages]


class _IndexUndo:
    """Old values of elements written by index."""

    def __init__(self, typed: np.ndarray, where: np.ndarray, old: np.ndarray):
        self.typed, self.where, self.old = typed, where, old

    def restore(self) -> None:
        self.typed[self.where] = self.old

    def release(self) -> None:
        """Nothing kept: index snapshots are as small as the elements they wrote."""


class _SnapshotBuffers:
    """Buffers that undo snapshots are copied into, kept between launches (bounded in bytes).

    A warm launch writing the same boxes again copies into memory whose pages are already mapped,
    instead of faulting in a fresh allocation as large as its output on every launch.
    """

    def __init__(self, limit_bytes: int):
        self.limit_bytes = limit_bytes
        self._free: dict[tuple, list[np.ndarray]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def copy_of(self, view: np.ndarray) -> np.ndarray:
        """A copy of ``view`` (in a kept buffer of its shape and dtype when one is free)."""
        with self._lock:
            free = self._free.get((view.shape, view.dtype))
            buf = free.pop() if free else None
            if buf is not None:
                self._bytes -= buf.nbytes
        if buf is None:
            return view.copy()
        np.copyto(buf, view)
        return buf

    def give_back(self, buf: np.ndarray) -> None:
        """``buf`` is no longer needed: keep it for a later snapshot while the limit allows."""
        with self._lock:
            if self._bytes + buf.nbytes <= self.limit_bytes:
                self._free.setdefault((buf.shape, buf.dtype), []).append(buf)
                self._bytes += buf.nbytes


_SNAPSHOTS = _SnapshotBuffers(limit_bytes=256 << 20)

#: pending writes an attempt keeps at most (each holds its values; every access scans them)
_MAX_PENDING = 32


class _ViewUndo:
    """Old values of a strided box written through a view (``lanes``: which of them were written)."""

    def __init__(self, view: np.ndarray, lanes: np.ndarray | None):
        self.view, self.old, self.lanes = view, _SNAPSHOTS.copy_of(view), lanes

    def restore(self) -> None:
        if self.lanes is None:
            self.view[...] = self.old
        else:
            np.copyto(self.view, self.old, where=self.lanes)

    def release(self) -> None:
        _SNAPSHOTS.give_back(self.old)


class _RowsUndo:
    """Old values of a box with rows (each program's block), written block by block."""

    def __init__(self, blocks: np.ndarray, rows: np.ndarray):
        self.blocks, self.rows, self.old = blocks, rows, blocks[rows]

    def restore(self) -> None:
        self.blocks[self.rows] = self.old

    def release(self) -> None:
        """Nothing kept: the snapshot is a copy of the blocks written."""


class _ViewWrite:
    """A write of a strided box through a view (``lanes``: which of its lanes; None: all)."""

    def __init__(self, view: np.ndarray, values: np.ndarray, lanes: np.ndarray | None):
        self.view, self.values, self.lanes = view, values, lanes

    def undo(self) -> _ViewUndo:
        """A snapshot of what the write overwrites."""
        return _ViewUndo(self.view, self.lanes)

    def apply(self) -> None:
        """Write the values."""
        if self.lanes is None:
            self.view[...] = self.values
        else:
            np.copyto(self.view, self.values, where=self.lanes)


class _RowsWrite:
    """A write of every lane of a box with rows, block by block."""

    def __init__(self, blocks: np.ndarray, rows: np.ndarray, values: np.ndarray):
        self.blocks, self.rows, self.values = blocks, rows, values

    def undo(self) -> _RowsUndo:
        """A snapshot of what the write overwrites."""
        return _RowsUndo(self.blocks, self.rows)

    def apply(self) -> None:
        """Write the values."""
        self.blocks[self.rows] = self.values


class _Deferred:
    """A write of a strided box kept pending until its attempt commits (a redo record).

    An attempt that commits writes the box once, without copying what it overwrites; one that is
    abandoned never touched memory. An access of the attempt that may overlap the byte range
    [lo, hi) first applies the write (with a snapshot, as an immediate write would have taken), so
    every access sees memory as if the write had happened when the store ran.
    """

    def __init__(self, lo: int, hi: int, write: _ViewWrite | _RowsWrite):
        self.lo, self.hi = lo, hi
        self.write: _ViewWrite | _RowsWrite | None = write
        self.undone: _ViewUndo | _RowsUndo | None = None  # the snapshot of a write applied early

    def apply(self, keep_undo: bool) -> None:
        """Write it now; ``keep_undo``: snapshot the old values first (the attempt may still roll back)."""
        if keep_undo:
            self.undone = self.write.undo()
        self.write.apply()
        self.write = None

    def restore(self) -> None:
        if self.undone is not None:
            self.undone.restore()

    def release(self) -> None:
        if self.undone is not None:
            self.undone.release()


def _fill(shape: tuple, dtype: np.dtype, other: np.ndarray | None) -> np.ndarray:
    """An array of ``shape`` holding ``other`` (or zeros)."""
    if other is None:
        return np.zeros(shape, dtype=dtype)
    return np.array(np.broadcast_to(other, shape), dtype=dtype)


class AddressTable:
    """Storages and views of one launch; resolves and checks addresses; keeps the undo log."""

    def __init__(self, bounds: str = "warn"):
        if bounds not in BOUNDS:
            raise ValueError(f"bounds must be one of {', '.join(map(repr, BOUNDS))}; got {bounds!r}")
        self.bounds = bounds
        self.storages: list[Storage] = []
        self.holds = 0  # outer marks that keep undo records past an attempt's commit (schedules)
        self.views: list[View] = []
        self._bases = np.zeros(0, dtype=np.uint64)
        self.undo: list[_IndexUndo | _ViewUndo | _RowsUndo | _Deferred] = []
        self._pending: list[_Deferred] = []  # writes of this attempt not yet applied, oldest first
        #: loads may hand out read-only views of memory instead of copies (no client keeps values)
        self.share_loads = False
        #: load sites whose data is copied (their storage is written while they are alive)
        self.copy_sites: set = set()
        self._shared: dict[int, set] = {}  # storage base -> load sites sharing it in this attempt
        self.version = 0  # bumped by every write that changes memory (concurrent mode watches it)
        #: registers live host buffers that hold addresses no argument holds (pointer arrays)
        self.discover: Callable[[AddressTable, np.ndarray], None] | None = None

    # ------------------------------------------------------------------ registration

    def storage_for(self, base: int, nbytes: int, buf: np.ndarray) -> Storage:
        """Return the storage at ``base``, creating it (or growing the known extent) as needed."""
        for st in self.storages:
            if st.base == base:
                if nbytes > st.nbytes:
                    raise ValueError("two different buffers claim the same address")
                return st
        st = Storage(base, nbytes, buf)
        self.storages.append(st)
        self.storages.sort(key=lambda s: s.base)
        self._bases = np.array([s.base for s in self.storages], dtype=np.uint64)
        return st

    def add_view(self, info: ViewInfo, storage: Storage, writable: bool = True) -> View:
        """Register an argument's view; returns it (its ``vid`` is the pointer provenance)."""
        view = View(len(self.views), info, storage, writable)
        self.views.append(view)
        return view

    # ------------------------------------------------------------------ checking

    def extent(self, view: View) -> tuple[int, int]:
        """The byte range [lo, hi) a pointer derived from ``view`` may access without any fault."""
        if self.bounds == "storage":
            return view.storage.base, view.storage.base + view.storage.nbytes
        return view.lo, view.hi

    def check(self, addresses: np.ndarray, enabled: np.ndarray, prov: int, itemsize: int) -> Access:
        """Check every enabled lane of an access of ``itemsize`` bytes at ``addresses``.

        Under ``bounds="warn"`` a lane outside its view but inside the view's storage is valid (its
        data moves, as on the GPU) and is marked in ``outside_view``.
        """
        addresses = np.asarray(addresses, dtype=np.uint64)
        enabled = np.broadcast_to(enabled, addresses.shape)
        view = self.views[prov] if prov is not None and prov >= 0 else None
        if view is None:
            return self._check_unknown(addresses, enabled, itemsize)
        if self.bounds != "warn":
            return self._check_view(view, *self.extent(view), addresses, enabled, itemsize)
        st = view.storage
        access = self._check_view(view, st.base, st.base + st.nbytes, addresses, enabled, itemsize)
        span = view.hi - view.lo - itemsize  # the last byte offset an element of the view starts at
        if span >= 0:
            in_view = addresses - np.uint64(view.lo) <= np.uint64(span)
        else:
            in_view = np.zeros(addresses.shape, dtype=bool)
        outside = access.ok & ~in_view
        access.outside_view = outside if outside.any() else None
        return access

    def _check_view(
        self, view: View, lo: int, hi: int, addresses: np.ndarray, enabled: np.ndarray, itemsize: int
    ) -> Access:
        """Check lanes of a pointer derived from one argument against the byte range [lo, hi) of its storage.

        Written for speed (it runs on every lane of every access): an unsigned compare gives
        "inside" in one pass, alignment is checked with one OR-reduction (pointers built by
        ``addptr`` are always aligned; only bitcasts can break it), and element indices of lanes
        outside stay as they are (gathers clip, scatters select).
        """
        st = view.storage
        rel = addresses - np.uint64(lo)
        if hi - lo >= itemsize:
            inside = rel <= np.uint64(hi - lo - itemsize)
        else:
            inside = np.zeros(addresses.shape, dtype=bool)
        first = lo - st.base  # byte offset of the extent within the storage
        power_of_two = itemsize & (itemsize - 1) == 0
        if (
            power_of_two
            and first % itemsize == 0
            and not (np.bitwise_or.reduce(rel, axis=None) & (itemsize - 1))
        ):
            idx = (rel >> np.uint64(itemsize.bit_length() - 1)).view(np.int64)
            if first:
                idx = idx + first // itemsize
            misaligned = None
        else:
            signed = rel.view(np.int64) + first
            misaligned = enabled & inside & (signed % itemsize != 0)
            inside = inside & ~misaligned
            idx = signed // itemsize
        ok = inside & enabled
        bad = np.greater(enabled, inside)
        if misaligned is None:
            misaligned = np.zeros(addresses.shape, dtype=bool)
        return Access(ok, bad, misaligned, [(st, ok, idx)], view)

    def _check_unknown(self, addresses: np.ndarray, enabled: np.ndarray, itemsize: int) -> Access:
        """Resolve lanes of a pointer with no single origin by looking each address up."""
        if self.discover is not None and enabled.any():
            which = np.searchsorted(self._bases, addresses, side="right").astype(np.int64) - 1
            known = which >= 0
            ends = np.array([s.base + s.nbytes for s in self.storages], dtype=np.uint64)
            known[known] &= addresses[known] < ends[which[known]]
            if (enabled & ~known).any():
                self.discover(self, np.unique(addresses[enabled & ~known]))
        ok = np.zeros(addresses.shape, dtype=bool)
        misaligned = np.zeros(addresses.shape, dtype=bool)
        parts = []
        if self.storages:
            which = np.searchsorted(self._bases, addresses, side="right").astype(np.int64) - 1
            for i in np.unique(which[enabled & (which >= 0)]):
                st = self.storages[int(i)]
                lanes = enabled & (which == i)
                rel = (addresses - np.uint64(st.base)).view(np.int64)
                inside = lanes & (rel <= st.nbytes - itemsize)
                mis = inside & (rel % itemsize != 0)
                good = inside & ~mis
                misaligned |= mis
                ok |= good
                parts.append((st, good, np.where(good, rel // itemsize, 0)))
        return Access(ok, enabled & ~ok, misaligned, parts, None)

    def view_of(self, address: int) -> View | None:
        """The argument view whose extent holds ``address`` (the smallest such), if any."""
        best = None
        for v in self.views:
            if v.lo <= address < v.hi and (best is None or v.hi - v.lo < best.hi - best.lo):
                best = v
        return best

    # ------------------------------------------------------------------ data movement

    def gather(
        self, access: Access, dtype: np.dtype, other: np.ndarray | None, site: Any = None
    ) -> np.ndarray:
        """Read the valid lanes of a checked access; other lanes take ``other`` (or zero).

        A whole strided box is read as a read-only view of memory when loads may be shared and
        ``site`` is not known to need a copy; a later write to that storage in the same attempt
        abandons the attempt (:class:`SharedLoadWritten`), which then runs with the copy.
        """
        shape = access.ok.shape
        self.settle(access, dtype)
        if access.strided is not None and access.strided.rows is not None:
            data = access.strided.gather(dtype, shape)
            if not access.all_ok():
                fill = np.zeros((), dtype) if other is None else np.asarray(other).astype(dtype)
                np.copyto(data, fill, where=~access.ok)
            return data
        if access.strided is not None:
            view = access.strided.view(dtype, shape)
            if access.all_ok():
                if not self.share_loads or site in self.copy_sites:
                    return view.copy()
                self._shared.setdefault(access.strided.storage.base, set()).add(site)
                shared = view.view()
                shared.flags.writeable = False
                return shared
            out = _fill(shape, dtype, other)
            np.copyto(out, view, where=access.ok)
            return out
        out = None
        for st, lanes, idx in access.storages:
            typed = st.typed(dtype)
            if typed.size == 0 or not lanes.any():
                continue
            vals = np.take(typed, idx, mode="clip")
            if out is None and lanes.all():
                return vals
            if out is None:
                out = _fill(shape, dtype, other)
            np.copyto(out, vals, where=lanes)
        return out if out is not None else _fill(shape, dtype, other)

    def scatter(self, access: Access, values: np.ndarray, dtype: np.dtype) -> None:
        """Write the valid lanes of a checked access (recording old values for undo).

        A strided box is written when the attempt commits (:class:`_Deferred`), unless an access
        that may overlap it comes first.
        """
        values = np.broadcast_to(values, access.ok.shape)
        if access.strided is not None:
            if not access.any_ok():
                return
            box = access.strided
            self.writing(box.storage)
            # an older pending write to the same bytes is applied first (a box rewritten in a loop
            # keeps one pending write, not one per iteration), and at most _MAX_PENDING wait
            self.settle(access, dtype)
            if len(self._pending) >= _MAX_PENDING:
                self._settle_all(keep_undo=True)
            if box.rows is not None:  # built for writes only with every lane enabled
                write = _RowsWrite(box.blocks(dtype, access.ok.shape), box.rows, values)
            else:
                lanes = None if access.all_ok() else access.ok
                write = _ViewWrite(box.view(dtype, access.ok.shape), values, lanes)
            record = _Deferred(*box.span(np.dtype(dtype).itemsize, access.ok.shape), write)
            self.undo.append(record)
            self._pending.append(record)
            self.version += 1
            return
        self.settle(access, dtype)
        for st, lanes, idx in access.storages:
            if not lanes.any():
                continue
            self.writing(st)
            typed = st.typed(dtype)
            where = idx[lanes]
            self.undo.append(_IndexUndo(typed, where, typed[where].copy()))
            typed[where] = values[lanes]
            self.version += 1

    def write_elements(self, storage: Storage, dtype: np.dtype, idx: np.ndarray, values: np.ndarray) -> None:
        """Write elements by index (already checked), recording old values for undo."""
        self.writing(storage)
        self._settle_range(storage.base, storage.base + storage.nbytes)
        typed = storage.typed(dtype)
        old = typed[idx].copy()
        self.undo.append(_IndexUndo(typed, idx, old))
        typed[idx] = values
        if not np.array_equal(old.view(np.uint8), typed[idx].view(np.uint8)):
            self.version += 1

    # ------------------------------------------------------------------ attempts

    def writing(self, storage: Storage) -> None:
        """About to write ``storage``: not while a load of this attempt shares it as a view."""
        sites = self._shared.get(storage.base)
        if sites:
            raise SharedLoadWritten(frozenset(sites))

    def settle(self, access: Access, dtype: np.dtype) -> None:
        """Apply the pending writes the lanes of ``access`` (elements of ``dtype``) may overlap."""
        if not self._pending:
            return
        if access.strided is not None:
            self._settle_range(*access.strided.span(np.dtype(dtype).itemsize, access.ok.shape))
            return
        for st, _, _ in access.storages:
            self._settle_range(st.base, st.base + st.nbytes)

    def _settle_range(self, lo: int, hi: int) -> None:
        """Apply, oldest first and with undo, the pending writes that overlap the bytes [lo, hi) and
        the older ones those overlap (so that writes to the same bytes keep their order)."""
        ranges, chosen = [(lo, hi)], []
        for record in reversed(self._pending):
            if any(record.lo < b and a < record.hi for a, b in ranges):
                chosen.append(record)
                ranges.append((record.lo, record.hi))
        if not chosen:
            return
        for record in reversed(chosen):
            record.apply(keep_undo=True)
        self._pending = [r for r in self._pending if r.write is not None]

    def mark(self) -> int:
        """A point in the undo log to roll back to (an attempt begins: no load shares memory yet)."""
        self._shared.clear()
        self._settle_all(keep_undo=True)
        return len(self.undo)

    def _settle_all(self, keep_undo: bool) -> None:
        """Apply every pending write, oldest first."""
        for record in self._pending:
            record.apply(keep_undo)
        self._pending = []

    def rollback(self, mark: int) -> None:
        """Undo every write made after ``mark``, newest first (a pending one never touched memory)."""
        while len(self.undo) > mark:
            record = self.undo.pop()
            record.restore()
            record.release()
        self._pending = []  # (all newer than any mark: a mark applies those before it)

    def commit(self, mark: int) -> None:
        """Apply the pending writes; forget the undo records after ``mark`` (the attempt is final),
        unless an outer mark holds them (then the pending writes keep a snapshot too)."""
        self._settle_all(keep_undo=bool(self.holds))
        if not self.holds:
            for record in self.undo[mark:]:
                record.release()
            del self.undo[mark:]

    def contents(self, address: int, shape: tuple[int, ...], strides: tuple[int, ...],
                 dtype: np.dtype) -> np.ndarray:  # fmt: skip
        """A copy of the elements of the view at ``address`` (``strides`` in elements)."""
        storage = next(s for s in self.storages if s.base <= address < s.base + max(s.nbytes, 1))
        self._settle_range(storage.base, storage.base + storage.nbytes)
        itemsize = np.dtype(dtype).itemsize
        flat = storage.buf[address - storage.base :].view(np.uint8)
        return np.lib.stride_tricks.as_strided(flat[: flat.size - flat.size % itemsize].view(dtype), shape,
                                               [s * itemsize for s in strides]).copy()  # fmt: skip
