"""TileLang's tile operations (``tl.tileop.*`` calls of the PrimFunc) on the engine.

``T.copy``, ``T.fill``/``T.clear``, ``T.gemm``, ``T.reduce_*`` and the atomics act on buffer regions
(``tl.region(buffer[start...], access, *extents)``). A region of an on-chip buffer is a static slice
of its value; a region of a global buffer is a pointer block, read and written through the memory
pipeline with TileLang's guard: elements outside the buffer's shape read as zero and are not
written (TileLang's copy predicate and ``LegalizeSafeMemoryAccess`` pass do the same on the GPU).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...engine import atomics, dot, ops, reduce
from ...engine.ops import Op
from ...engine.values import Value
from ..values import apply_broadcast, broadcast_to, cast
from .buffers import GlobalBuffer, LocalBuffer
from .exprs import Frame, evaluate, static_int
from .tir import tirx


class Region:
    """A buffer region of a tile operation: the engine buffer, start expressions and static extents."""

    def __init__(self, frame: Frame, arg: Any):
        if isinstance(arg, tirx.Call) and arg.op.name == "tl.region":
            load, extents = arg.args[0], arg.args[2:]
        elif isinstance(arg, tirx.BufferLoad):
            load, extents = arg, [1] * len(arg.indices)
        elif isinstance(arg, tirx.BufferRegion):
            load = tirx.BufferLoad(arg.buffer, [r.min for r in arg.region])
            extents = [r.extent for r in arg.region]
        else:
            frame.launch.unsupported(f"tile-operation operand {arg}")
        self.frame = frame
        self.buffer = frame.buffer(load.buffer)
        self.starts = list(load.indices)
        self.extents = tuple(static_int(frame, e) for e in extents)

    @property
    def dtype(self):
        """The buffer's element type."""
        return self.buffer.dtype

    def indices(self) -> list[Value]:
        """Per dimension, the start plus an ``arange`` along that dimension of the region's block."""
        launch, n = self.frame.launch, len(self.extents)
        indices = []
        for d, (start, extent) in enumerate(zip(self.starts, self.extents, strict=True)):
            lane = ops.arange(launch, 0, extent)
            shape = tuple(extent if k == d else 1 for k in range(n))
            lane = ops.apply(launch, Op.RESHAPE, lane, shape=shape)
            begin = evaluate(self.frame, start)
            indices.append(apply_broadcast(Op.ADD, [cast(begin, lane.dtype), lane]))
        return indices

    def _slices(self) -> tuple[slice, ...]:
        starts = [static_int(self.frame, s) for s in self.starts]
        return tuple(slice(s, s + e) for s, e in zip(starts, self.extents, strict=True))

    def read(self) -> Value:
        """The region's elements, a block of its extents."""
        if isinstance(self.buffer, LocalBuffer):
            return self.buffer.read(self.frame.launch, self._slices())
        return self.buffer.load(self.frame.launch, self.indices(), None, guard=True)

    def write(self, value: Value) -> None:
        """Replace the region's elements with ``value`` (same number of elements, or broadcast)."""
        value = _fit(self.frame, value, self.extents)
        if isinstance(self.buffer, LocalBuffer):
            self.buffer.write(self.frame.launch, self._slices(), value)
        else:
            self.buffer.store(self.frame.launch, self.indices(), value, None, guard=True)


def _fit(frame: Frame, value: Value, extents: tuple[int, ...]) -> Value:
    """``value`` shaped to ``extents``: the same elements with unit dimensions dropped or added
    (TileLang pairs a ``(1, N)`` region with an ``(N,)`` buffer), or a broadcast scalar."""
    if value.shape == extents:
        return value
    if int(np.prod(value.shape, dtype=np.int64)) == int(np.prod(extents, dtype=np.int64)):
        return ops.apply(frame.launch, Op.RESHAPE, value, shape=extents)
    if int(np.prod(value.shape, dtype=np.int64)) == 1:
        return broadcast_to(ops.apply(frame.launch, Op.RESHAPE, value, shape=(1,) * len(extents)), extents)
    frame.launch.unsupported(
        f"a tile operation between regions of shapes {list(value.shape)} and {list(extents)}"
    )


def copy(frame: Frame, call: tirx.Call) -> None:
    """``T.copy(src, dst)``: dst's elements become src's, converted to dst's type."""
    src, dst = Region(frame, call.args[0]), Region(frame, call.args[1])
    dst.write(cast(src.read(), dst.dtype))


def fill(frame: Frame, call: tirx.Call) -> None:
    """``T.fill(buffer, value)`` and ``T.clear(buffer)``."""
    dst = Region(frame, call.args[0])
    dst.write(cast(evaluate(frame, call.args[1]), dst.dtype))


def gemm(frame: Frame, call: tirx.Call) -> None:
    """``T.gemm(A, B, C, transpose_A, transpose_B, ..., clear_accum)``: ``C += op(A) @ op(B)``.

    Products accumulate in C's type; float32 operands go through the tensor cores as tf32 (the
    MMA TileLang emits for float32 inputs on sm_80 and later).
    """
    launch = frame.launch
    a_reg, b_reg, c_reg = (Region(frame, arg) for arg in call.args[:3])
    trans_a, trans_b = (bool(static_int(frame, x)) for x in call.args[3:5])
    clear = bool(static_int(frame, call.args[9])) if len(call.args) > 9 else False
    a, b = a_reg.read(), b_reg.read()
    if trans_a:
        a = ops.apply(launch, Op.PERMUTE, a, perm=(1, 0))
    if trans_b:
        b = ops.apply(launch, Op.PERMUTE, b, perm=(1, 0))
    if clear:
        acc = broadcast_to(ops.constant(0, c_reg.dtype), c_reg.extents)
    else:
        acc = c_reg.read()
    precision = "tf32" if a.dtype.name == "fp32" else "ieee"
    c_reg.write(dot.dot(launch, a, b, acc, precision))


