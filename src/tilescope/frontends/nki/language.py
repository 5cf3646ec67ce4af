"""``nki.language`` on the engine: the documented core of NKI's tile language, without the ``nki`` package.

Written from AWS's published API reference (NKI Beta 1 era, ``neuronxcc.nki.language``); no NKI
code is imported or needed. A name NKI has and this module lacks raises an error saying so.

Memory: ``nl.load`` and ``nl.store`` move tiles between HBM tensors and SBUF (``transfer``
records, ``attrs`` ``from``/``to``); on-chip tiles (SBUF, PSUM) are values private to a program.
Every tile made is checked against the NeuronCore's tile rules (:mod:`rules`).
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterator
from typing import Any

import ml_dtypes
import numpy as np

from ...engine import dot as engine_dot
from ...engine import ops, reduce
from ...engine.access import Request, perform
from ...engine.ops import Op
from ...ir import OpKind
from ..running import current, loop_range
from ..values import apply_broadcast
from . import rules
from .rules import tile_size  # noqa: F401 - nl.tile_size
from .tiles import (
    Access,
    HBMTensor,
    Tile,
    broadcast_to,
    cast,
    elementwise,
    engine_dtype,
    index_tile,
    promote,
    scalar,
    value_of,
)

# ------------------------------------------------------------------ dtypes and buffers (NKI: NumPy dtypes)

float32 = np.float32
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float16 = np.float16
int32 = np.int32
int16 = np.int16
int8 = np.int8
uint32 = np.uint32
uint16 = np.uint16
uint8 = np.uint8
bool_ = np.bool_

sbuf = "sbuf"
psum = "psum"
hbm = "hbm"
private_hbm = "private_hbm"
shared_hbm = "shared_hbm"
_HBM = (hbm, private_hbm, shared_hbm)


def par_dim(n: int) -> int:
    """Marks a dimension as the partition dimension (a size, as NKI's shapes take it)."""
    return n


# ------------------------------------------------------------------ SPMD


def program_id(axis: int) -> Tile:
    """This program's index along grid ``axis``."""
    return index_tile(ops.program_id(current().launch, axis))


def num_programs(axes: int | None = None) -> int | Tile:
    """The grid's size along ``axes`` (all axes multiplied when None)."""
    launch = current().launch
    if axes is None:
        return int(np.prod(launch.grid))
    return index_tile(ops.num_programs(launch, axes))


def program_ndim() -> int:
    """The number of grid dimensions the kernel was launched with (trailing ones of size 1 dropped)."""
    grid = current().launch.grid
    return builtins.max([i + 1 for i, n in enumerate(grid) if n != 1] or [1])


# ------------------------------------------------------------------ index expressions


def arange(start: int, stop: int | None = None, step: int = 1) -> Tile:
    """The index tile ``start, start + step, ...`` (NumPy's arange on ints)."""
    if stop is None:
        start, stop = 0, start
    launch = current().launch
    lanes = ops.arange(launch, 0, len(range(start, stop, step)))
    if step != 1:
        lanes = ops.apply(launch, Op.MUL, lanes, scalar(step))
    if start:
        lanes = ops.apply(launch, Op.ADD, lanes, scalar(start))
    return index_tile(lanes)


class _MGrid:
    """``nl.mgrid[0:128, 0:512]``: dense index tiles, one per sliced dimension (NumPy's mgrid)."""

    def __getitem__(self, index: Any) -> tuple[Tile, ...] | Tile:
        single = not isinstance(index, tuple)
        slices = (index,) if single else index
        lanes = [arange(s.start or 0, s.stop, s.step or 1) for s in slices]
        shape = tuple(t.shape[0] for t in lanes)
        launch = current().launch
        out = []
        for axis, t in enumerate(lanes):
            v = t.value
            for _ in range(axis):
                v = ops.apply(launch, Op.EXPAND_DIMS, v, axis=0)
            for _ in range(len(shape) - axis - 1):
                v = ops.apply(launch, Op.EXPAND_DIMS, v, axis=len(v.shape))
            out.append(index_tile(broadcast_to(v, shape)))
        return out[0] if single else tuple(out)


mgrid = _MGrid()


def ds(start: Any, size: int) -> slice:
    """A dynamic slice ``start : start + size`` (``start`` may be an index expression)."""
    return slice(start, start + size)


# ------------------------------------------------------------------ memory


def _as_access(x: Any, what: str) -> Access:
    if isinstance(x, Access):
        return x
    if isinstance(x, HBMTensor):
        return x[...]
    raise TypeError(f"{what} takes an HBM tensor or a slice of one; got {type(x).__name__}")


def _mask(mask: Any, shape: tuple[int, ...]):
    if mask is None or mask is True:
        return None
    if isinstance(mask, Tile):
        return broadcast_to(cast(mask.value, engine_dtype(np.bool_)), shape)
    return broadcast_to(scalar(bool(mask)), shape)


def load(src: Any, *, mask: Any = None, dtype: Any = None, **kwargs: Any) -> Tile:
    """Copy a region of an HBM tensor into a new SBUF tile (masked-off elements read as zero)."""
    reject_options("nl.load", kwargs)
    acc = _as_access(src, "nl.load")
    elem = acc.pointer.dtype.pointee
    rules.check_tile(acc.shape, "sbuf", f"the tile loaded from `{acc.tensor.name}`", elem.itemsize)
    launch = current().launch
    value = perform(launch, Request(OpKind.TRANSFER, "read", acc.pointer, elem, mask=_mask(mask, acc.shape),
                                    attrs={"from": "hbm", "to": "sbuf"}))  # fmt: skip
    if dtype is not None:
        value = cast(value, engine_dtype(dtype))
    return Tile(value, "sbuf")


def store(dst: Any, value: Any, *, mask: Any = None, **kwargs: Any) -> None:
    """Copy an on-chip tile into a region of an HBM tensor (converted to the tensor's dtype)."""
    reject_options("nl.store", kwargs)
    acc = _as_access(dst, "nl.store")
    elem = acc.pointer.dtype.pointee
    v = cast(value_of(value, elem), elem)
    try:
        np.broadcast_shapes(v.shape, acc.shape)
    except ValueError:
        raise ValueError(
            f"nl.store: a tile of shape {tuple(v.shape)} does not fit the region of `{acc.tensor.name}` "
            f"of shape {acc.shape}"
        ) from None
    source = value.buffer if isinstance(value, Tile) and value.buffer else "sbuf"
    launch = current().launch
    perform(launch, Request(OpKind.TRANSFER, "write", acc.pointer, elem, mask=_mask(mask, acc.shape),
                            stored=broadcast_to(v, acc.shape), returns=False,
                            attrs={"from": source, "to": "hbm"}))  # fmt: skip


_NAME = re.compile(r"^\s*(\w+)\s*(?::[^=]*)?=")


def ndarray(shape: tuple[int, ...], dtype: Any, *, buffer: Any = sbuf, name: str = "", **kwargs: Any):
    """A new tensor: an HBM output (``buffer=nl.shared_hbm``), or an on-chip tile (SBUF, PSUM).

    NKI leaves new tiles uninitialized; here they hold zeros.
    """
    reject_options("nl.ndarray", kwargs)
    shape = tuple(int(s) for s in shape)
    if buffer in _HBM:
        ctx = current()
        if not name:
            site = ctx.launch.site()
            match = _NAME.match(site.source) if site is not None and site.source else None
            name = match.group(1) if match else f"output{ctx.allocations}"
        return ctx.allocate(shape, dtype, name)
    return full(shape, 0, dtype, buffer=buffer)


def full(shape: tuple[int, ...], fill_value: Any, dtype: Any, *, buffer: Any = sbuf, **kwargs: Any) -> Tile:
    """An on-chip tile filled with ``fill_value``."""
    reject_options("nl.full", kwargs)
    if buffer not in (sbuf, psum):
        raise ValueError(f"nl.full makes on-chip tiles (nl.sbuf or nl.psum); got buffer={buffer!r}")
    shape = tuple(int(s) for s in shape)
    ty = engine_dtype(dtype)
    rules.check_tile(shape, buffer, f"a {buffer.upper()} tile of shape {shape}", ty.itemsize)
    return Tile(broadcast_to(ops.constant(fill_value, ty), shape), buffer)


def zeros(shape: tuple[int, ...], dtype: Any, *, buffer: Any = sbuf, **kwargs: Any) -> Tile:
    """An on-chip tile of zeros."""
    return full(shape, 0, dtype, buffer=buffer, **kwargs)


def ones(shape: tuple[int, ...], dtype: Any, *, buffer: Any = sbuf, **kwargs: Any) -> Tile:
    """An on-chip tile of ones."""
    return full(shape, 1, dtype, buffer=buffer, **kwargs)


def zeros_like(a: Tile, dtype: Any = None, *, buffer: Any = sbuf) -> Tile:
    """Zeros shaped like ``a``."""
    return full(a.shape, 0, a.dtype if dtype is None else dtype, buffer=buffer)


def copy(src: Tile, dtype: Any = None, **kwargs: Any) -> Tile:
    """A copy of an on-chip tile in SBUF (e.g. PSUM to SBUF), converted to ``dtype``."""
    reject_options("nl.copy", kwargs)
    v = src.value if dtype is None else cast(src.value, engine_dtype(dtype))
    return Tile(v, "sbuf")


# ------------------------------------------------------------------ elementwise


def apply_mask(result: Tile, mask: Any) -> Tile:
    """A compute op's ``mask``: lanes outside it hold zero (NKI leaves them unwritten)."""
    m = _mask(mask, result.shape)
    if m is None:
        return result
    zero = broadcast_to(ops.constant(0, result.dtype_engine), result.shape)
    return Tile(ops.apply(current().launch, Op.SELECT, m, result.value, zero), result.buffer)


def _binary_fn(op: Op, doc: str):
    def fn(x: Any, y: Any, *, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Tile:
        reject_options(doc, kwargs)
        return apply_mask(elementwise(op, x, y, dtype=dtype), mask)

    fn.__doc__ = f"Elementwise {doc} (NumPy broadcasting; the promoted dtype unless ``dtype`` is given)."
    return fn


def _compare_fn(op: Op, doc: str):
    def fn(x: Any, y: Any, *, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Tile:
        reject_options(doc, kwargs)
        result = elementwise(op, x, y, compare=True)
        if dtype is not None:
            result = Tile(cast(result.value, engine_dtype(dtype)), result.buffer)
        return apply_mask(result, mask)

    fn.__doc__ = f"Elementwise comparison {doc} (a bool tile unless ``dtype`` is given)."
    return fn


def _unary_fn(op: Op, doc: str):
    def fn(x: Tile, *, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Tile:
        reject_options(doc, kwargs)
        v = x.value
        if not v.dtype.is_float and op not in (Op.ABS, Op.NEG):
            v = cast(v, engine_dtype(np.float32))
        result = ops.apply(current().launch, op, v)
        if dtype is not None:
            result = cast(result, engine_dtype(dtype))
        return apply_mask(Tile(result, "sbuf" if x.buffer else None), mask)

    fn.__doc__ = f"Elementwise {doc}."
    return fn


add = _binary_fn(Op.ADD, "x + y")
subtract = _binary_fn(Op.SUB, "x - y")
multiply = _binary_fn(Op.MUL, "x * y")
divide = _binary_fn(Op.DIV, "x / y")
maximum = _binary_fn(Op.MAX, "maximum")
minimum = _binary_fn(Op.MIN, "minimum")
power = _binary_fn(Op.POW, "x ** y")
logical_and = _binary_fn(Op.AND, "and")
logical_or = _binary_fn(Op.OR, "or")
logical_xor = _binary_fn(Op.XOR, "xor")
equal = _compare_fn(Op.EQ, "x == y")
not_equal = _compare_fn(Op.NE, "x != y")
greater = _compare_fn(Op.GT, "x > y")
greater_equal = _compare_fn(Op.GE, "x >= y")
less = _compare_fn(Op.LT, "x < y")
less_equal = _compare_fn(Op.LE, "x <= y")

exp = _unary_fn(Op.EXP, "exp")
log = _unary_fn(Op.LOG, "natural log")
sqrt = _unary_fn(Op.SQRT, "square root")
rsqrt = _unary_fn(Op.RSQRT, "reciprocal square root")
tanh = _unary_fn(Op.TANH, "tanh")
sin = _unary_fn(Op.SIN, "sine")
cos = _unary_fn(Op.COS, "cosine")
erf = _unary_fn(Op.ERF, "error function")
floor = _unary_fn(Op.FLOOR, "floor")
ceil = _unary_fn(Op.CEIL, "ceil")
abs = _unary_fn(Op.ABS, "absolute value")  # noqa: A001 - NKI's name
negative = _unary_fn(Op.NEG, "negation")
reciprocal = _unary_fn(Op.RCP, "reciprocal")


def square(x: Tile, *, dtype: Any = None, mask: Any = None) -> Tile:
    """Elementwise x * x."""
    return multiply(x, x, dtype=dtype, mask=mask)


def relu(x: Tile, *, dtype: Any = None, mask: Any = None) -> Tile:
    """Elementwise max(x, 0)."""
    return maximum(x, 0.0 if x.dtype_engine.is_float else 0, dtype=dtype, mask=mask)


def sigmoid(x: Tile, *, dtype: Any = None, mask: Any = None) -> Tile:
    """Elementwise 1 / (1 + exp(-x))."""
    return apply_mask(reciprocal(exp(-x) + 1.0, dtype=dtype), mask)


def silu(x: Tile, *, dtype: Any = None, mask: Any = None) -> Tile:
    """Elementwise x * sigmoid(x)."""
    return multiply(x, sigmoid(x), dtype=dtype, mask=mask)


def where(condition: Tile, x: Any, y: Any, *, dtype: Any = None, mask: Any = None) -> Tile:
    """``x`` where ``condition`` holds, else ``y``."""
    tiles = [t for t in (x, y) if isinstance(t, Tile)]
    ty = tiles[0].dtype_engine if tiles else engine_dtype(np.float32)
    for t in tiles[1:]:
        ty = promote(ty, t.dtype_engine)
    values = [cast(condition.value, engine_dtype(np.bool_)), *(cast(value_of(v, ty), ty) for v in (x, y))]
    result = apply_broadcast(Op.SELECT, values)
    if dtype is not None:
        result = cast(result, engine_dtype(dtype))
    return apply_mask(Tile(result, "sbuf"), mask)


# ------------------------------------------------------------------ reductions


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(sorted(a + ndim if a < 0 else a for a in axes))


def reduce_tile(combine: str, x: Tile, axis: Any, dtype: Any, keepdims: bool) -> Tile:
    """``x`` reduced along free ``axis`` (an int or a tuple) with a named combine."""
    axes = _axes(axis, x.ndim)
    rules.check_reduce_axes(axes, x.ndim)
    v = x.value if dtype is None else cast(x.value, engine_dtype(dtype))
    launch = current().launch
    for a in reversed(axes):
        v = reduce.reduce(launch, [v], a, combine, keep_dims=keepdims)[0]
    return Tile(v, "sbuf")


def sum(x: Tile, axis: Any, *, dtype: Any = None, keepdims: bool = False, mask: Any = None) -> Tile:  # noqa: A001
    """The sum along free ``axis``."""
    return apply_mask(reduce_tile("sum", x, axis, dtype, keepdims), mask)


def prod(x: Tile, axis: Any, *, dtype: Any = None, keepdims: bool = False, mask: Any = None) -> Tile:
    """The product along free ``axis``."""
    return apply_mask(reduce_tile("prod", x, axis, dtype, keepdims), mask)


def max(x: Tile, axis: Any, *, dtype: Any = None, keepdims: bool = False, mask: Any = None) -> Tile:  # noqa: A001
    """The maximum along free ``axis``."""
    return apply_mask(reduce_tile("max", x, axis, dtype, keepdims), mask)


def min(x: Tile, axis: Any, *, dtype: Any = None, keepdims: bool = False, mask: Any = None) -> Tile:  # noqa: A001
    """The minimum along free ``axis``."""
    return apply_mask(reduce_tile("min", x, axis, dtype, keepdims), mask)


def mean(x: Tile, axis: Any, *, dtype: Any = None, keepdims: bool = False, mask: Any = None) -> Tile:
    """The mean along free ``axis`` (accumulated in fp32)."""
    total = reduce_tile("sum", x, axis, np.float32 if dtype is None else dtype, keepdims)
    count = int(np.prod([x.shape[a] for a in _axes(axis, x.ndim)]))
    return apply_mask(divide(total, float(count), dtype=dtype), mask)


# ------------------------------------------------------------------ Tensor Engine


def transpose(x: Tile, *, dtype: Any = None, mask: Any = None) -> Tile:
    """The 2-D transpose of an on-chip tile (partition and free dimensions swap)."""
    if x.ndim != 2:
        raise ValueError(f"nl.transpose takes a 2-D tile; got shape {x.shape}")
    rules.check_tile((x.shape[1], x.shape[0]), "sbuf", "the transposed tile", x.dtype_engine.itemsize)
    v = ops.apply(current().launch, Op.PERMUTE, x.value, perm=(1, 0))
    if dtype is not None:
        v = cast(v, engine_dtype(dtype))
    return apply_mask(Tile(v, "sbuf"), mask)


def matmul_into_psum(stationary: Tile, moving: Tile) -> Tile:
    """``stationary.T @ moving`` on the Tensor Engine: fp32 accumulation, the result in PSUM."""
    for operand in (stationary, moving):
        if not isinstance(operand, Tile) or operand.ndim != 2:
            raise ValueError("a matmul takes two 2-D on-chip tiles")
    rules.check_matmul(stationary.shape, moving.shape, (stationary.buffer, moving.buffer))
    launch = current().launch
    m, n = stationary.shape[1], moving.shape[1]
    rules.check_tile((m, n), "psum", "the matmul's result")
    lhs = ops.apply(launch, Op.PERMUTE, stationary.value, perm=(1, 0))
    acc = broadcast_to(ops.constant(0.0, engine_dtype(np.float32)), (m, n))
    return Tile(engine_dot.dot(launch, lhs, moving.value, acc, "ieee"), "psum")


def matmul(x: Tile, y: Tile, *, transpose_x: bool = False, mask: Any = None, **kwargs: Any) -> Tile:
    """``x @ y`` (``x.T @ y`` with ``transpose_x=True``) into a PSUM tile."""
    reject_options("nl.matmul", kwargs)
    stationary = x if transpose_x else transpose(x)
    return apply_mask(matmul_into_psum(stationary, y), mask)


# ------------------------------------------------------------------ loops


def affine_range(start: Any, stop: Any = None, step: int = 1) -> Iterator[int]:
    """A loop whose iterations do not depend on each other (here: run in order, with loop events)."""
    return loop_range(*((start,) if stop is None else (start, stop, step)))


def sequential_range(start: Any, stop: Any = None, step: int = 1) -> Iterator[int]:
    """A loop whose iterations depend on each other (run in order)."""
    return loop_range(*((start,) if stop is None else (start, stop, step)))


def static_range(start: Any, stop: Any = None, step: int = 1) -> Iterator[int]:
    """A loop the compiler unrolls (run in order)."""
    return loop_range(*((start,) if stop is None else (start, stop, step)))


def device_print(prefix: str, x: Tile, **kwargs: Any) -> None:
    """Print a tile's values for every program (one line each)."""
    current().launch.device_print(prefix, False, [x.value])


# ------------------------------------------------------------------ what is not here


def reject_options(fn: str, kwargs: dict) -> None:
    if kwargs:
        raise TypeError(f"{fn}: tilescope's NKI frontend does not take {', '.join(sorted(kwargs))}")


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"nki.language.{name} is not implemented by tilescope's NKI frontend (see docs/frontends.md for "
        "what it covers)"
    )
