"""``cuda.tile`` on the engine: the tile functions a cuTile kernel calls, run for every block of a batch.

A kernel's references to the ``cuda.tile`` module (and to names imported from it) are pointed at
this module when the kernel runs (:mod:`kernel`). Types, dtypes, padding modes and promotion come
from ``cuda.tile`` itself (``cuda-tile`` on the registry; its CPU-side Python package needs no
GPU); what runs is the engine:

* ``ct.load`` / ``ct.store`` address an array's *tile space*: tile ``index`` of ``shape`` covers
  elements ``index[k] * shape[k] + i`` along array axis ``order[k]``. Elements of a partial tile
  outside the array read the ``padding_mode`` value and are not written (defined behaviour, no
  finding). A tile *entirely* outside the array, and any element outside it when
  ``check_bounds=False``, is undefined behaviour in cuTile: those lanes go unmasked through the
  access pipeline and are out-of-bounds findings at the user's line.
* ``ct.gather`` / ``ct.scatter`` take per-element indices; with ``check_bounds=True`` (the
  default) elements outside the array are padding or dropped, without it they are findings.
* Arithmetic promotes with cuTile's own table (``cuda.tile._datatype.promote_dtypes``); a
  Python number takes the tile's dtype (a float with an integer tile promotes to float32).
"""

from __future__ import annotations

import builtins
from typing import Any

import cuda.tile as _ct
import numpy as np
from cuda.tile import _datatype

from ...engine import dot as engine_dot
from ...engine import dtypes, ops, reduce
from ...engine.access import Request, perform
from ...engine.dtypes import DType
from ...engine.ops import Op
from ...engine.values import Value
from ...ir import Node, OpKind
from ..running import (
    current,
    loop_range,  # noqa: F401 - a kernel's range()
)
from ..values import ShapedValue, apply_broadcast, cast
from ..values import broadcast_to as broadcast_value

# dtypes, padding and the rest of cuda.tile's data model are cuTile's own objects
bool_, int8, int16, int32, int64 = _ct.bool_, _ct.int8, _ct.int16, _ct.int32, _ct.int64
uint8, uint16, uint32, uint64 = _ct.uint8, _ct.uint16, _ct.uint32, _ct.uint64
float16, bfloat16, float32, float64 = _ct.float16, _ct.bfloat16, _ct.float32, _ct.float64
tfloat32 = _ct.tfloat32
PaddingMode, Constant, ConstantAnnotation = _ct.PaddingMode, _ct.Constant, _ct.ConstantAnnotation
Array, Scalar, RoundingMode, cdiv = _ct.Array, _ct.Scalar, _ct.RoundingMode, _ct.cdiv

#: engine dtype of each cuTile dtype, by name (tfloat32 values are fp32 rounded for the tensor cores)
_ENGINE = {
    "bool_": dtypes.BOOL, "int8": dtypes.INT8, "int16": dtypes.INT16, "int32": dtypes.INT32,
    "int64": dtypes.INT64,
    "uint8": dtypes.UINT8, "uint16": dtypes.UINT16, "uint32": dtypes.UINT32, "uint64": dtypes.UINT64,
    "float16": dtypes.FP16, "bfloat16": dtypes.BF16, "float32": dtypes.FP32, "float64": dtypes.FP64,
    "tfloat32": dtypes.FP32,
}  # fmt: skip
_CUTILE = {v.name: getattr(_ct, k) for k, v in _ENGINE.items() if k != "tfloat32"}

_PADDING = {
    "undetermined": 0.0,  # any value is allowed; zero here
    "zero": 0.0,
    "neg_zero": -0.0,
    "nan": float("nan"),
    "pos_inf": float("inf"),
    "neg_inf": float("-inf"),
}


def engine_dtype(dtype: Any) -> DType:
    """The engine dtype of a cuTile dtype."""
    found = _ENGINE.get(getattr(dtype, "name", None))
    if found is None:
        raise TypeError(f"dtype {dtype} is not supported by tilescope's cuTile frontend")
    return found


def cutile_dtype(dtype: DType) -> Any:
    """The cuTile dtype of an engine dtype."""
    return _CUTILE[dtype.name]


