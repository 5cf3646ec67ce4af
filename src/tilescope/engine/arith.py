"""Elementwise arithmetic as the GPU does it: small pure functions over arrays, program axis first.

Every function here has the shape the op table expects, ``fn(ins, out, *arrays, **params)``:
``ins`` are the operands' engine dtypes, ``out`` the result's, the arrays are broadcast-compatible
and stored in the dtypes' storage. Integer arithmetic wraps like the GPU's; low-precision floats
are computed in float32 and rounded once (see :mod:`numerics`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import numerics as nx
from .dtypes import DType


def signed_view(a: np.ndarray) -> np.ndarray:
    """The bits of an integer array read as signed."""
    return a.view(np.dtype(f"int{a.dtype.itemsize * 8}")) if a.dtype.kind == "u" else a


def unsigned_view(a: np.ndarray) -> np.ndarray:
    """The bits of an integer array read as unsigned."""
    return a.view(np.dtype(f"uint{a.dtype.itemsize * 8}")) if a.dtype.kind == "i" else a


def _as(a: np.ndarray, signed: bool) -> np.ndarray:
    return signed_view(a) if signed else unsigned_view(a)


def _is_signed(ins: tuple[DType, ...], signed: bool | None) -> bool:
    return ins[0].is_signed if signed is None else signed


def float_fn(fn: Callable) -> Callable[..., np.ndarray]:
    """Lift an fp32/fp64 NumPy function to every float type (low precision via fp32, rounded once)."""

    def run(ins, out, *arrays):
        if out.is_low_float:
            return nx.from_float(fn(*(nx.to_float32(a, t) for a, t in zip(arrays, ins, strict=False))), out)
        return fn(*arrays).astype(out.storage, copy=False)

    return run


def wrapping(fn: Callable) -> Callable[..., np.ndarray]:
    """Integer add/sub/mul that wraps; int1 arithmetic wraps like a 1-bit integer."""

    def run(ins, out, a, b):
        if a.dtype == np.bool_:
            return (fn(a.astype(np.int8), b.astype(np.int8), dtype=np.int8) & 1).astype(np.bool_)
        return fn(a, b, dtype=a.dtype)

    return run


def by_kind(float_impl: Callable, int_impl: Callable) -> Callable[..., np.ndarray]:
    """Dispatch on the first operand's kind: floats to one implementation, integers to the other."""

    def run(ins, out, *arrays, **params):
        if ins[0].is_float:
            return float_impl(ins, out, *arrays, **params)
        return int_impl(ins, out, *arrays, **params)

    return run


