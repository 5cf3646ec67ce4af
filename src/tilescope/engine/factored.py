"""The factored interpretation of ops: addresses as a per-program scalar plus a shared block.

Integer and pointer values stay :class:`~tilescope.engine.affine.Affine` and masks
:class:`~tilescope.engine.affine.Predicate` for as long as the ops on them allow (add, sub,
multiplication by a constant, layout ops, signed comparisons, ``&``, pointer offsets, widening
casts). Each function here is an op rule's ``factored`` entry, ``fn(launch, op, inputs, out,
**params)``: the factored result, or None when the op cannot keep the form (the engine then
materializes the operands). Values stay exact: a factored sum is kept only while it provably does
not wrap. Memory ops then prove whole accesses in bounds for every program at once (:mod:`access`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import affine
from .values import Value

_LIMITS = {"int32": affine.INT32, "int64": (-(2**62), 2**62)}
_SIGNED_COMPARE = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def per_program(scalar: np.ndarray) -> affine.Affine:
    """A value that is one number per program (a program id, a per-program loop bound)."""
    return affine.Affine(scalar.astype(np.int64), np.zeros(1, dtype=np.int64))


def as_affine(v: Value) -> affine.Affine | np.ndarray | None:
    """An integer/pointer value as an Affine, or as a uniform array; None if neither applies."""
    if isinstance(v.lazy, affine.Affine):
        return v.lazy
    if v.lazy is not None or v._data is None or v.wrapped is not None:
        return None
    data = v._data
    if data.dtype.kind not in "iub" or data.dtype == np.bool_:
        return None
    if data.shape[0] == 1:  # (converted once per distinct number: a splat stays a broadcast of one)
        return data.view(np.int64) if data.dtype == np.uint64 else _widened(data)
    if data.ndim == 1:
        return per_program(data.view(np.int64) if data.dtype == np.uint64 else data)
    return None


def _widened(data: np.ndarray) -> np.ndarray:
    """A uniform integer array as int64, converting each number it holds once (broadcast axes stay)."""
    return np.broadcast_to(affine.compact(data).astype(np.int64), data.shape)


def _pair(lhs: Value, rhs: Value) -> tuple[affine.Affine, affine.Affine] | None:
    """Both operands as Affines, when at least one is factored and the other can be; else None."""
    if not (isinstance(lhs.lazy, affine.Affine) or isinstance(rhs.lazy, affine.Affine)):
        return None
    a, b = as_affine(lhs), as_affine(rhs)
    if a is None or b is None:
        return None
    zero = np.zeros(1, np.int64)
    return (
        a if isinstance(a, affine.Affine) else affine.Affine(zero, a),
        b if isinstance(b, affine.Affine) else affine.Affine(zero, b),
    )


def _scaled(block: np.ndarray, size: int) -> np.ndarray:
    """``block * size``, computed on the numbers the block holds once each (a splat stays a broadcast
    of one number: :func:`affine.plus` then keeps the other block's facts)."""
    return np.broadcast_to(affine.compact(block) * size, block.shape)


def _exact(out_name: str, value: affine.Affine) -> affine.Affine | None:
    limits = _LIMITS.get(out_name)
    return value if limits is not None and value.fits(*limits) else None


def add(launch: Any, op: Any, inputs, out, **params) -> affine.Affine | None:
    """a + b, kept while it cannot wrap."""
    pair = _pair(*inputs) if not params else None
    if pair is None:
        return None
    a, b = pair
    return _exact(out.name, affine.Affine(a.scalar + b.scalar, affine.plus(a.block, b.block)))


def sub(launch: Any, op: Any, inputs, out, **params) -> affine.Affine | None:
    """a - b, kept while it cannot wrap."""
    pair = _pair(*inputs) if not params else None
    if pair is None:
        return None
    a, b = pair
    return _exact(out.name, affine.Affine(a.scalar - b.scalar, affine.plus(a.block, -b.block)))


def mul(launch: Any, op: Any, inputs, out, **params) -> affine.Affine | None:
    """a * b when one side is a constant (or both are per-program), kept while it cannot wrap."""
    pair = _pair(*inputs) if not params else None
    if pair is None:
        return None
    a, b = pair
    ca, cb = _constant(a), _constant(b)
    if cb is not None:
        res = affine.Affine(a.scalar * cb, a.block * cb)
    elif ca is not None:
        res = affine.Affine(b.scalar * ca, b.block * ca)
    elif np.all(a.block == 0) and np.all(b.block == 0):
        res = affine.Affine(a.scalar * b.scalar, np.zeros(1, np.int64))
    else:
        return None
    return _exact(out.name, res)


def compare(
    launch: Any, op: Any, inputs, out, signed: bool | None = None, **params
) -> affine.Predicate | None:
    """A signed comparison involving a factored value, as a factored predicate."""
    lhs, rhs = inputs
    symbol = _SIGNED_COMPARE.get(op.value)
    if symbol is None or params.get("unordered"):
        return None
    if not (signed if signed is not None else lhs.dtype.is_signed):
        return None
    if not (isinstance(lhs.lazy, affine.Affine) or isinstance(rhs.lazy, affine.Affine)):
        return None
    a, b = as_affine(lhs), as_affine(rhs)
    if a is None or b is None:
        return None
    return affine.compare(symbol, a, b)


def conjoin(launch: Any, op: Any, inputs, out, **params) -> affine.Predicate | None:
    """Conjunction of masks where at least one is a factored predicate."""
    lhs, rhs = inputs
    preds = [v for v in (lhs, rhs) if isinstance(v.lazy, affine.Predicate)]
    if not preds or not lhs.dtype.is_bool:
        return None
    other = rhs if preds[0] is lhs else lhs
    if isinstance(other.lazy, affine.Predicate):
        return preds[0].lazy.conjoin(other.lazy)
    if other.lazy is None and other._data is not None and other._data.shape[0] == 1:
        return preds[0].lazy.conjoin(other._data)
    return None


def widen(launch: Any, op: Any, inputs, out, **params) -> affine.Affine | None:
    """An integer cast to int64 of a factored value changes nothing (the form is exact int64)."""
    (src,) = inputs
    if isinstance(src.lazy, affine.Affine) and out.storage == np.int64 and src.dtype.is_int:
        return src.lazy
    return None


def ptr_add(launch: Any, op: Any, inputs, out, **params) -> affine.Affine | affine.Rows | None:
    """Pointer plus offset elements, kept factored when either side is; per-row pointers from data
    plus a factored column offset (an embedding lookup) stay :class:`~tilescope.engine.affine.Rows`."""
    size = out.pointee.itemsize
    pair = _pair(*inputs)
    if pair is None:
        ptr, offset = inputs
        # per-program row pointers only: a uniform pointer plus a uniform offset stays plain data, which
        # a later per-program offset still factors
        if ptr.lazy is not None or ptr._data is None or ptr._data.shape[0] == 1 or ptr.wrapped is not None:
            return None
        # a uniform offset (the columns, broadcast) converts to int64 once per distinct lane, not per lane
        uniform = offset._data if offset.lazy is None and offset.wrapped is None else None
        if uniform is not None and uniform.shape[0] == 1 and uniform.dtype.kind in "iu":
            o = affine.Affine(np.zeros(1, np.int64), affine.compact(uniform).astype(np.int64))
        elif isinstance(offset.lazy, affine.Affine):
            o = offset.lazy
        else:
            return None
        return affine.rows_plus(ptr._data.view(np.int64), o, size)
    p, o = pair
    return affine.Affine(p.scalar + o.scalar * size, affine.plus(p.block, _scaled(o.block, size)))


def layout(launch: Any, op: Any, inputs, out, **params) -> affine.Affine | affine.Predicate | None:
    """Layout ops act on the shared block of a factored value (and factor a per-program splat)."""
    from .ops import RULES, Op

    (arg,) = inputs
    fn = RULES[op].value

    def on_block(block: np.ndarray) -> np.ndarray:
        return fn((arg.dtype,), out, block, **params)

    if arg.lazy is not None:
        return arg.lazy.map_block(on_block)
    data = arg._data
    if (
        op is Op.BROADCAST
        and data is not None
        and data.ndim == 1
        and data.shape[0] > 1
        and arg.wrapped is None
    ):
        view = as_affine(arg)
        if isinstance(view, affine.Affine):
            return view.map_block(on_block)
    return None


def _constant(a: affine.Affine) -> int | None:
    """The single value of a factored operand that is the same for every program and lane."""
    if (
        a.scalar.size
        and np.all(a.scalar == a.scalar.flat[0])
        and a.block.size
        and np.all(a.block == a.block.flat[0])
    ):
        return int(a.scalar.flat[0]) + int(a.block.flat[0])
    return None