class Tile(ShapedValue):
    """A cuTile tile (or scalar: shape ``()``): an engine value of the running batch and its cuTile dtype."""

    __slots__ = ("value", "ct_dtype")

    def __init__(self, value: Value, ct_dtype: Any = None):
        self.value = value
        self.ct_dtype = ct_dtype if ct_dtype is not None else _CUTILE[value.dtype.name]

    @property
    def dtype(self) -> Any:
        """The cuTile dtype."""
        return self.ct_dtype

    def astype(self, dtype: Any) -> Tile:
        """This tile converted to ``dtype``."""
        return astype(self, dtype)

    def reshape(self, shape: Any) -> Tile:
        """This tile reshaped."""
        return reshape(self, shape)

    def permute(self, axes: Any) -> Tile:
        """This tile's axes permuted."""
        return permute(self, axes)

    def transpose(self, axis0: int | None = None, axis1: int | None = None) -> Tile:
        """This tile with two axes swapped."""
        return transpose(self, axis0, axis1)

    @property
    def T(self) -> Tile:  # noqa: N802 - NumPy's spelling
        """The 2-D transpose."""
        return transpose(self)

    def __bool__(self) -> bool:
        launch = current().launch
        return bool(launch.decide(self.value.data, launch.site()))

    def __index__(self) -> int:
        launch = current().launch
        return int(launch.decide(self.value.data, launch.site()))

    __int__ = __index__
    __hash__ = object.__hash__

    def __neg__(self) -> Tile:
        return negative(self)

    def __abs__(self) -> Tile:
        return abs(self)

    def __invert__(self) -> Tile:
        return bitwise_not(self)

    def __repr__(self) -> str:
        return f"Tile({self.ct_dtype}, shape={self.shape})"


def _common(a: Any, b: Any) -> Any:
    """The cuTile dtype an op on ``a`` and ``b`` computes in."""
    ta, tb = (x.ct_dtype if isinstance(x, Tile) else None for x in (a, b))
    if ta is not None and tb is not None:
        return _datatype.promote_dtypes(ta, tb)
    known = ta if ta is not None else tb
    other = b if ta is not None else a
    if isinstance(other, float) and not _datatype.is_float(known):
        return _ct.float32
    return known


def _value(x: Any, ct_dtype: Any) -> Value:
    ty = engine_dtype(ct_dtype)
    if isinstance(x, Tile):
        return cast(x.value, ty)
    return ops.constant(x, ty)


def _as_tile(x: Any) -> Tile:
    if isinstance(x, Tile):
        return x
    if isinstance(x, bool):
        return Tile(ops.constant(x, dtypes.BOOL), _ct.bool_)
    if isinstance(x, int):
        return Tile(ops.constant(x, dtypes.INT32), _ct.int32)
    return Tile(ops.constant(x, dtypes.FP32), _ct.float32)


def _binary(op: Op, compare: bool = False):
    def fn(x: Any, y: Any, /, **kwargs: Any) -> Tile:
        if not isinstance(x, Tile) and not isinstance(y, Tile):
            x = _as_tile(x)
        ty = _common(x, y)
        result = apply_broadcast(op, [_value(x, ty), _value(y, ty)])
        return Tile(result, _ct.bool_ if compare else ty)

    return fn


add, sub, mul, truediv = _binary(Op.ADD), _binary(Op.SUB), _binary(Op.MUL), _binary(Op.DIV)
mod, pow, minimum, maximum = _binary(Op.REM), _binary(Op.POW), _binary(Op.MIN), _binary(Op.MAX)  # noqa: A001
bitwise_and, bitwise_or, bitwise_xor = _binary(Op.AND), _binary(Op.OR), _binary(Op.XOR)
bitwise_lshift, bitwise_rshift = _binary(Op.SHL), _binary(Op.SHR)
greater, greater_equal = _binary(Op.GT, compare=True), _binary(Op.GE, compare=True)
less, less_equal = _binary(Op.LT, compare=True), _binary(Op.LE, compare=True)
equal, not_equal = _binary(Op.EQ, compare=True), _binary(Op.NE, compare=True)


def floordiv(x: Any, y: Any, /) -> Tile:
    """Elementwise floor(x / y)."""
    q = truediv(x, y)
    return floor(q) if _datatype.is_float(q.ct_dtype) else q


def _swap(fn):
    return lambda self, other: fn(other, self)


