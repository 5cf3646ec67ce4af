"""NKI's values on the engine: on-chip tiles, index expressions, and HBM tensors with their access patterns.

* :class:`Tile` wraps an engine :class:`~tilescope.engine.values.Value` (one block per program of
  the batch). Its ``buffer`` says where it lives: ``"sbuf"`` or ``"psum"`` for on-chip tiles, None
  for index expressions and scalars (``nl.arange``, ``nl.program_id``, loop arithmetic). On-chip
  memory is private to a program, so an on-chip tile is a value, not an allocation in the
  address table; its writes (``t[...] = v``) make a new value.
* :class:`HBMTensor` is a kernel argument or a ``nl.shared_hbm`` output: an allocation in the
  address table. Indexing it gives an :class:`Access`, the pointer block a ``nl.load`` or
  ``nl.store`` moves, built from the indices with engine ops so that the access stays factored
  (per-program scalar plus a shared block) and is proven in bounds for every program at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...engine import dtypes, ops
from ...engine.dtypes import DType
from ...engine.ops import Op
from ...engine.values import Value
from ...ir import Node
from ..running import current
from ..values import ShapedValue, apply_broadcast, broadcast_to, cast

#: NKI's dtypes are NumPy dtypes (``nl.float32 is np.float32``); the engine's, by NumPy name
_ENGINE_DTYPES = {
    "float32": dtypes.FP32,
    "bfloat16": dtypes.BF16,
    "float16": dtypes.FP16,
    "int32": dtypes.INT32,
    "int16": dtypes.INT16,
    "int8": dtypes.INT8,
    "uint32": dtypes.UINT32,
    "uint16": dtypes.UINT16,
    "uint8": dtypes.UINT8,
    "bool": dtypes.BOOL,
}


def engine_dtype(dtype: Any) -> DType:
    """The engine dtype of an NKI dtype (a NumPy dtype or type, or an engine dtype)."""
    if isinstance(dtype, DType):
        return dtype
    name = str(np.dtype(dtype))
    found = _ENGINE_DTYPES.get(name)
    if found is None:
        supported = ", ".join(f"nl.{n}" if n != "bool" else "nl.bool_" for n in _ENGINE_DTYPES)
        raise TypeError(f"dtype {name} is not supported by tilescope's NKI frontend; supported: {supported}")
    return found


def numpy_dtype(dtype: DType) -> np.dtype:
    """The NumPy dtype NKI names for an engine dtype (what a tile's ``.dtype`` answers)."""
    return dtype.storage


def promote(a: DType, b: DType) -> DType:
    """The result type of an arithmetic op on two tiles when the call gives no ``dtype``.

    Floats win over integers; of two floats the wider wins, and bf16 with fp16 gives fp32; of two
    integers the wider wins, signed when either is.
    """
    if a == b:
        return a
    if a.is_float != b.is_float:
        return a if a.is_float else b
    if a.is_bool or b.is_bool:
        return b if a.is_bool else a
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    if a.is_float:
        return dtypes.FP32
    return dtypes.integer(a.bits, a.is_signed or b.is_signed)


def scalar(x: Any, like: DType | None = None) -> Value:
    """A Python number as an engine constant: int32, fp32 for floats, or ``like``'s type."""
    if isinstance(x, bool):
        return ops.constant(x, dtypes.BOOL)
    if like is not None and (like.is_float or not isinstance(x, float)):
        return ops.constant(x, like)
    return ops.constant(x, dtypes.FP32 if isinstance(x, float) else dtypes.INT32)


def value_of(x: Any, like: DType | None = None) -> Value:
    """The engine value of a tile or a Python number."""
    return x.value if isinstance(x, Tile) else scalar(x, like)


def elementwise(op: Op, *operands: Any, dtype: Any = None, compare: bool = False) -> Tile:
    """``op`` on tiles and numbers, broadcast NumPy-style, in the promoted type (or ``dtype``)."""
    tiles = [x for x in operands if isinstance(x, Tile)]
    kind = tiles[0].dtype_engine
    for t in tiles[1:]:
        kind = promote(kind, t.dtype_engine)
    if any(isinstance(x, float) for x in operands) and not kind.is_float:
        kind = dtypes.FP32
    result = apply_broadcast(op, [cast(value_of(x, kind), kind) for x in operands])
    if dtype is not None and not compare:
        result = cast(result, engine_dtype(dtype))
    return Tile(result, _buffer_of(tiles))


def _buffer_of(tiles: list[Tile]) -> str | None:
    """Where a compute result lives: SBUF when any operand is on chip, else nowhere (index arithmetic)."""
    return "sbuf" if any(t.buffer is not None for t in tiles) else None


def _binary(op: Op, compare: bool = False, swap: bool = False):
    def method(self: Tile, other: Any) -> Tile:
        a, b = (other, self) if swap else (self, other)
        if compare:
            return compare_tiles(op, a, b)
        return elementwise(op, a, b)

    return method


def compare_tiles(op: Op, a: Any, b: Any) -> Tile:
    """A comparison (a bool tile, used as a mask or in ``nl.where``)."""
    return elementwise(op, a, b, compare=True)


class Tile(ShapedValue):
    """A tile: an engine value of the running batch, and the on-chip buffer it lives in (or None)."""

    __slots__ = ("value", "buffer")

    def __init__(self, value: Value, buffer: str | None):
        self.value = value
        self.buffer = buffer

    @property
    def dtype(self) -> np.dtype:
        """The NKI (NumPy) dtype of the elements."""
        return numpy_dtype(self.value.dtype)

    @property
    def dtype_engine(self) -> DType:
        """The engine dtype of the elements."""
        return self.value.dtype

    @property
    def T(self) -> Tile:  # noqa: N802 - NKI's spelling
        """The 2-D transpose (``nl.transpose``)."""
        from .language import transpose

        return transpose(self)

    __add__ = _binary(Op.ADD)
    __radd__ = _binary(Op.ADD, swap=True)
    __sub__ = _binary(Op.SUB)
    __rsub__ = _binary(Op.SUB, swap=True)
    __mul__ = _binary(Op.MUL)
    __rmul__ = _binary(Op.MUL, swap=True)
    __truediv__ = _binary(Op.DIV)
    __rtruediv__ = _binary(Op.DIV, swap=True)
    __mod__ = _binary(Op.REM)
    __pow__ = _binary(Op.POW)
    __and__ = _binary(Op.AND)
    __rand__ = _binary(Op.AND, swap=True)
    __or__ = _binary(Op.OR)
    __ror__ = _binary(Op.OR, swap=True)
    __xor__ = _binary(Op.XOR)
    __lt__ = _binary(Op.LT, compare=True)
    __le__ = _binary(Op.LE, compare=True)
    __gt__ = _binary(Op.GT, compare=True)
    __ge__ = _binary(Op.GE, compare=True)
    __eq__ = _binary(Op.EQ, compare=True)  # type: ignore[assignment]
    __ne__ = _binary(Op.NE, compare=True)  # type: ignore[assignment]
    __hash__ = object.__hash__

    def broadcast_to(self, shape: tuple[int, ...]) -> Tile:
        """This tile broadcast to ``shape`` (size-1 dimensions repeat)."""
        return Tile(broadcast_to(self.value, tuple(shape)), self.buffer)

    def __floordiv__(self, other: Any) -> Tile:
        if self.dtype_engine.is_float:
            from .language import floor

            return floor(self / other)
        return elementwise(Op.DIV, self, other)

    def __neg__(self) -> Tile:
        return Tile(ops.apply(current().launch, Op.NEG, self.value), self.buffer)

    def __bool__(self) -> bool:
        """A Python ``if`` on a tile: the same decision for every program of the batch (else the engine
        splits the batch by it)."""
        launch = current().launch
        return bool(launch.decide(self.value.data, launch.site()))

    def __index__(self) -> int:
        """A tile used as a Python int (a loop bound or a static size)."""
        launch = current().launch
        return int(launch.decide(self.value.data, launch.site()))

    __int__ = __index__

    def __getitem__(self, index: Any) -> Tile:
        """A static region of an on-chip tile (ints, slices, index tiles the same for every program)."""
        region = static_index(index, self.shape)
        return Tile(ops.apply(current().launch, Op.SLICE, self.value, index=region), self.buffer)

    def __setitem__(self, index: Any, value: Any) -> None:
        """Write ``value`` into a static region of this tile (converted to its dtype)."""
        region = static_index(index, self.shape)
        shape = np.broadcast_to(np.empty((), dtype=bool), self.shape)[region].shape
        src = broadcast_to(cast(value_of(value, self.dtype_engine), self.dtype_engine), shape)
        self.value = ops.apply(current().launch, Op.INSERT, self.value, src, index=region)

    def __repr__(self) -> str:
        where = self.buffer or "index"
        return f"Tile({where}, {self.dtype_engine}, shape={self.shape})"


def static_index(index: Any, shape: tuple[int, ...]) -> tuple:
    """An on-chip tile's index as NumPy indices: ints, slices and integer arrays from index tiles."""
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    for i in index:
        if isinstance(i, Tile):
            data = i.value.data
            if data.shape[0] != 1:
                raise IndexError(
                    "an on-chip tile is indexed by a value that differs between programs; on-chip "
                    "indices must be compile-time affine expressions (nl.arange, nl.mgrid, loop indices)"
                )
            out.append(np.asarray(data[0], dtype=np.int64))
        elif isinstance(i, (int, np.integer, slice)) or i is Ellipsis or i is None:
            out.append(i)
        else:
            raise IndexError(f"an on-chip tile cannot be indexed by a {type(i).__name__}")
    return tuple(out)


def index_tile(value: Value) -> Tile:
    """An index expression (``nl.arange``, ``nl.program_id``)."""
    return Tile(value, None)


@dataclass
class Access:
    """An access pattern of an HBM tensor: a pointer per element of the block (what a DMA moves)."""

    tensor: HBMTensor
    pointer: Value
    shape: tuple[int, ...]


class HBMTensor:
    """A tensor in device memory (HBM): a kernel argument or a ``nl.shared_hbm`` output."""

    def __init__(self, name: str, base: Value, shape: tuple[int, ...], strides: tuple[int, ...], array: Any):
        self.name = name
        self.base = base  # the pointer to element 0 (its provenance is the argument's view)
        self.shape = tuple(shape)
        self.strides = tuple(strides)  # in elements
        self.array = array  # the user's array (or the output the launch allocated)

    @property
    def dtype(self) -> np.dtype:
        """The NKI (NumPy) dtype of the elements."""
        return numpy_dtype(self.base.dtype.pointee)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    def __getitem__(self, index: Any) -> Access:
        return access(self, index)

    def reshape(self, shape: tuple[int, ...]) -> HBMTensor:
        """The same memory seen with another shape (the tensor must be contiguous)."""
        shape = tuple(int(s) for s in shape)
        if int(np.prod(shape)) != int(np.prod(self.shape)):
            raise ValueError(f"cannot reshape `{self.name}` of shape {self.shape} to {shape}")
        if self.strides != tuple(int(np.prod(self.shape[d + 1 :])) for d in range(self.ndim)):
            raise ValueError(f"`{self.name}` is not contiguous; only a contiguous HBM tensor can be reshaped")
        strides = tuple(int(np.prod(shape[d + 1 :])) for d in range(len(shape)))
        return HBMTensor(self.name, self.base, shape, strides, self.array)

    def __repr__(self) -> str:
        return f"HBMTensor({self.name}, {self.base.dtype.pointee}, shape={self.shape})"


def _int_value(x: Any) -> Value:
    if isinstance(x, Tile):
        if x.dtype_engine.is_float:
            raise IndexError("an HBM tensor is indexed by a float tile")
        return cast(x.value, dtypes.INT32)
    return scalar(int(x), dtypes.INT32)


def _axis_range(launch: Any, start: Any, stop: Any, step: int, dim_size: int, axis: int, rank: int) -> Value:
    """The indices a slice takes, laid along output ``axis`` of ``rank`` axes."""
    start = 0 if start is None else start
    stop = dim_size if stop is None else stop
    if isinstance(start, Tile) or isinstance(stop, Tile):
        diff = ops.apply(launch, Op.SUB, _int_value(stop), _int_value(start))
        n = int(launch.decide(diff.data, launch.site()))
    else:
        n = int(stop) - int(start)
    count = max(0, -(-n // step))
    lanes = ops.arange(launch, 0, count)
    if step != 1:
        lanes = ops.apply(launch, Op.MUL, lanes, scalar(step, dtypes.INT32))
    lanes = ops.apply(launch, Op.ADD, lanes, broadcast_to(_int_value(start), (count,)))
    shape = [1] * rank
    shape[axis] = count
    return ops.apply(launch, Op.RESHAPE, lanes, shape=tuple(shape))


def access(tensor: HBMTensor, index: Any) -> Access:
    """The access pattern ``tensor[index]``.

    Either basic indexing (ints and slices, each slice an axis of the block in order; ints drop
    their dimension) or advanced indexing by index tiles (``nl.arange``, ``nl.mgrid`` expressions,
    broadcast together) with ints; slices and index tiles do not mix.
    """
    launch = current().launch
    if not isinstance(index, tuple):
        index = (index,)
    if any(i is Ellipsis for i in index):
        at = index.index(Ellipsis)
        index = (*index[:at], *[slice(None)] * (tensor.ndim - len(index) + 1), *index[at + 1 :])
    if len(index) > tensor.ndim:
        raise IndexError(f"{len(index)} indices for `{tensor.name}`, which has {tensor.ndim} dimensions")
    index = (*index, *[slice(None)] * (tensor.ndim - len(index)))
    tiled = [i for i in index if isinstance(i, Tile) and i.shape != ()]
    slices = [i for i in index if isinstance(i, slice)]
    if tiled and slices:
        raise IndexError(
            f"`{tensor.name}` is indexed by both slices and index tiles; use one kind "
            "(e.g. nl.arange(n)[:, None] for every free dimension, or slices only)"
        )
    terms = []
    if slices:
        rank, axis = len(slices), 0
        for dim, i in enumerate(index):
            if isinstance(i, slice):
                step = 1 if i.step is None else int(i.step)
                if step <= 0:
                    raise IndexError(f"slice step {step} of `{tensor.name}` dimension {dim} is not positive")
                lanes = _axis_range(launch, i.start, i.stop, step, tensor.shape[dim], axis, rank)
                terms.append((lanes, tensor.strides[dim]))
                axis += 1
            else:
                terms.append((_int_value(i), tensor.strides[dim]))
    else:
        terms = [(_int_value(i), tensor.strides[dim]) for dim, i in enumerate(index)]
    shape = tuple(np.broadcast_shapes(*(v.shape for v, _ in terms)))
    offset = None
    for v, stride in terms:
        v = broadcast_to(v, shape)
        if stride != 1:
            v = ops.apply(launch, Op.MUL, v, broadcast_to(scalar(stride, dtypes.INT32), shape))
        offset = v if offset is None else ops.apply(launch, Op.ADD, offset, v)
    pointer = ops.apply(launch, Op.PTR_ADD, broadcast_to(tensor.base, shape), offset)
    return Access(tensor, pointer, shape)


def hbm_tensor(name: str, view: Any, elem: DType, array: Any) -> HBMTensor:
    """The HBM tensor of a registered view."""
    info = view.info
    address = np.array([info.address], dtype=np.uint64)
    base = Value(address, dtypes.pointer(elem), Node(f"argument {name}", None), view.vid)
    return HBMTensor(name, base, info.shape, info.strides, array)
