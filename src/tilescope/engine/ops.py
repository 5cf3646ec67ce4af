"""The op table: small pure functions over arrays, one per operation kind.

Each function takes NumPy arrays (already broadcast-compatible, program axis first) and the Triton
element type, and returns a new array in the engine's storage dtype for that type. Low-precision
floats are computed in float32 and rounded once (see :mod:`numerics`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special

from . import numerics as nx


def _signed(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"int{a.dtype.itemsize * 8}")) if a.dtype.kind == "u" else a


def _unsigned(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"uint{a.dtype.itemsize * 8}")) if a.dtype.kind == "i" else a


def float_op(fn: Callable) -> Callable:
    """Lift an fp32/fp64 NumPy function to every Triton float type (low precision via fp32)."""

    def run(ty, *args):
        if nx.is_low_float(ty):
            return nx.from_float(fn(*(nx.to_float32(a, ty) for a in args)), ty)
        return fn(*args).astype(nx.storage_dtype(ty), copy=False)

    return run


def float_compare(fn: Callable, unordered: bool) -> Callable:
    """A float comparison: ordered (False when either is NaN) or unordered (True when either is)."""

    def run(ty, a, b):
        if nx.is_low_float(ty):
            a, b = nx.to_float32(a, ty), nx.to_float32(b, ty)
        res = fn(a, b)
        nan = np.isnan(a) | np.isnan(b)
        return (res | nan) if unordered else (res & ~nan)

    return run


def int_compare(fn: Callable, signed: bool | None) -> Callable:
    """An integer comparison with the signedness the IR op names (None: signedness-free)."""

    def run(ty, a, b):
        if a.dtype == np.bool_:
            return fn(a, b)
        if signed is True:
            a, b = _signed(a), _signed(b)
        elif signed is False:
            a, b = _unsigned(a), _unsigned(b)
        return fn(a, b)

    return run


def int_div(a: np.ndarray, b: np.ndarray, signed: bool) -> np.ndarray:
    """Integer division rounding toward zero (C semantics); x / 0 gives all ones, as PTX does."""
    a0, b0 = (_signed(a), _signed(b)) if signed else (_unsigned(a), _unsigned(b))
    zero = b0 == 0
    safe = np.where(zero, 1, b0).astype(b0.dtype)
    if signed:
        q = np.fmod(a0, safe)
        out = ((a0 - q) // safe).astype(a0.dtype)
    else:
        out = a0 // safe
    out = np.where(zero, np.array(-1).astype(a0.dtype), out)
    return out.view(a.dtype)


def int_rem(a: np.ndarray, b: np.ndarray, signed: bool) -> np.ndarray:
    """Integer remainder with the sign of the dividend (C semantics); x % 0 gives x."""
    a0, b0 = (_signed(a), _signed(b)) if signed else (_unsigned(a), _unsigned(b))
    zero = b0 == 0
    safe = np.where(zero, 1, b0).astype(b0.dtype)
    out = np.where(zero, a0, np.fmod(a0, safe)).astype(a0.dtype)
    return out.view(a.dtype)


def shift_left(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Left shift; shift amounts at or past the bit width give 0."""
    bits = a.dtype.itemsize * 8
    sh = _unsigned(np.asarray(b)).astype(np.uint64)
    out = np.left_shift(_unsigned(a), np.minimum(sh, bits - 1).astype(_unsigned(a).dtype))
    return np.where(sh >= bits, 0, out).astype(_unsigned(a).dtype).view(a.dtype)


def shift_right(a: np.ndarray, b: np.ndarray, arithmetic: bool) -> np.ndarray:
    """Logical or arithmetic right shift; amounts past the width give 0 (or the sign fill)."""
    bits = a.dtype.itemsize * 8
    sh = _unsigned(np.asarray(b)).astype(np.uint64)
    clamped = np.minimum(sh, bits - 1)
    if arithmetic:
        s = _signed(a)
        out = np.right_shift(s, clamped.astype(s.dtype))
        fill = np.where(s < 0, -1, 0).astype(s.dtype)
    else:
        s = _unsigned(a)
        out = np.right_shift(s, clamped.astype(s.dtype))
        fill = np.zeros_like(s)
    return np.where(sh >= bits, fill, out).astype(s.dtype).view(a.dtype)


def umulhi(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """High half of the unsigned product of two integers of the same width."""
    ua, ub = np.broadcast_arrays(_unsigned(a), _unsigned(b))
    if ua.dtype.itemsize < 8:
        wide = np.dtype(f"uint{ua.dtype.itemsize * 16}")
        out = (ua.astype(wide) * ub.astype(wide)) >> (ua.dtype.itemsize * 8)
        return out.astype(ua.dtype).view(a.dtype)
    mask = np.uint64(0xFFFFFFFF)
    a_lo, a_hi = ua & mask, ua >> np.uint64(32)
    b_lo, b_hi = ub & mask, ub >> np.uint64(32)
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> np.uint64(32)) + (hi_lo & mask) + lo_hi
    return (hi_hi + (hi_lo >> np.uint64(32)) + (cross >> np.uint64(32))).view(a.dtype)


def fabs(ty, a: np.ndarray) -> np.ndarray:
    """Absolute value by clearing the sign bit (exact for every float format, NaN included)."""
    bits = a.view(np.dtype(f"uint{a.dtype.itemsize * 8}"))
    return (bits & ~(np.array(1, dtype=bits.dtype) << (a.dtype.itemsize * 8 - 1))).view(a.dtype)