def int_div(ins, out, a: np.ndarray, b: np.ndarray, signed: bool | None = None) -> np.ndarray:
    """Integer division rounding toward zero (C semantics); x / 0 gives all ones, as PTX does."""
    signed = _is_signed(ins, signed)
    a0, b0 = _as(a, signed), _as(b, signed)
    zero = b0 == 0
    safe = np.where(zero, 1, b0).astype(b0.dtype)
    if signed:
        q = np.fmod(a0, safe)
        res = ((a0 - q) // safe).astype(a0.dtype)
    else:
        res = a0 // safe
    res = np.where(zero, np.array(-1).astype(a0.dtype), res)
    return res.view(a.dtype)


def int_rem(ins, out, a: np.ndarray, b: np.ndarray, signed: bool | None = None) -> np.ndarray:
    """Integer remainder with the sign of the dividend (C semantics); x % 0 gives x."""
    signed = _is_signed(ins, signed)
    a0, b0 = _as(a, signed), _as(b, signed)
    zero = b0 == 0
    safe = np.where(zero, 1, b0).astype(b0.dtype)
    res = np.where(zero, a0, np.fmod(a0, safe)).astype(a0.dtype)
    return res.view(a.dtype)


def int_minmax(fn: Callable) -> Callable[..., np.ndarray]:
    """Signed or unsigned integer min/max (signedness from the operand type unless given)."""

    def run(ins, out, a, b, signed: bool | None = None):
        s = _is_signed(ins, signed)
        return fn(_as(a, s), _as(b, s)).view(a.dtype)

    return run


def shift_left(ins, out, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Left shift; shift amounts at or past the bit width give 0."""
    bits = a.dtype.itemsize * 8
    sh = unsigned_view(np.asarray(b)).astype(np.uint64)
    res = np.left_shift(unsigned_view(a), np.minimum(sh, bits - 1).astype(unsigned_view(a).dtype))
    return np.where(sh >= bits, 0, res).astype(unsigned_view(a).dtype).view(a.dtype)


def shift_right(ins, out, a: np.ndarray, b: np.ndarray, signed: bool | None = None) -> np.ndarray:
    """Arithmetic (signed) or logical right shift; amounts past the width give 0 or the sign fill."""
    arithmetic = _is_signed(ins, signed)
    bits = a.dtype.itemsize * 8
    sh = unsigned_view(np.asarray(b)).astype(np.uint64)
    clamped = np.minimum(sh, bits - 1)
    if arithmetic:
        s = signed_view(a)
        res = np.right_shift(s, clamped.astype(s.dtype))
        fill = np.where(s < 0, -1, 0).astype(s.dtype)
    else:
        s = unsigned_view(a)
        res = np.right_shift(s, clamped.astype(s.dtype))
        fill = np.zeros_like(s)
    return np.where(sh >= bits, fill, res).astype(s.dtype).view(a.dtype)


def umulhi(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """High half of the unsigned product of two integers of the same width."""
    ua, ub = np.broadcast_arrays(unsigned_view(a), unsigned_view(b))
    if ua.dtype.itemsize < 8:
        wide = np.dtype(f"uint{ua.dtype.itemsize * 16}")
        res = (ua.astype(wide) * ub.astype(wide)) >> (ua.dtype.itemsize * 8)
        return res.astype(ua.dtype).view(a.dtype)
    mask = np.uint64(0xFFFFFFFF)
    a_lo, a_hi = ua & mask, ua >> np.uint64(32)
    b_lo, b_hi = ub & mask, ub >> np.uint64(32)
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> np.uint64(32)) + (hi_lo & mask) + lo_hi
    return (hi_hi + (hi_lo >> np.uint64(32)) + (cross >> np.uint64(32))).view(a.dtype)


def mulhi(ins, out, a: np.ndarray, b: np.ndarray, signed: bool | None = None) -> np.ndarray:
    """High half of the product (signed when the operands are, for 32-bit; else unsigned)."""
    if _is_signed(ins, signed) and a.dtype.itemsize == 4:
        return ((a.astype(np.int64) * b.astype(np.int64)) >> 32).astype(a.dtype)
    return umulhi(a, b)


def _sign_bit(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    bits = a.view(np.dtype(f"uint{a.dtype.itemsize * 8}"))
    return bits, np.array(1, dtype=bits.dtype) << (a.dtype.itemsize * 8 - 1)


def float_abs(ins, out, a: np.ndarray) -> np.ndarray:
    """Absolute value by clearing the sign bit (exact for every float format, NaN included)."""
    bits, sign = _sign_bit(a)
    return (bits & ~sign).view(a.dtype)


def float_neg(ins, out, a: np.ndarray) -> np.ndarray:
    """Negation by flipping the sign bit (exact for every float format)."""
    bits, sign = _sign_bit(a)
    return (bits ^ sign).view(a.dtype)


def int_abs(ins, out, a: np.ndarray) -> np.ndarray:
    """Integer absolute value (wrapping at the minimum, as the GPU)."""
    return np.abs(signed_view(a)).view(a.dtype)


def int_neg(ins, out, a: np.ndarray) -> np.ndarray:
    """Integer negation (wrapping)."""
    return np.negative(a, dtype=a.dtype) if a.dtype != np.bool_ else a


_COMPARE = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


def compare(name: str) -> Callable[..., np.ndarray]:
    """A comparison: integers by signedness (the operand type's unless given), floats ordered
    (False when either is NaN) unless ``unordered`` (True when either is)."""
    fn = _COMPARE[name]

    def run(ins, out, a, b, signed: bool | None = None, unordered: bool = False):
        ty = ins[0]
        if ty.is_float:
            if ty.is_low_float:
                a, b = nx.to_float32(a, ty), nx.to_float32(b, ty)
            res = fn(a, b)
            nan = np.isnan(a) | np.isnan(b)
            return (res | nan) if unordered else (res & ~nan)
        if a.dtype == np.bool_ or name in ("eq", "ne"):
            return fn(a, b)
        s = _is_signed(ins, signed)
        return fn(_as(a, s), _as(b, s))

    return run


def float_clamp(ins, out, a, lo, hi, propagate_nan: bool = False) -> np.ndarray:
    """clamp(a, lo, hi); NaN in ``a`` propagates only when asked."""
    ty = out
    a32, b32, c32 = (nx.to_float32(v, ty) if ty.is_low_float else v for v in (a, lo, hi))
    r = np.minimum(np.maximum(a32, b32), c32) if propagate_nan else np.fmin(np.fmax(a32, b32), c32)
    return nx.from_float(r, ty) if ty.is_low_float else r.astype(a.dtype)


def fma(ins, out, a, b, c) -> np.ndarray:
    """a * b + c rounded once."""
    return nx.fma(a, b, c, out)


def select(ins, out, cond, a, b) -> np.ndarray:
    """where(cond, a, b)."""
    return np.where(cond, a, b)
