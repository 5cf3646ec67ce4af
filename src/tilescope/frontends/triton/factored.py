"""Factored values in the Triton builder: addresses as a per-program scalar plus a shared block.

The builder keeps integer and pointer values in :class:`tilescope.engine.affine.Affine` form, and
masks as :class:`~tilescope.engine.affine.Predicate`, for as long as the operations on them allow
(add, sub, multiplication by a constant, shape operations, signed comparisons, ``&``, ``addptr``,
widening casts). Any other operation materializes them through ``Value.data``. Memory operations
then prove whole accesses in bounds for every program at once (``engine/access.py``). Values stay
exact: a factored sum is kept only while it provably does not wrap around.
"""

from __future__ import annotations

import numpy as np
import triton.language as tl

from ...engine import affine
from ...engine.memory import UNKNOWN
from ...engine.values import Value


class FactoredOps:
    """Mixin of :class:`~tilescope.frontends.triton.builder.Builder`: the factored forms of its ops."""

    def _factoring(self) -> bool:
        """Keep addresses factored (per-program scalar + shared block) unless int32 wraps are tracked."""
        return not self.engine.track_overflow or not self.engine.compute_outputs

    @staticmethod
    def _affine_view(v: Value) -> affine.Affine | np.ndarray | None:
        """An integer/pointer value as an Affine, or as a uniform array; None if neither applies."""
        if isinstance(v.lazy, affine.Affine):
            return v.lazy
        if v.lazy is not None or v._data is None or v.wrapped is not None:
            return None
        data = v._data
        if data.dtype.kind not in "iub" or data.dtype == np.bool_:
            return None
        if data.shape[0] == 1:
            return data.view(np.int64) if data.dtype == np.uint64 else data.astype(np.int64)
        if data.ndim == 1:
            scalar = data.view(np.int64) if data.dtype == np.uint64 else data.astype(np.int64)
            return affine.Affine(scalar, np.zeros(1, dtype=np.int64))
        return None

    def _lazy(self, op: str, dtype, lazy, *inputs, prov: int = UNKNOWN) -> Value:
        return Value(None, dtype, self._node(op, inputs), prov, lazy=lazy)

    def _affine_pair(self, lhs: Value, rhs: Value) -> tuple[affine.Affine, affine.Affine] | None:
        """Both operands as Affines, when at least one is factored and the other can be; else None."""
        if not (isinstance(lhs.lazy, affine.Affine) or isinstance(rhs.lazy, affine.Affine)):
            return None
        a, b = self._affine_view(lhs), self._affine_view(rhs)
        if a is None or b is None:
            return None
        zero = np.zeros(1, np.int64)
        return (
            a if isinstance(a, affine.Affine) else affine.Affine(zero, a),
            b if isinstance(b, affine.Affine) else affine.Affine(zero, b),
        )

    def _lazy_arith(self, op: str, lhs: Value, rhs: Value) -> Value | None:
        """add/sub/mul kept factored when the result provably does not wrap."""
        pair = self._affine_pair(lhs, rhs)
        if pair is None:
            return None
        a, b = pair
        if op == "add":
            out = affine.Affine(a.scalar + b.scalar, a.block + b.block)
        elif op == "sub":
            out = affine.Affine(a.scalar - b.scalar, a.block - b.block)
        else:
            ca, cb = _constant(a), _constant(b)
            if cb is not None:
                out = affine.Affine(a.scalar * cb, a.block * cb)
            elif ca is not None:
                out = affine.Affine(b.scalar * ca, b.block * ca)
            elif np.all(a.block == 0) and np.all(b.block == 0):
                out = affine.Affine(a.scalar * b.scalar, np.zeros(1, np.int64))
            else:
                return None
        limits = {"int32": affine.INT32, "int64": (-(2**62), 2**62)}.get(lhs.dtype.name)
        if limits is None or not out.fits(*limits):
            return None
        return self._lazy(op, lhs.dtype, out, lhs, rhs)

    def _lazy_compare(self, op: str, lhs: Value, rhs: Value) -> Value | None:
        """A signed comparison involving a factored value, kept as a factored predicate."""
        symbol = {"icmpSLT": "<", "icmpSLE": "<=", "icmpSGT": ">", "icmpSGE": ">="}.get(op)
        if symbol is None or not (isinstance(lhs.lazy, affine.Affine) or isinstance(rhs.lazy, affine.Affine)):
            return None
        a, b = self._affine_view(lhs), self._affine_view(rhs)
        if a is None or b is None:
            return None
        return self._lazy(op, tl.int1, affine.compare(symbol, a, b), lhs, rhs)

    def _lazy_and(self, lhs: Value, rhs: Value) -> Value | None:
        """Conjunction of masks where at least one is a factored predicate."""
        preds = [v for v in (lhs, rhs) if isinstance(v.lazy, affine.Predicate)]
        if not preds or lhs.dtype != tl.int1:
            return None
        other = rhs if preds[0] is lhs else lhs
        if isinstance(other.lazy, affine.Predicate):
            return self._lazy("and", tl.int1, preds[0].lazy.conjoin(other.lazy), lhs, rhs)
        if other.lazy is None and other._data is not None and other._data.shape[0] == 1:
            return self._lazy("and", tl.int1, preds[0].lazy.conjoin(other._data), lhs, rhs)
        return None

    def _lazy_shape(self, op: str, fn, arg: Value) -> Value | None:
        """Shape operations act on the shared block of a factored value."""
        if arg.lazy is not None:
            return self._lazy(op, arg.dtype, arg.lazy.map_block(fn), arg, prov=arg.prov)
        if (
            op == "splat"
            and self._factoring()
            and arg._data is not None
            and arg._data.ndim == 1
            and arg._data.shape[0] > 1
            and arg.wrapped is None
        ):
            view = self._affine_view(arg)
            if isinstance(view, affine.Affine):
                return self._lazy(op, arg.dtype, view.map_block(fn), arg, prov=arg.prov)
        return None

    def _lazy_addptr(self, ptr: Value, offset: Value, size: int) -> Value | None:
        """Pointer plus offset (elements of ``size`` bytes), kept factored when either side is."""
        pair = self._affine_pair(ptr, offset)
        if pair is None:
            return None
        p, o = pair
        out = affine.Affine(p.scalar + o.scalar * size, p.block + o.block * size)
        return self._lazy("addptr", ptr.dtype, out, ptr, offset, prov=ptr.prov)


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