def fneg(ty, a: np.ndarray) -> np.ndarray:
    """Negation by flipping the sign bit (exact for every float format)."""
    bits = a.view(np.dtype(f"uint{a.dtype.itemsize * 8}"))
    return (bits ^ (np.array(1, dtype=bits.dtype) << (a.dtype.itemsize * 8 - 1))).view(a.dtype)


def _erf(x):
    return special.erf(x.astype(np.float64)).astype(x.dtype)


def _rsqrt(x):
    return (1.0 / np.sqrt(x.astype(np.float64))).astype(x.dtype)


FLOAT_BINARY: dict[str, Callable] = {
    "fadd": float_op(np.add),
    "fsub": float_op(np.subtract),
    "fmul": float_op(np.multiply),
    "fdiv": float_op(np.divide),
    "precise_divf": float_op(np.divide),
    "approx_divf": float_op(np.divide),
    "frem": float_op(np.fmod),
    "minimumf": float_op(np.minimum),
    "maximumf": float_op(np.maximum),
    "minnumf": float_op(np.fmin),
    "maxnumf": float_op(np.fmax),
}

FLOAT_UNARY: dict[str, Callable] = {
    "exp": float_op(np.exp),
    "exp2": float_op(np.exp2),
    "log": float_op(np.log),
    "log2": float_op(np.log2),
    "sin": float_op(np.sin),
    "cos": float_op(np.cos),
    "sqrt": float_op(np.sqrt),
    "precise_sqrt": float_op(np.sqrt),
    "rsqrt": float_op(_rsqrt),
    "erf": float_op(_erf),
    "floor": float_op(np.floor),
    "ceil": float_op(np.ceil),
    "fabs": fabs,
    "fneg": fneg,
}

INT_BINARY: dict[str, Callable] = {
    "add": lambda ty, a, b: np.add(a, b, dtype=a.dtype),
    "sub": lambda ty, a, b: np.subtract(a, b, dtype=a.dtype),
    "mul": lambda ty, a, b: np.multiply(a, b, dtype=a.dtype),
    "sdiv": lambda ty, a, b: int_div(a, b, True),
    "udiv": lambda ty, a, b: int_div(a, b, False),
    "srem": lambda ty, a, b: int_rem(a, b, True),
    "urem": lambda ty, a, b: int_rem(a, b, False),
    "and": lambda ty, a, b: np.bitwise_and(a, b),
    "or": lambda ty, a, b: np.bitwise_or(a, b),
    "xor": lambda ty, a, b: np.bitwise_xor(a, b),
    "shl": lambda ty, a, b: shift_left(a, b),
    "lshr": lambda ty, a, b: shift_right(a, b, False),
    "ashr": lambda ty, a, b: shift_right(a, b, True),
    "minsi": lambda ty, a, b: np.minimum(_signed(a), _signed(b)).view(a.dtype),
    "maxsi": lambda ty, a, b: np.maximum(_signed(a), _signed(b)).view(a.dtype),
    "minui": lambda ty, a, b: np.minimum(_unsigned(a), _unsigned(b)).view(a.dtype),
    "maxui": lambda ty, a, b: np.maximum(_unsigned(a), _unsigned(b)).view(a.dtype),
    "umulhi": lambda ty, a, b: umulhi(a, b),
}

COMPARE: dict[str, Callable] = {
    "icmpEQ": int_compare(np.equal, None),
    "icmpNE": int_compare(np.not_equal, None),
    "icmpSLT": int_compare(np.less, True),
    "icmpSLE": int_compare(np.less_equal, True),
    "icmpSGT": int_compare(np.greater, True),
    "icmpSGE": int_compare(np.greater_equal, True),
    "icmpULT": int_compare(np.less, False),
    "icmpULE": int_compare(np.less_equal, False),
    "icmpUGT": int_compare(np.greater, False),
    "icmpUGE": int_compare(np.greater_equal, False),
    "fcmpOEQ": float_compare(np.equal, False),
    "fcmpONE": float_compare(np.not_equal, False),
    "fcmpOLT": float_compare(np.less, False),
    "fcmpOLE": float_compare(np.less_equal, False),
    "fcmpOGT": float_compare(np.greater, False),
    "fcmpOGE": float_compare(np.greater_equal, False),
    "fcmpUEQ": float_compare(np.equal, True),
    "fcmpUNE": float_compare(np.not_equal, True),
    "fcmpULT": float_compare(np.less, True),
    "fcmpULE": float_compare(np.less_equal, True),
    "fcmpUGT": float_compare(np.greater, True),
    "fcmpUGE": float_compare(np.greater_equal, True),
}


def _bool_wrap(fn: Callable) -> Callable:
    """int1 arithmetic wraps like a 1-bit integer (NumPy would saturate bool addition)."""

    def run(ty, a, b):
        if a.dtype == np.bool_:
            return (fn(ty, a.astype(np.int8), b.astype(np.int8)) & 1).astype(np.bool_)
        return fn(ty, a, b)

    return run


for _name in ("add", "sub", "mul"):
    INT_BINARY[_name] = _bool_wrap(INT_BINARY[_name])

INT_UNARY: dict[str, Callable] = {
    "iabs": lambda ty, a: np.abs(_signed(a)).view(a.dtype),
}
