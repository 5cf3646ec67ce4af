"""A Pallas ``Ref`` on the engine: a window of an array in the launch's memory, and its accesses.

A kernel's ref is the block a ``BlockSpec`` gives the current grid step (or the whole array, or a
scratch buffer). tilescope does not copy blocks into a separate on-chip buffer: a ref is a view of
the array itself, so ``x_ref[...]`` is one load of the block's elements of ``x`` at the user's line
(records, race checks and bounds proofs are about the user's arrays). What a block adds is
checked here:

* elements of a *partial* block past the array's end read Pallas's padding (NaN for floats, as
  ``interpret=True`` pads) and are not written: defined behaviour, masked, no finding;
* a block *entirely* outside the array (an index map that overshoots) is not masked: the access
  pipeline reports those lanes out of bounds;
* an index into the ref past the *block's* own shape (``x_ref[pl.ds(i, 16)]`` with ``i + 16`` over
  the block size) is a ``tile rule`` fault ("block bounds") at the user's line, and those lanes
  do not move, since on the hardware they would touch another block's buffer.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ...engine import atomics, dtypes, ops
from ...engine.access import Request, fault, perform
from ...engine.dtypes import DType
from ...engine.ops import Op
from ...engine.values import Value
from ...ir import FaultKind, OpKind
from ..running import current
from ..values import apply_broadcast, broadcast_to, cast


@dataclasses.dataclass(frozen=True)
class Ref:
    """A view of an array argument: the block of one grid step, narrowed by ``.at[...]`` indexers.

    Per array dimension: ``origin`` the block's first element (an int32 value per program, or an int),
    ``extent`` the block's size (the dimension's size for a whole-array ref), and the view's
    ``start`` (relative to the block), ``size`` (None: a dimension indexed by a scalar, dropped from
    the view's shape) and ``step``.
    """

    name: str
    base: Value
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    origin: tuple[Any, ...]
    extent: tuple[int, ...]
    start: tuple[Any, ...]
    size: tuple[int | None, ...]
    step: tuple[int, ...]
    block_checked: bool  # a block of a larger array: indices past the block are a finding

    @property
    def element(self) -> DType:
        """The engine dtype of the elements."""
        return self.base.dtype.pointee

    @property
    def view_shape(self) -> tuple[int, ...]:
        """The shape the kernel sees."""
        return tuple(s for s in self.size if s is not None)

    def index(self, indexer: Any) -> Ref:
        """This view narrowed by one ``NDIndexer`` (``ref.at[...]`` or the index of an access)."""
        visible = [d for d, s in enumerate(self.size) if s is not None]
        start, size, step = list(self.start), list(self.size), list(self.step)
        for d, index in zip(visible, indexer.indices, strict=True):
            if hasattr(index, "stride"):  # a Slice
                start[d] = _add(start[d], scale(index.start, step[d]))
                size[d] = int(index.size)
                step[d] = step[d] * int(index.stride)
            else:
                if getattr(index, "shape", ()) not in ((), None):
                    raise NotImplementedError(
                        f"indexing `{self.name}` with an integer array: tilescope's Pallas frontend "
                        "supports slices (pl.ds) and scalar indices"
                    )
                start[d] = _add(start[d], scale(index, step[d]))
                size[d] = None
        return dataclasses.replace(self, start=tuple(start), size=tuple(size), step=tuple(step))


def whole(name: str, base: Value, shape: tuple[int, ...], strides: tuple[int, ...]) -> Ref:
    """A ref of a whole array (no block spec, a scalar-prefetch operand, a scratch buffer)."""
    n = len(shape)
    return Ref(name, base, tuple(shape), tuple(strides), (0,) * n, tuple(shape), (0,) * n, tuple(shape),
               (1,) * n, block_checked=False)  # fmt: skip


def block(name: str, base: Value, shape: tuple[int, ...], strides: tuple[int, ...], origin: tuple[Any, ...],
          extent: tuple[int, ...], squeezed: tuple[bool, ...]) -> Ref:  # fmt: skip
    """The block of one grid step: ``extent`` elements from ``origin`` along each dimension; squeezed
    dimensions (``None`` in the block shape) are dropped from the kernel's view."""
    n = len(shape)
    size = tuple(None if sq else e for e, sq in zip(extent, squeezed, strict=True))
    checked = any(e != s for e, s in zip(extent, shape, strict=True))
    return Ref(name, base, tuple(shape), tuple(strides), tuple(origin), tuple(extent), (0,) * n, size,
               (1,) * n, block_checked=checked)  # fmt: skip


def _int32(x: Any) -> Value:
    return cast(x, dtypes.INT32) if isinstance(x, Value) else ops.constant(int(x), dtypes.INT32)


def _static(x: Any) -> int | None:
    """``x`` as an int when it is one, or a constant value (a literal, a sequential grid step);
    else None (a value that differs between programs or iterations)."""
    if isinstance(x, Value):
        data = x._data
        if x.node is not None and x.node.op == "const" and data is not None and data.shape == (1,):
            return int(data[0])
        return None
    return int(x)


def _add(a: Any, b: Any) -> Any:
    sa, sb = _static(a), _static(b)
    if sa is not None and sb is not None:
        return sa + sb
    if sa == 0:
        return b
    if sb == 0:
        return a
    return apply_broadcast(Op.ADD, [_int32(a), _int32(b)])


def scale(a: Any, k: int) -> Any:
    """``a * k`` (an int when ``a`` is static): a block index times the block size, an index times
    a stride."""
    sa = _static(a)
    if sa is not None:
        return sa * k
    return a if k == 1 else apply_broadcast(Op.MUL, [_int32(a), ops.constant(k, dtypes.INT32)])


def _and(a: Value | None, b: Value) -> Value:
    return b if a is None else apply_broadcast(Op.AND, [a, b])


def _or(a: Value | None, b: Value) -> Value:
    return b if a is None else apply_broadcast(Op.OR, [a, b])


def _coordinate(ref: Ref, d: int) -> Any:
    """The block-relative coordinate along array dimension ``d`` of each lane of the view (an int,
    or a value shaped to broadcast over the view's shape)."""
    start, size, step = ref.start[d], ref.size[d], ref.step[d]
    if size is None:
        return start
    along = [1] * len(ref.view_shape)
    along[sum(s is not None for s in ref.size[:d])] = size
    lanes = Value(
        _lanes(size, step).reshape(1, *along), dtypes.INT32, ops.node(current().launch, "arange", ())
    )
    return lanes if _static(start) == 0 else apply_broadcast(Op.ADD, [_int32(start), lanes])


@functools.lru_cache(maxsize=256)
def _lanes(size: int, step: int) -> np.ndarray:
    """``0, step, 2 * step, ...`` (``size`` of them) as int32, read-only (shared by every access)."""
    lanes = np.arange(0, size * step, step, dtype=np.int32)[:size]
    lanes.flags.writeable = False
    return lanes


@functools.lru_cache(maxsize=256)
def _lane_offsets(
    size: tuple[int | None, ...], step: tuple[int, ...], strides: tuple[int, ...]
) -> np.ndarray:
    """The element offset of each lane of a view from the view's first element (program axis of
    length 1), int32 as the kernel's index arithmetic, read-only: shared by every access of that view."""
    shape = tuple(n for n in size if n is not None)
    offsets = np.zeros((1, *shape), dtype=np.int32)
    axis = 0
    for n, k, stride in zip(size, step, strides, strict=True):
        if n is None:
            continue
        along = [1] * (len(shape) + 1)
        along[axis + 1] = n
        offsets = offsets + (np.arange(n, dtype=np.int32) * np.int32(k * stride)).reshape(along)
        axis += 1
    offsets.flags.writeable = False
    return offsets


def _offsets(ref: Ref) -> Value:
    """The element offset of every lane of the view from the array's base: the view's first element
    (per program, from the block's origin and the view's start) plus the lanes' shared offsets,
    in int32 as the kernel's index arithmetic."""
    first: Any = 0
    for origin, start, stride in zip(ref.origin, ref.start, ref.strides, strict=True):
        first = _add(first, scale(_add(origin, start), stride))
    lanes = _lane_offsets(ref.size, ref.step, ref.strides)
    node = ops.node(current().launch, "arange", ())
    if _static(first) is not None:
        return Value(lanes + np.int32(first) if first else lanes, dtypes.INT32, node)
    return apply_broadcast(Op.ADD, [_int32(first), Value(lanes, dtypes.INT32, node)])


def _outside_block(ref: Ref, coordinate: Callable[[int], Any]) -> Value | None:
    """The lanes whose index falls outside the ref's block (None: none can); ``coordinate(d)`` gives
    the lanes' coordinates along dimension ``d``."""
    outside = None
    for d, (extent, start, size, step) in enumerate(
        zip(ref.extent, ref.start, ref.size, ref.step, strict=True)
    ):
        first = _static(start)
        if first is not None:
            last = first + (size - 1) * step if size else first
            if 0 <= min(first, last) and max(first, last) < extent:
                continue
        ci = _int32(coordinate(d))
        below = apply_broadcast(Op.LT, [ci, ops.constant(0, dtypes.INT32)])
        above = apply_broadcast(Op.GE, [ci, ops.constant(extent, dtypes.INT32)])
        outside = _or(outside, _or(below, above))
    return outside


def _report_block_bounds(ref: Ref, outside: Value, shape: tuple[int, ...], verb: str) -> Value | None:
    """A ``block bounds`` fault for the lanes in ``outside`` (if any); the mask of the others."""
    launch = current().launch
    bad = np.broadcast_to(np.asarray(broadcast_to(outside, shape).data, dtype=bool),
                          (launch.pids.shape[0], *shape))  # fmt: skip
    if launch.active is not None:
        bad = bad & launch.active.reshape(-1, *([1] * len(shape)))
    if not bad.any():
        return None
    extent = "x".join(str(e) for e in ref.extent)
    fault(
        launch,
        FaultKind.TILE_RULE,
        bad=bad,
        message=f"{verb} `{ref.name}` outside its block of {extent} elements "
        f"({int(bad.sum())} lane(s)); on the hardware they would touch another block's buffer",
        attrs={"rule": "block bounds", "fix": "keep pl.ds(start, size) within the BlockSpec's block shape"},
    )
    return apply_broadcast(Op.XOR, [outside, ops.constant(True, dtypes.BOOL)])


def _address(ref: Ref, verb: str) -> tuple[Value, Value | None]:
    """The pointer block of the view's elements and the mask of the lanes that move."""
    shape = ref.view_shape
    pointer = apply_broadcast(Op.PTR_ADD, [ref.base, _offsets(ref)])
    if not ref.block_checked:
        return pointer, None
    coords: dict[int, Any] = {}

    def coordinate(d: int) -> Any:
        if d not in coords:
            coords[d] = _coordinate(ref, d)
        return coords[d]

    inside, beyond = None, None
    for d, origin in enumerate(ref.origin):
        if ref.extent[d] == ref.shape[d]:
            continue
        # a partial block: lanes past the array's end are padding (masked); a block wholly outside
        # the array stays unmasked so that the access pipeline reports it
        first = _int32(origin)
        starts = np.asarray(first.data)
        if (starts + ref.extent[d] > ref.shape[d]).any():
            size = ops.constant(ref.shape[d], dtypes.INT32)
            inside = _and(inside, apply_broadcast(Op.LT, [_int32(_add(origin, coordinate(d))), size]))
            beyond = _or(beyond, apply_broadcast(Op.GE, [first, size]))
    mask = None
    if inside is not None:
        if beyond is not None and bool(np.asarray(beyond.data).any()):
            inside = _or(inside, beyond)
        mask = broadcast_to(inside, shape)
    outside = _outside_block(ref, coordinate)
    if outside is not None:
        keep = _report_block_bounds(ref, outside, shape, verb)
        if keep is not None:
            mask = broadcast_to(keep if mask is None else _and(mask, keep), shape)
    return pointer, mask


def padding(element: DType) -> Value:
    """What a lane past the array reads: Pallas interpret mode's "uninitialized" value."""
    if element.is_float:
        return ops.constant(float("nan"), element)
    if element.is_bool:
        return ops.constant(False, element)
    return ops.constant(int(np.iinfo(element.storage).min), element)


def load(ref: Ref, mask: Value | None = None, other: Value | None = None) -> Value:
    """The view's elements (``ref[...]``, ``plgpu.load``): masked-off lanes read ``other``."""
    pointer, inside = _address(ref, "reads")
    shape = ref.view_shape
    fill = padding(ref.element) if other is None else broadcast_to(cast(other, ref.element), shape)
    if mask is not None:
        inside = broadcast_to(mask if inside is None else _and(inside, mask), shape)
    return perform(
        current().launch, Request(OpKind.LOAD, "read", pointer, ref.element, mask=inside, fill=fill)
    )


def store(ref: Ref, value: Value, mask: Value | None = None) -> None:
    """Write ``value`` into the view (``ref[...] = v``, ``plgpu.store``), where ``mask`` holds."""
    pointer, inside = _address(ref, "writes")
    shape = ref.view_shape
    if mask is not None:
        inside = broadcast_to(mask if inside is None else _and(inside, mask), shape)
    stored = broadcast_to(cast(value, ref.element), shape)
    perform(current().launch, Request(OpKind.STORE, "write", pointer, ref.element, mask=inside, stored=stored,
                                      returns=False))  # fmt: skip


def atomic(ref: Ref, op: str, operands: list[Value], mask: Value | None = None) -> Value:
    """``plgpu.atomic_<op>`` on the view (``operands``: the value; for ``cas`` the expected value and
    the new one): one read-modify-write per lane; the old values."""
    pointer, inside = _address(ref, "updates")
    shape = ref.view_shape
    if mask is not None:
        inside = broadcast_to(mask if inside is None else _and(inside, mask), shape)
    operands = [broadcast_to(cast(v, ref.element), shape) for v in operands]
    return atomics.atomic(current().launch, op, pointer, operands, inside)
