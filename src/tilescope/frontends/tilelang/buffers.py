"""TileLang's buffers on the engine: global tensors in the launch's memory, on-chip buffers as values.

A kernel argument (``T.Tensor``, a global buffer) is an allocation in the launch's address table:
reading or writing it builds a pointer block (base + index * stride) and goes through the engine's
memory-access pipeline, which checks every access. Shared and fragment buffers (``T.alloc_shared``,
``T.alloc_fragment``, ``T.alloc_local``) belong to one block each and have no addresses: each is an
engine value of its whole shape, one per program of the batch, replaced by every write. An index
outside an on-chip buffer is a fault at the user's line (the GPU would read or clobber other shared
memory or registers); the access then reads zeros and writes nothing there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...engine import access, dtypes, ops
from ...engine.affine import Affine
from ...engine.dtypes import DType
from ...engine.ops import Op
from ...engine.values import Value
from ...ir import FaultKind, Node, ViewInfo
from ..values import apply_broadcast, broadcast_to, cast

#: TileLang / TVM dtype names -> the engine's
_DTYPES = {
    "bool": dtypes.BOOL,
    "int8": dtypes.INT8,
    "int16": dtypes.INT16,
    "int32": dtypes.INT32,
    "int64": dtypes.INT64,
    "uint8": dtypes.UINT8,
    "uint16": dtypes.UINT16,
    "uint32": dtypes.UINT32,
    "uint64": dtypes.UINT64,
    "float16": dtypes.FP16,
    "bfloat16": dtypes.BF16,
    "float32": dtypes.FP32,
    "float64": dtypes.FP64,
    "float8_e4m3": dtypes.FP8E4M3FN,  # TileLang's name for torch.float8_e4m3fn
    "float8_e4m3fn": dtypes.FP8E4M3FN,
    "float8_e5m2": dtypes.FP8E5M2,
}


def engine_dtype(name: object) -> DType:
    """The engine dtype of a TileLang dtype (``"float16"``, ``T.float32``); a clear error for others."""
    found = _DTYPES.get(str(name))
    if found is None:
        raise TypeError(
            f"TileLang dtype {name} is not supported by tilescope (supported: {', '.join(_DTYPES)})"
        )
    return found


@dataclass
class GlobalBuffer:
    """A kernel argument: its base pointer, shape and element strides."""

    name: str
    base: Value
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: DType

    def pointer(self, launch, indices: list[Value]) -> Value:
        """The pointer block of the elements at ``indices`` (one value per dimension)."""
        offset = None
        for index, stride in zip(indices, self.strides, strict=True):
            term = (
                index if stride == 1 else apply_broadcast(Op.MUL, [index, ops.constant(stride, index.dtype)])
            )
            offset = term if offset is None else apply_broadcast(Op.ADD, [offset, term])
        if offset is None:
            return self.base
        return broadcast_ptr(launch, self.base, offset)

    def in_shape(self, indices: list[Value]) -> Value | None:
        """The lanes whose every index lies inside the buffer's shape (TileLang's guard of global
        accesses in parallel loops and tile operations); None when every index provably does, as
        TileLang's compiler then emits no guard."""
        mask = None
        for index, extent in zip(indices, self.shape, strict=True):
            lo, hi = _bounds(index)
            checks = [(Op.GE, 0)] if lo < 0 else []
            checks += [(Op.LT, extent)] if hi >= extent else []
            for op, bound in checks:
                inside = apply_broadcast(op, [index, ops.constant(bound, index.dtype)])
                mask = inside if mask is None else apply_broadcast(Op.AND, [mask, inside])
        return mask

    def load(self, launch, indices: list[Value], mask: Value | None, guard: bool) -> Value:
        """The elements at ``indices`` (zero where ``mask`` is false or, with ``guard``, outside the
        shape)."""
        mask = _conjoin(mask, self.in_shape(indices) if guard else None)
        pointer = self.pointer(launch, indices)
        if mask is not None:
            shape = np.broadcast_shapes(pointer.shape, mask.shape)
            pointer, mask = broadcast_to(pointer, shape), broadcast_to(mask, shape)
        return access.load(launch, pointer, mask, ops.constant(0, self.dtype))

    def store(self, launch, indices: list[Value], value: Value, mask: Value | None, guard: bool) -> None:
        """Write ``value`` at ``indices`` (where ``mask`` holds and, with ``guard``, inside the shape)."""
        mask = _conjoin(mask, self.in_shape(indices) if guard else None)
        pointer = self.pointer(launch, indices)
        shape = np.broadcast_shapes(pointer.shape, value.shape, *(() if mask is None else (mask.shape,)))
        value = broadcast_to(cast(value, self.dtype), shape)
        mask = None if mask is None else broadcast_to(mask, shape)
        access.store(launch, broadcast_to(pointer, shape), value, mask)


def _bounds(index: Value) -> tuple[int, int]:
    """The smallest and largest value an index takes in the running batch."""
    if isinstance(index.lazy, Affine):
        return index.lazy.bounds()
    data = index.data
    return int(data.min()), int(data.max())