for _name, _fn in [("add", add), ("sub", sub), ("mul", mul), ("truediv", truediv), ("mod", mod), ("pow", pow),
                   ("floordiv", floordiv), ("and", bitwise_and), ("or", bitwise_or), ("xor", bitwise_xor),
                   ("lshift", bitwise_lshift), ("rshift", bitwise_rshift)]:  # fmt: skip
    setattr(Tile, f"__{_name}__", _fn)
    setattr(Tile, f"__r{_name}__", _swap(_fn))
for _name, _fn in [("gt", greater), ("ge", greater_equal), ("lt", less), ("le", less_equal), ("eq", equal),
                   ("ne", not_equal)]:  # fmt: skip
    setattr(Tile, f"__{_name}__", _fn)


def _unary(op: Op, float_only: bool = True):
    def fn(x: Any, /, **kwargs: Any) -> Tile:
        x = _as_tile(x)
        ty = x.ct_dtype
        if float_only and not _datatype.is_float(ty):
            ty = _ct.float32
        return Tile(ops.apply(current().launch, op, _value(x, ty)), ty)

    return fn


exp, exp2, log, log2 = _unary(Op.EXP), _unary(Op.EXP2), _unary(Op.LOG), _unary(Op.LOG2)
sqrt, rsqrt, sin, cos, tan = _unary(Op.SQRT), _unary(Op.RSQRT), _unary(Op.SIN), _unary(Op.COS), _unary(Op.TAN)
sinh, cosh, tanh = _unary(Op.SINH), _unary(Op.COSH), _unary(Op.TANH)
floor, ceil = _unary(Op.FLOOR), _unary(Op.CEIL)
abs, negative = _unary(Op.ABS, float_only=False), _unary(Op.NEG, float_only=False)  # noqa: A001


def bitwise_not(x: Any, /) -> Tile:
    """Elementwise ~x."""
    x = _as_tile(x)
    return Tile(apply_broadcast(Op.XOR, [x.value, ops.all_ones(x.value.dtype)]), x.ct_dtype)


def isnan(x: Any, /) -> Tile:
    """Elementwise NaN test."""
    return Tile(ops.apply(current().launch, Op.ISNAN, _as_tile(x).value), _ct.bool_)


def where(cond: Any, x: Any, y: Any, /) -> Tile:
    """``x`` where ``cond`` holds, else ``y``."""
    ty = _common(x, y)
    c = cast(_as_tile(cond).value, dtypes.BOOL)
    return Tile(apply_broadcast(Op.SELECT, [c, _value(x, ty), _value(y, ty)]), ty)


# ------------------------------------------------------------------ blocks and shapes


def bid(axis: int) -> Tile:
    """This block's index along grid ``axis``."""
    return Tile(ops.program_id(current().launch, axis), _ct.int32)


def num_blocks(axis: int) -> Tile:
    """The grid's size along ``axis``."""
    return Tile(ops.num_programs(current().launch, axis), _ct.int32)


