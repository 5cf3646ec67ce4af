"""``nki.isa`` on the engine: the documented NeuronCore instructions most kernels use.

Each instruction is expressed through ``nki.language``'s implementation (so it records the same
ops and checks the same tile rules); ``op`` arguments take NKI's functions (``nl.add``, ``nl.exp``)
or the NumPy ufuncs NKI accepts in their place (``np.add``, ``np.exp``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import language as nl
from . import rules
from .tiles import Tile, cast, engine_dtype

#: NumPy ufuncs NKI accepts for its own functions
_UFUNCS: dict[Any, Callable] = {
    np.add: nl.add,
    np.subtract: nl.subtract,
    np.multiply: nl.multiply,
    np.divide: nl.divide,
    np.maximum: nl.maximum,
    np.minimum: nl.minimum,
    np.power: nl.power,
    np.exp: nl.exp,
    np.log: nl.log,
    np.sqrt: nl.sqrt,
    np.tanh: nl.tanh,
    np.abs: nl.abs,
    np.negative: nl.negative,
    np.reciprocal: nl.reciprocal,
}
#: reductions by their elementwise op
_REDUCTIONS = {nl.add: "sum", nl.maximum: "max", nl.minimum: "min", nl.multiply: "prod"}


def _fn(op: Any, what: str) -> Callable:
    fn = _UFUNCS.get(op, op)
    if not callable(fn) or getattr(fn, "__module__", None) != nl.__name__:
        raise TypeError(f"nisa.{what}: op {op!r} is neither an nki.language function nor a NumPy ufunc")
    return fn


def nc_matmul(stationary: Tile, moving: Tile, **kwargs: Any) -> Tile:
    """``stationary.T @ moving`` on the Tensor Engine into a PSUM tile (fp32 accumulation)."""
    nl.reject_options("nisa.nc_matmul", {k: v for k, v in kwargs.items() if k != "mask"})
    return nl.apply_mask(nl.matmul_into_psum(stationary, moving), kwargs.get("mask"))


def nc_transpose(data: Tile, **kwargs: Any) -> Tile:
    """The partition/free transpose of a 2-D tile on the Tensor Engine (the result in PSUM)."""
    nl.reject_options("nisa.nc_transpose", {k: v for k, v in kwargs.items() if k != "mask"})
    result = nl.transpose(data, mask=kwargs.get("mask"))
    rules.check_tile(result.shape, "psum", "the transposed tile")
    return Tile(result.value, "psum")


def activation(op: Any, data: Tile, *, bias: Tile | None = None, scale: Any = 1.0, dtype: Any = None,
               mask: Any = None) -> Tile:  # fmt: skip
    """``op(data * scale + bias)`` on the Scalar Engine (``bias`` a per-partition column)."""
    fn = _fn(op, "activation")
    x = data if isinstance(scale, (int, float)) and scale == 1.0 else data * scale
    if bias is not None:
        x = x + bias
    return fn(x, dtype=dtype, mask=mask)


def tensor_tensor(data1: Tile, data2: Tile, op: Any, *, dtype: Any = None, mask: Any = None) -> Tile:
    """``op(data1, data2)`` elementwise on the Vector Engine."""
    return _fn(op, "tensor_tensor")(data1, data2, dtype=dtype, mask=mask)


def tensor_scalar(
    data: Tile, op0: Any, operand0: Any, *, reverse0: bool = False, op1: Any = None, operand1: Any = None,
    reverse1: bool = False, dtype: Any = None, mask: Any = None,
) -> Tile:  # fmt: skip
    """``(data op0 operand0) op1 operand1``, each operand a number or a per-partition column."""
    fn0 = _fn(op0, "tensor_scalar")
    x = fn0(operand0, data) if reverse0 else fn0(data, operand0)
    if op1 is not None:
        fn1 = _fn(op1, "tensor_scalar")
        x = fn1(operand1, x) if reverse1 else fn1(x, operand1)
    return nl.apply_mask(x if dtype is None else nl.copy(x, dtype), mask)


def tensor_reduce(op: Any, data: Tile, axis: Any, *, dtype: Any = None, keepdims: bool = False,
                  negate: bool = False, mask: Any = None) -> Tile:  # fmt: skip
    """``data`` reduced along free ``axis`` with ``op`` (``nl.add``, ``nl.maximum``, ...)."""
    fn = _fn(op, "tensor_reduce")
    combine = _REDUCTIONS.get(fn)
    if combine is None:
        raise TypeError(f"nisa.tensor_reduce: {fn.__name__} is not add, maximum, minimum or multiply")
    result = nl.reduce_tile(combine, data, axis, dtype, keepdims)
    return nl.apply_mask(-result if negate else result, mask)


def tensor_copy(src: Tile, *, dtype: Any = None, mask: Any = None, **kwargs: Any) -> Tile:
    """A copy of an on-chip tile in SBUF."""
    nl.reject_options("nisa.tensor_copy", {k: v for k, v in kwargs.items() if k != "engine"})
    return nl.apply_mask(nl.copy(src, dtype), mask)


def iota(expr: Tile, dtype: Any, **kwargs: Any) -> Tile:
    """An on-chip tile holding the values of an index expression."""
    nl.reject_options("nisa.iota", {k: v for k, v in kwargs.items() if k != "mask"})
    return nl.apply_mask(Tile(cast(expr.value, engine_dtype(dtype)), "sbuf"), kwargs.get("mask"))


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"nki.isa.{name} is not implemented by tilescope's NKI frontend (docs/frontends.md lists what is)"
    )