def broadcast_ptr(launch, base: Value, offset: Value) -> Value:
    """``base + offset`` elements, as a pointer block of ``offset``'s shape."""
    return ops.apply(launch, Op.PTR_ADD, broadcast_to(base, offset.shape), offset)


def _conjoin(a: Value | None, b: Value | None) -> Value | None:
    if a is None or b is None:
        return a if b is None else b
    return apply_broadcast(Op.AND, [a, b])


@dataclass
class LocalBuffer:
    """A shared, fragment or local buffer of one block: an engine value of its whole shape."""

    name: str
    shape: tuple[int, ...]
    dtype: DType
    scope: str
    value: Value = field(init=False)

    def __post_init__(self):
        zeros = np.zeros((1, *self.shape), dtype=self.dtype.storage)  # the GPU leaves them uninitialized
        self.value = Value(zeros, self.dtype, Node(f"{self.scope} buffer {self.name}", None))

    def read(self, launch, region: tuple[slice, ...]) -> Value:
        """The static ``region`` (one slice per dimension; out-of-range parts are a fault and read zero)."""
        inside = self._inside(launch, region, "load")
        if inside == region:
            if all(s.start == 0 and s.stop == n for s, n in zip(region, self.shape, strict=True)):
                return self.value
            return ops.apply(launch, Op.SLICE, self.value, index=region)
        part = ops.apply(launch, Op.SLICE, self.value, index=inside) if _nonempty(inside) else None
        shape = tuple(s.stop - s.start for s in region)
        full = Value(np.zeros((1, *shape), self.dtype.storage), self.dtype, Node("zeros", None))
        if part is None:
            return full
        at = tuple(slice(i.start - r.start, i.stop - r.start) for i, r in zip(inside, region, strict=True))
        return ops.apply(launch, Op.INSERT, full, part, index=at)

    def write(self, launch, region: tuple[slice, ...], value: Value) -> None:
        """Replace the static ``region`` with ``value`` (broadcast to it; out-of-range parts are a fault)."""
        shape = tuple(s.stop - s.start for s in region)
        value = broadcast_to(cast(value, self.dtype), shape)
        inside = self._inside(launch, region, "store")
        if not _nonempty(inside):
            return
        if inside != region:
            at = tuple(
                slice(i.start - r.start, i.stop - r.start) for i, r in zip(inside, region, strict=True)
            )
            value = ops.apply(launch, Op.SLICE, value, index=at)
        if all(s.start == 0 and s.stop == n for s, n in zip(inside, self.shape, strict=True)):
            self.value = value
        else:
            self.value = ops.apply(launch, Op.INSERT, self.value, value, index=inside)

    def _inside(self, launch, region: tuple[slice, ...], what: str) -> tuple[slice, ...]:
        """``region`` clipped to the buffer; a fault naming the buffer and its first bad element when
        it had to clip."""
        inside = tuple(
            slice(max(s.start, 0), max(min(s.stop, n), max(s.start, 0)))
            for s, n in zip(region, self.shape, strict=True)
        )
        if inside != region:
            self._fault(launch, region, what)
        return inside

    def _fault(self, launch, region: tuple[slice, ...], what: str) -> None:
        """An out-of-bounds fault on this buffer, its elements given nominal row-major addresses (on-chip
        memory has none the engine knows) so that reports name the first bad element."""
        coords = np.indices(tuple(s.stop - s.start for s in region)) + np.array(
            [s.start for s in region]
        ).reshape(-1, *([1] * len(region)))
        bad = np.zeros(coords.shape[1:], dtype=bool)
        for d, n in enumerate(self.shape):
            bad |= (coords[d] < 0) | (coords[d] >= n)
        strides = [int(np.prod(self.shape[d + 1 :], dtype=np.int64)) for d in range(len(self.shape))]
        itemsize = self.dtype.storage.itemsize
        offsets = sum(c * st for c, st in zip(coords, strides, strict=True)) * itemsize
        address = (_NOMINAL_BASE + offsets).astype(np.uint64)[None]
        view = ViewInfo(self.name, _NOMINAL_BASE, self.shape, tuple(strides), itemsize, self.dtype.name)
        kind = FaultKind.OUT_OF_BOUNDS_LOAD if what == "load" else FaultKind.OUT_OF_BOUNDS_STORE
        rows = launch.pids.shape[0]
        access.fault(
            launch, kind, bad=np.broadcast_to(bad[None], (rows, *bad.shape)), address=address, view=view,
            message=f"{what} outside the {self.scope} buffer `{self.name}`",
            attrs={"buffer": self.name, "scope": self.scope},
        )  # fmt: skip


#: where on-chip buffers' elements are said to be in reports (they have no address in the launch's memory)
_NOMINAL_BASE = 1 << 44


def _nonempty(region: tuple[slice, ...]) -> bool:
    return all(s.stop > s.start for s in region)