def _shape(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def _order(order: Any, ndim: int) -> tuple[int, ...]:
    if order == "C":
        return tuple(range(ndim))
    if order == "F":
        return tuple(reversed(range(ndim)))
    return tuple(int(o) for o in order)


def num_tiles(array: ArrayRef, /, axis: int, shape: Any, order: Any = "C") -> int:
    """The number of tiles of ``shape`` along tile-space ``axis`` of ``array``."""
    shape, order = _shape(shape), _order(order, array.ndim)
    return -(-array.shape[order[axis]] // shape[axis])


def full(shape: Any, fill_value: Any, dtype: Any) -> Tile:
    """A tile of ``shape`` filled with ``fill_value``."""
    return Tile(broadcast_value(ops.constant(fill_value, engine_dtype(dtype)), _shape(shape)), dtype)


def zeros(shape: Any, dtype: Any) -> Tile:
    """A tile of zeros."""
    return full(shape, 0, dtype)


def ones(shape: Any, dtype: Any) -> Tile:
    """A tile of ones."""
    return full(shape, 1, dtype)


def arange(size: int, /, *, dtype: Any, start: int = 0, step: int = 1) -> Tile:
    """``start, start + step, ...`` (``size`` elements)."""
    launch = current().launch
    v = ops.arange(launch, 0, int(size))
    if step != 1:
        v = ops.apply(launch, Op.MUL, v, ops.constant(step, dtypes.INT32))
    if start:
        v = ops.apply(launch, Op.ADD, v, ops.constant(start, dtypes.INT32))
    return Tile(cast(v, engine_dtype(dtype)), dtype)


def astype(x: Any, dtype: Any, /, **kwargs: Any) -> Tile:
    """``x`` converted to ``dtype`` (tfloat32: fp32 values that a matmul rounds to 10 mantissa bits)."""
    x = _as_tile(x)
    return Tile(cast(x.value, engine_dtype(dtype)), dtype)


def broadcast_to(x: Any, shape: Any, /) -> Tile:
    """``x`` broadcast to ``shape``."""
    x = _as_tile(x)
    return Tile(broadcast_value(x.value, _shape(shape)), x.ct_dtype)


def reshape(x: Tile, /, shape: Any) -> Tile:
    """``x`` reshaped (one dimension may be -1)."""
    shape = _shape(shape)
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        shape = tuple(int(np.prod(x.shape)) // known if s == -1 else s for s in shape)
    return Tile(ops.apply(current().launch, Op.RESHAPE, x.value, shape=shape), x.ct_dtype)


def permute(x: Tile, /, axes: Any) -> Tile:
    """``x`` with its axes in the order ``axes``."""
    return Tile(ops.apply(current().launch, Op.PERMUTE, x.value, perm=tuple(axes)), x.ct_dtype)


def transpose(x: Tile, /, axis0: int | None = None, axis1: int | None = None) -> Tile:
    """``x`` with two axes swapped (a 2-D tile's two, by default)."""
    if axis0 is None:
        if x.ndim != 2:
            raise ValueError(f"transpose of a {x.ndim}-D tile needs axis0 and axis1")
        axis0, axis1 = 0, 1
    axes = list(range(x.ndim))
    axes[axis0], axes[axis1] = axes[axis1], axes[axis0]
    return permute(x, axes)


def expand_dims(x: Tile, /, axis: int) -> Tile:
    """``x`` with a new axis of size 1."""
    axis = axis + x.ndim + 1 if axis < 0 else axis
    return Tile(ops.apply(current().launch, Op.EXPAND_DIMS, x.value, axis=axis), x.ct_dtype)


# ------------------------------------------------------------------ reductions and matmul


def _reduce(combine: str, x: Tile, axis: Any, keepdims: bool) -> Tile:
    launch = current().launch
    if axis is None:
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(sorted(a + x.ndim if a < 0 else a for a in ((axis,) if isinstance(axis, int) else axis)))
    v = x.value
    for a in reversed(axes):
        v = reduce.reduce(launch, [v], a, combine, keep_dims=keepdims)[0]
    return Tile(v, x.ct_dtype)


def sum(x: Tile, /, axis: Any = None, *, keepdims: bool = False, **kwargs: Any) -> Tile:  # noqa: A001
    """The sum along ``axis`` (every axis when None)."""
    return _reduce("sum", x, axis, keepdims)


def max(x: Tile, /, axis: Any = None, *, keepdims: bool = False, **kwargs: Any) -> Tile:  # noqa: A001
    """The maximum along ``axis``."""
    return _reduce("max", x, axis, keepdims)


def min(x: Tile, /, axis: Any = None, *, keepdims: bool = False, **kwargs: Any) -> Tile:  # noqa: A001
    """The minimum along ``axis``."""
    return _reduce("min", x, axis, keepdims)


def prod(x: Tile, /, axis: Any = None, *, keepdims: bool = False, **kwargs: Any) -> Tile:
    """The product along ``axis``."""
    return _reduce("prod", x, axis, keepdims)


def _precision(*tiles: Tile) -> str:
    return "tf32" if builtins.any(t.ct_dtype == _ct.tfloat32 for t in tiles) else "ieee"


def mma(x: Tile, y: Tile, /, acc: Tile, **kwargs: Any) -> Tile:
    """``x @ y + acc`` in the accumulator's dtype (operands are not promoted; tfloat32 rounds them)."""
    if x.shape[-1] != y.shape[-2]:
        raise ValueError(f"ct.mma: shapes {x.shape} and {y.shape} do not multiply")
    out = engine_dot.dot(current().launch, x.value, y.value, acc.value, _precision(x, y))
    return Tile(out, acc.ct_dtype)


def matmul(x: Tile, y: Tile, /) -> Tile:
    """``x @ y`` in the promoted dtype (accumulated in fp32 for floats)."""
    ty = _datatype.promote_dtypes(x.ct_dtype, y.ct_dtype)
    shape = (*x.shape[:-1], y.shape[-1])
    acc_ty = dtypes.FP32 if engine_dtype(ty).is_float and engine_dtype(ty).bits < 64 else engine_dtype(ty)
    if acc_ty.is_int:
        acc_ty = dtypes.INT32
    acc = broadcast_value(ops.constant(0, acc_ty), shape)
    out = engine_dot.dot(current().launch, x.value, y.value, acc, _precision(x, y))
    return Tile(cast(out, engine_dtype(ty)), ty)


# ------------------------------------------------------------------ memory


class ArrayRef:
    """An array argument of a kernel: its base pointer in the address table, shape and strides."""

    def __init__(self, name: str, base: Value, shape: tuple[int, ...], strides: tuple[int, ...]):
        self.name = name
        self.base = base
        self.shape = tuple(shape)
        self.strides = tuple(strides)  # in elements

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def dtype(self) -> Any:
        """The cuTile dtype of the elements."""
        return _CUTILE[self.base.dtype.pointee.name]

    def __repr__(self) -> str:
        return f"Array({self.name}, {self.dtype}, shape={self.shape})"


def array_ref(name: str, view: Any, elem: DType) -> ArrayRef:
    """The kernel's view of a registered tensor."""
    info = view.info
    address = np.array([info.address], np.uint64)
    base = Value(address, dtypes.pointer(elem), Node(f"argument {name}", None), view.vid)
    return ArrayRef(name, base, info.shape, info.strides)


def _int(x: Any) -> Value:
    return cast(x.value, dtypes.INT32) if isinstance(x, Tile) else ops.constant(int(x), dtypes.INT32)


def _or(launch: Any, a: Value | None, b: Value) -> Value:
    return b if a is None else apply_broadcast(Op.OR, [a, b])


def _and(launch: Any, a: Value | None, b: Value) -> Value:
    return b if a is None else apply_broadcast(Op.AND, [a, b])


def _tile_space(array: ArrayRef, index: Any, shape: tuple[int, ...], order: Any, check_bounds: bool):
    """The pointer block of tile ``index``, the mask of its elements inside ``array`` (None: every element
    enabled), for a tile of ``shape``.

    Lanes of a tile entirely outside the array, and every lane when bounds are not checked, stay
    enabled: the access pipeline then reports those outside as out-of-bounds (cuTile's undefined
    behaviour).
    """
    launch = current().launch
    index = (index,) if not isinstance(index, tuple) else index
    order = _order(order, array.ndim)
    if len(index) != array.ndim or len(shape) != array.ndim:
        raise ValueError(
            f"`{array.name}` has {array.ndim} dimensions; the tile's index {index} and shape {shape} "
            "need one entry per dimension"
        )
    offset, inside, outside = None, None, None
    for k, (i, n) in enumerate(zip(index, shape, strict=True)):
        axis = order[k]
        start = apply_broadcast(Op.MUL, [_int(i), ops.constant(n, dtypes.INT32)])
        lanes = ops.arange(launch, 0, n)
        along = [1] * len(shape)
        along[k] = n
        lanes = ops.apply(launch, Op.RESHAPE, lanes, shape=tuple(along))
        coord = apply_broadcast(Op.ADD, [start, lanes])
        term = apply_broadcast(Op.MUL, [coord, ops.constant(array.strides[axis], dtypes.INT32)])
        offset = term if offset is None else apply_broadcast(Op.ADD, [offset, term])
        if check_bounds:
            # a bound that holds for every program's tile needs no mask term (and keeps the mask
            # simple enough for the access to be proven for every program at once)
            size = ops.constant(array.shape[axis], dtypes.INT32)
            starts = np.asarray(start.data)
            if (starts < 0).any():
                inside = _and(launch, inside, apply_broadcast(Op.GE, [coord, ops.constant(0, dtypes.INT32)]))
            if (starts + n > array.shape[axis]).any():
                inside = _and(launch, inside, apply_broadcast(Op.LT, [coord, size]))
            past = apply_broadcast(Op.GE, [start, size])
            before = apply_broadcast(Op.LE, [apply_broadcast(Op.ADD, [start, ops.constant(n, dtypes.INT32)]),
                                             ops.constant(0, dtypes.INT32)])  # fmt: skip
            outside = _or(launch, outside, _or(launch, past, before))
    pointer = apply_broadcast(Op.PTR_ADD, [array.base, offset])
    if not check_bounds:
        return pointer, None
    if inside is None:
        return pointer, None
    if outside is not None and bool(np.asarray(outside.data).any()):
        inside = _or(launch, inside, outside)  # a tile entirely outside: its lanes are not masked off
    return pointer, broadcast_value(inside, shape)


def load(array: ArrayRef, /, index: Any, shape: Any, *, order: Any = "C", padding_mode: Any = None,
         check_bounds: bool = True, **hints: Any) -> Tile:  # fmt: skip
    """Tile ``index`` of ``shape`` of ``array``; elements past the array take the padding value."""
    shape = _shape(shape)
    pointer, mask = _tile_space(array, index, shape, order, check_bounds)
    elem = array.base.dtype.pointee
    mode = padding_mode if padding_mode is not None else PaddingMode.UNDETERMINED
    pad = _PADDING[mode.value]
    fill = ops.constant(pad if elem.is_float else 0, elem)
    value = perform(current().launch, Request(OpKind.LOAD, "read", pointer, elem, mask=mask, fill=fill))
    return Tile(value, array.dtype)


def store(array: ArrayRef, /, index: Any, tile: Any, *, order: Any = "C", check_bounds: bool = True,
          **hints: Any) -> None:  # fmt: skip
    """Write ``tile`` (in the array's dtype) at tile ``index``; elements past the array are dropped."""
    tile = _as_tile(tile)
    shape = tile.shape if tile.shape else (1,) * array.ndim
    pointer, mask = _tile_space(array, index, shape, order, check_bounds)
    elem = array.base.dtype.pointee
    stored = broadcast_value(cast(tile.value, elem), shape)
    perform(current().launch, Request(OpKind.STORE, "write", pointer, elem, mask=mask, stored=stored,
                                      returns=False))  # fmt: skip


def _gathered(array: ArrayRef, indices: Any, mask: Any, check_bounds: bool):
    indices = indices if isinstance(indices, tuple) else (indices,)
    if len(indices) != array.ndim:
        raise ValueError(f"`{array.name}` has {array.ndim} dimensions; got {len(indices)} index tiles")
    launch = current().launch
    coords = [_int(i) for i in indices]
    shape = tuple(np.broadcast_shapes(*(c.shape for c in coords)))
    offset, enabled = None, None if mask is None else cast(_as_tile(mask).value, dtypes.BOOL)
    for axis, c in enumerate(coords):
        term = apply_broadcast(Op.MUL, [c, ops.constant(array.strides[axis], dtypes.INT32)])
        offset = term if offset is None else apply_broadcast(Op.ADD, [offset, term])
        if check_bounds:
            ok = _and(launch, apply_broadcast(Op.GE, [c, ops.constant(0, dtypes.INT32)]),
                      apply_broadcast(Op.LT, [c, ops.constant(array.shape[axis], dtypes.INT32)]))  # fmt: skip
            enabled = _and(launch, enabled, ok)
    pointer = apply_broadcast(Op.PTR_ADD, [array.base, broadcast_value(offset, shape)])
    return pointer, None if enabled is None else broadcast_value(enabled, shape), shape


def gather(array: ArrayRef, indices: Any, /, *, mask: Any = None, padding_value: Any = 0,
           check_bounds: bool = True, **hints: Any) -> Tile:  # fmt: skip
    """The elements of ``array`` at ``indices`` (a tuple of integer tiles, one per dimension)."""
    pointer, enabled, _ = _gathered(array, indices, mask, check_bounds)
    elem = array.base.dtype.pointee
    fill = ops.constant(padding_value, elem)
    value = perform(current().launch, Request(OpKind.LOAD, "read", pointer, elem, mask=enabled, fill=fill))
    return Tile(value, array.dtype)


def scatter(array: ArrayRef, indices: Any, value: Any, /, *, mask: Any = None, check_bounds: bool = True,
            **hints: Any) -> None:  # fmt: skip
    """Write ``value`` to the elements of ``array`` at ``indices``."""
    pointer, enabled, shape = _gathered(array, indices, mask, check_bounds)
    elem = array.base.dtype.pointee
    stored = broadcast_value(cast(_as_tile(value).value, elem), shape)
    perform(current().launch, Request(OpKind.STORE, "write", pointer, elem, mask=enabled, stored=stored,
                                      returns=False))  # fmt: skip


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"cuda.tile.{name} is not implemented by tilescope's cuTile frontend (see docs/frontends.md)"
    )