_COMBINES = {"sum": "sum", "abssum": "sum", "max": "max", "absmax": "max", "min": "min"}
_MERGE = {"sum": Op.ADD, "max": Op.MAX, "min": Op.MIN}


def reduce_op(frame: Frame, call: tirx.Call) -> None:
    """``T.reduce_sum/max/min/abssum/absmax(src, dst, dim, clear)``: dst (= or combined with) the
    reduction of src along ``dim``."""
    launch = frame.launch
    src, dst = Region(frame, call.args[0]), Region(frame, call.args[1])
    kind, dim, clear = (
        str(call.args[2].value),
        static_int(frame, call.args[3]),
        bool(static_int(frame, call.args[4])),
    )
    combine = _COMBINES.get(kind)
    if combine is None:
        launch.unsupported(f"T.reduce with {kind!r}")
    value = cast(src.read(), dst.dtype)
    if kind.startswith("abs"):
        value = ops.apply(launch, Op.ABS, value)
    result = reduce.reduce(launch, [value], dim, combine)[0]
    if not clear:
        result = apply_broadcast(_MERGE[combine], [_fit(frame, dst.read(), result.shape), result])
    dst.write(result)


_ATOMICS = {"atomicadd": "add", "atomicmax": "max", "atomicmin": "min"}
#: TileLang's memory_order ids (tilelang.language.atomic._MEMORY_ORDER_ID_MAP) -> engine semantics
_ORDERS = {0: "relaxed", 1: "acquire", 2: "acquire", 3: "release", 4: "acq_rel", 5: "acq_rel"}


def tile_atomic(name: str) -> Callable[[Frame, tirx.Call], None]:
    """``T.atomic_add/max/min(dst_region, value_region)``: one atomic per element of the region."""
    op = _ATOMICS[name]

    def run(frame: Frame, call: tirx.Call) -> None:
        value, dst = Region(frame, call.args[0]), Region(frame, call.args[1])
        order = int(call.annotations.get("memory_order", 0)) if call.annotations else 0
        if not isinstance(dst.buffer, GlobalBuffer):
            frame.launch.unsupported(f"an atomic on {dst.buffer.scope} buffer `{dst.buffer.name}`")
        indices = dst.indices()
        data = cast(_fit(frame, value.read(), dst.extents), dst.dtype)
        atomic(frame, dst.buffer, indices, data, op, order, guard=True)

    return run


def atomic(frame: Frame, buf: GlobalBuffer, indices: list[Value], value: Value, op: str, order: int,
           guard: bool) -> None:  # fmt: skip
    """One atomic ``op`` of ``value`` at ``buf[indices]`` per enabled element."""
    launch = frame.launch
    mask = buf.in_shape(indices) if guard else None
    if frame.mask is not None:
        mask = frame.mask if mask is None else apply_broadcast(Op.AND, [mask, frame.mask])
    pointer = buf.pointer(launch, indices)
    shape = np.broadcast_shapes(pointer.shape, value.shape, *(() if mask is None else (mask.shape,)))
    atomics.atomic(
        launch, op, broadcast_to(pointer, shape), [broadcast_to(value, shape)],
        None if mask is None else broadcast_to(mask, shape), sem=_ORDERS.get(order, "relaxed"),
    )  # fmt: skip


def element_atomic(op: str) -> Callable[[Frame, tirx.Call], None]:
    """``T.atomic_add(dst[i], value)`` on one element (per lane inside ``T.Parallel``)."""

    def run(frame: Frame, call: tirx.Call) -> None:
        target = call.args[0]
        if isinstance(target, tirx.Call) and target.op.name == "tl.access_ptr":
            target = target.args[0]
        if not isinstance(target, tirx.BufferLoad):
            frame.launch.unsupported(f"atomic target {target}")
        buf = frame.buffer(target.buffer)
        if not isinstance(buf, GlobalBuffer):
            frame.launch.unsupported(f"an atomic on {buf.scope} buffer `{buf.name}`")
        indices = [evaluate(frame, i) for i in target.indices]
        value = cast(evaluate(frame, call.args[1]), buf.dtype)
        order = static_int(frame, call.args[2]) if len(call.args) > 2 else 0
        atomic(frame, buf, indices, value, op, order, guard=bool(frame.shape))

    return run


#: ``tl.*`` operation name -> its implementation
TILE_OPS: dict[str, Callable[[Frame, tirx.Call], None]] = {
    "tl.tileop.copy": copy,
    "tl.tileop.fill": fill,
    "tl.tileop.gemm": gemm,
    "tl.tileop.reduce": reduce_op,
    **{f"tl.tileop.{name}": tile_atomic(name) for name in _ATOMICS},
    "tl.atomic_add_elem_op": element_atomic("add"),
    "tl.atomic_max_elem_op": element_atomic("max"),
    "tl.atomic_min_elem_op": element_atomic("min"),
}

#: ``tl.*`` calls that only steer TileLang's GPU code generation: nothing to run on the engine
HINTS = frozenset({"tl.use_swizzle", "tl.annotate_layout", "tl.annotate_padding", "tl.annotate_l2_hit_ratio"})
