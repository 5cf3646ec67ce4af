"""JAX's array primitives (``lax``) as engine ops: one small function per primitive, looked up by name.

Each rule takes the equation's parameters and its input values (engine :class:`Value` s of the
running batch) and returns the output values, built only from ``ops.apply``, ``reduce.reduce``
and ``dot.dot`` so that every client sees the same ops as for any other frontend. Ref primitives
and control flow live in :mod:`interpret`; this table is what remains: elementwise math, casts,
layout, reductions and ``dot_general``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ...engine import dot as engine_dot
from ...engine import dtypes, ops, reduce
from ...engine.dtypes import DType
from ...engine.ops import Op
from ...engine.values import Value
from ..running import current
from ..values import apply_broadcast, broadcast_to, cast

#: engine dtype of each NumPy dtype name JAX arrays use
_ENGINE = {
    "bool": dtypes.BOOL, "int8": dtypes.INT8, "int16": dtypes.INT16, "int32": dtypes.INT32,
    "int64": dtypes.INT64, "uint8": dtypes.UINT8, "uint16": dtypes.UINT16, "uint32": dtypes.UINT32,
    "uint64": dtypes.UINT64, "float16": dtypes.FP16, "bfloat16": dtypes.BF16, "float32": dtypes.FP32,
    "float64": dtypes.FP64,
}  # fmt: skip


@functools.lru_cache(maxsize=64)
def engine_dtype(dtype: Any) -> DType:
    """The engine dtype of a JAX (NumPy) dtype; a clear error for one the frontend lacks."""
    found = _ENGINE.get(np.dtype(dtype).name)
    if found is None:
        raise TypeError(f"dtype {dtype} is not supported by tilescope's Pallas frontend")
    return found


Rule = Callable[..., list[Value]]
RULES: dict[str, Rule] = {}


def _launch() -> Any:
    return current().launch


def _out_dtype(params: dict) -> DType:
    return engine_dtype(params["_out"][0].dtype)


def _binary(op: Op) -> Rule:
    def rule(params: dict, a: Value, b: Value) -> list[Value]:
        ty = engine_dtype(params["_in"][0].dtype)
        return [apply_broadcast(op, [cast(a, ty), cast(b, ty)])]

    return rule


def _unary(op: Op) -> Rule:
    return lambda params, a: [ops.apply(_launch(), op, a)]


for _name, _op in {
    "add": Op.ADD, "sub": Op.SUB, "mul": Op.MUL, "div": Op.DIV, "rem": Op.REM, "pow": Op.POW,
    "max": Op.MAXIMUM, "min": Op.MINIMUM, "and": Op.AND, "or": Op.OR, "xor": Op.XOR,
    "shift_left": Op.SHL, "eq": Op.EQ, "ne": Op.NE, "lt": Op.LT, "le": Op.LE, "gt": Op.GT,
    "ge": Op.GE, "atan2": Op.ATAN2, "nextafter": Op.NEXTAFTER, "add_any": Op.ADD,
}.items():  # fmt: skip
    RULES[_name] = _binary(_op)
for _name, _op in {
    "neg": Op.NEG, "abs": Op.ABS, "exp": Op.EXP, "exp2": Op.EXP2, "log": Op.LOG, "log1p": Op.LOG1P,
    "expm1": Op.EXPM1, "tanh": Op.TANH, "sin": Op.SIN, "cos": Op.COS, "tan": Op.TAN, "sqrt": Op.SQRT,
    "rsqrt": Op.RSQRT, "cbrt": Op.CBRT, "floor": Op.FLOOR, "ceil": Op.CEIL, "erf": Op.ERF,
    "erfc": Op.ERFC, "erf_inv": Op.ERFINV, "asin": Op.ASIN, "acos": Op.ACOS, "atan": Op.ATAN,
    "sinh": Op.SINH, "cosh": Op.COSH, "asinh": Op.ASINH, "acosh": Op.ACOSH, "atanh": Op.ATANH,
    "is_finite": Op.ISFINITE, "population_count": Op.POPC, "clz": Op.CLZ,
}.items():  # fmt: skip
    RULES[_name] = _unary(_op)


def _identity(params: dict, *values: Value) -> list[Value]:
    return list(values)


for _name in ("copy", "copy_p", "multiple_of", "max_contiguous", "optimization_barrier", "pvary"):
    RULES[_name] = _identity


def _shift_right(arithmetic: bool) -> Rule:
    def rule(params: dict, a: Value, b: Value) -> list[Value]:
        # the engine's SHR is arithmetic on signed and logical on unsigned integers, as in C
        ty = a.dtype
        if arithmetic == ty.is_signed:
            return [apply_broadcast(Op.SHR, [a, cast(b, ty)])]
        flipped = dtypes.named(("int" if not arithmetic else "uint") + str(ty.bits))
        operands = [ops.apply(_launch(), Op.BITCAST, v, to=flipped) for v in (a, cast(b, ty))]
        shifted = apply_broadcast(Op.SHR, operands)
        return [ops.apply(_launch(), Op.BITCAST, shifted, to=ty)]

    return rule


RULES["shift_right_arithmetic"] = _shift_right(True)
RULES["shift_right_logical"] = _shift_right(False)


def _not(params: dict, a: Value) -> list[Value]:
    return [apply_broadcast(Op.XOR, [a, ops.all_ones(a.dtype)])]


def _logistic(params: dict, a: Value) -> list[Value]:
    one = ops.constant(1.0, a.dtype)
    e = ops.apply(_launch(), Op.EXP, ops.apply(_launch(), Op.NEG, a))
    return [apply_broadcast(Op.DIV, [one, apply_broadcast(Op.ADD, [one, e])])]


def _square(params: dict, a: Value) -> list[Value]:
    return [ops.apply(_launch(), Op.MUL, a, a)]


def _reciprocal(params: dict, a: Value) -> list[Value]:
    return [apply_broadcast(Op.DIV, [ops.constant(1.0, a.dtype), a])]


def _integer_pow(params: dict, a: Value) -> list[Value]:
    y = int(params["y"])
    result = ops.constant(1, a.dtype) if y == 0 else None
    for _ in range(abs(y)):
        result = a if result is None else apply_broadcast(Op.MUL, [result, a])
    if y < 0:
        result = apply_broadcast(Op.DIV, [ops.constant(1.0, a.dtype), result])
    return [broadcast_to(result, a.shape)]


def _sign(params: dict, a: Value) -> list[Value]:
    zero = ops.constant(0, a.dtype)
    pos = cast(apply_broadcast(Op.GT, [a, zero]), a.dtype)
    neg = cast(apply_broadcast(Op.LT, [a, zero]), a.dtype)
    return [apply_broadcast(Op.SUB, [pos, neg])]


def _round(params: dict, a: Value) -> list[Value]:
    method = int(getattr(params.get("rounding_method"), "value", params.get("rounding_method", 0)))
    return [ops.apply(_launch(), Op.RINT if method == 1 else Op.ROUND, a)]


def _clamp(params: dict, lo: Value, x: Value, hi: Value) -> list[Value]:
    return [apply_broadcast(Op.MINIMUM, [apply_broadcast(Op.MAXIMUM, [x, lo]), hi])]


def _convert(params: dict, a: Value) -> list[Value]:
    return [cast(a, engine_dtype(params["new_dtype"]))]


def _bitcast(params: dict, a: Value) -> list[Value]:
    return [ops.apply(_launch(), Op.BITCAST, a, to=engine_dtype(params["new_dtype"]))]


def _select_n(params: dict, which: Value, *cases: Value) -> list[Value]:
    shape = tuple(params["_out"][0].shape)
    if which.dtype.is_bool:
        result = apply_broadcast(Op.SELECT, [which, cases[1], cases[0]])
    else:
        result = cases[0]
        for k, case in enumerate(cases[1:], start=1):
            hit = apply_broadcast(Op.EQ, [which, ops.constant(k, which.dtype)])
            result = apply_broadcast(Op.SELECT, [hit, case, result])
    return [broadcast_to(result, shape)]


RULES.update(
    not_=_not, logistic=_logistic, square=_square, reciprocal=_reciprocal, integer_pow=_integer_pow,
    sign=_sign, round=_round, clamp=_clamp, convert_element_type=_convert,
    bitcast_convert_type=_bitcast, select_n=_select_n,
)  # fmt: skip
RULES["not"] = _not


# --- layout


def _reshape_to(a: Value, shape: tuple[int, ...]) -> Value:
    if tuple(a.shape) == tuple(shape):
        return a
    return ops.apply(_launch(), Op.RESHAPE, a, shape=tuple(shape))


def _broadcast_in_dim(params: dict, a: Value, *dynamic: Value) -> list[Value]:
    shape = tuple(params["shape"])
    kept = tuple(params["broadcast_dimensions"])
    ranked = [1] * len(shape)
    for dim, size in zip(kept, a.shape, strict=True):
        ranked[dim] = size
    return [broadcast_to(_reshape_to(a, tuple(ranked)), shape)]


def _reshape(params: dict, a: Value, *dynamic: Value) -> list[Value]:  # dynamic: shape operands (unused)
    return [_reshape_to(a, tuple(params["new_sizes"]))]


def _to_out_shape(params: dict, a: Value) -> list[Value]:
    return [_reshape_to(a, tuple(params["_out"][0].shape))]


def _transpose(params: dict, a: Value) -> list[Value]:
    return [ops.apply(_launch(), Op.PERMUTE, a, perm=tuple(params["permutation"]))]


def _iota(params: dict, *dynamic: Value) -> list[Value]:
    shape, dim = tuple(params["shape"]), int(params["dimension"])
    lanes = ops.arange(_launch(), 0, shape[dim])
    ranked = [1] * len(shape)
    ranked[dim] = shape[dim]
    return [cast(broadcast_to(_reshape_to(lanes, tuple(ranked)), shape), engine_dtype(params["dtype"]))]


def _slice(params: dict, a: Value) -> list[Value]:
    starts, limits = params["start_indices"], params["limit_indices"]
    strides = params.get("strides") or (1,) * len(starts)
    index = tuple(slice(int(s), int(e), int(k)) for s, e, k in zip(starts, limits, strides, strict=True))
    return [ops.apply(_launch(), Op.SLICE, a, index=index)]


def _concatenate(params: dict, *values: Value) -> list[Value]:
    region, start, result = [slice(None)] * len(params["_out"][0].shape), 0, None
    axis = int(params["dimension"])
    result = broadcast_to(ops.constant(0, values[0].dtype), tuple(params["_out"][0].shape))
    for v in values:  # each block written into its region of the result
        region[axis] = slice(start, start + v.shape[axis])
        result = ops.apply(_launch(), Op.INSERT, result, v, index=tuple(region))
        start += v.shape[axis]
    return [result]


RULES.update(
    broadcast_in_dim=_broadcast_in_dim, reshape=_reshape, squeeze=_to_out_shape, expand_dims=_to_out_shape,
    transpose=_transpose, iota=_iota, slice=_slice, concatenate=_concatenate,
)  # fmt: skip


# --- reductions and products

_COMBINES = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min", "reduce_prod": "prod",
             "reduce_xor": "xor"}  # fmt: skip


def _reduction(combine: str) -> Rule:
    def rule(params: dict, a: Value) -> list[Value]:
        axes = sorted((int(x) for x in params["axes"]), reverse=True)
        if not axes:
            return [a]
        if len(axes) == len(a.shape):
            return reduce.reduce(_launch(), [a], None, combine)
        for axis in axes:  # highest first: the lower axes keep their numbers
            (a,) = reduce.reduce(_launch(), [a], axis, combine)
        return [a]

    return rule


for _name, _combine in _COMBINES.items():
    RULES[_name] = _reduction(_combine)


def _reduce_bool(op: Op) -> Rule:
    def rule(params: dict, a: Value) -> list[Value]:
        as_int = cast(a, dtypes.INT32)
        (total,) = _reduction("max" if op is Op.OR else "min")(params, as_int)
        return [cast(total, dtypes.BOOL)]

    return rule


RULES["reduce_or"], RULES["reduce_and"] = _reduce_bool(Op.OR), _reduce_bool(Op.AND)


def _arg_reduce(largest: bool) -> Rule:
    def rule(params: dict, a: Value) -> list[Value]:
        (axis,) = params["axes"]
        index_dtype = engine_dtype(params["index_dtype"])
        lanes = ops.arange(_launch(), 0, a.shape[axis])
        ranked = [1] * len(a.shape)
        ranked[axis] = a.shape[axis]
        index = broadcast_to(_reshape_to(lanes, tuple(ranked)), tuple(a.shape))
        (best,) = reduce.reduce(_launch(), [a], int(axis), "max" if largest else "min", keep_dims=True)
        hit = apply_broadcast(Op.EQ, [a, best])
        big = ops.constant(a.shape[axis], dtypes.INT32)
        candidates = apply_broadcast(Op.SELECT, [hit, index, big])
        (first,) = reduce.reduce(_launch(), [candidates], int(axis), "min")
        return [cast(first, index_dtype)]

    return rule


RULES["argmax"], RULES["argmin"] = _arg_reduce(True), _arg_reduce(False)


def _cumulative(combine: str) -> Rule:
    def rule(params: dict, a: Value) -> list[Value]:
        return reduce.scan(_launch(), [a], int(params["axis"]), combine, reverse=bool(params.get("reverse")))

    return rule


for _name, _combine in {"cumsum": "sum", "cumprod": "prod", "cummax": "max", "cummin": "min"}.items():
    RULES[_name] = _cumulative(_combine)


def _dot_general(params: dict, a: Value, b: Value) -> list[Value]:
    (contract_a, contract_b), (batch_a, batch_b) = params["dimension_numbers"]
    if batch_a or batch_b or len(a.shape) != 2 or len(b.shape) != 2:
        raise NotImplementedError("dot_general: only 2-D operands without batch dimensions")
    launch = _launch()
    if tuple(contract_a) == (0,):
        a = ops.apply(launch, Op.PERMUTE, a, perm=(1, 0))
    if tuple(contract_b) == (1,):
        b = ops.apply(launch, Op.PERMUTE, b, perm=(1, 0))
    out = _out_dtype(params)
    acc_type = dtypes.FP32 if out.is_float and out.bits < 32 else out
    if a.dtype != b.dtype:
        a, b = cast(a, acc_type), cast(b, acc_type)
    acc = broadcast_to(ops.constant(0, acc_type), (a.shape[0], b.shape[1]))
    return [cast(engine_dot.dot(launch, a, b, acc, "ieee"), out)]


RULES["dot_general"] = _dot_general
