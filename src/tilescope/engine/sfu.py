"""The H200's special function unit (MUFU), bit for bit, from tables recorded on it.

PTX's approximate instructions (``rcp.approx.ftz.f32``, ``rsqrt.approx.ftz.f32``,
``sqrt.approx.ftz.f32``, ``ex2.approx.ftz.f32``) have no published algorithm, but on the H200 each
is a function of the significand or of the fixed-point fraction, scaled exactly by the exponent
(recorded by ``tests/numerics/record_sfu.py``; every one of 2**21 random inputs per instruction over
±60 binades, 2.5 million for ``ex2`` and 2 million ``div.full`` pairs, matched the rule below):

- ``rcp(m * 2**e) = R[m] * 2**-e`` and ``rsqrt(m * 4**e) = S[m] * 2**-e`` /
  ``sqrt(m * 4**e) = Q[m] * 2**e``, for the significand ``m`` in [1, 2) (rcp) or [1, 4);
- ``ex2(±(n + f)) = E±[f] * 2**±n`` for the integer part ``n`` and the fraction ``f`` of ``|x|``
  truncated to 23 bits: the instruction works on the magnitude, in fixed point;
- ``div.full.f32`` (Triton's fp32 ``/``) is ``a * rcp(b)`` rounded once wherever ``b`` is a normal
  number no larger than 2**126 (outside that it scales its operands: see :func:`div_full`).

Each table is stored as its difference from the correctly rounded value (``1/m``, ``1/sqrt(m)``,
``sqrt(m)``, ``2**f`` in float64, rounded to float32: -2 to +1 units in the last place), two bits an
entry (14 MiB in all, read once per process when an instruction is first met).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np

from . import numerics as nx

_DATA = Path(__file__).parent / "data"
_MANT = np.int32(0x7FFFFF)
_FLT_MIN = np.float32(2.0**-126)
_SIGN = np.int32(-(2**31))
_INF = np.int32(0x7F800000)
#: table -> (file, offset of its two-bit codes: code - offset is the difference in ulps)
_TABLES = {
    "rcp": ("sm90_rcp.npy", 1),
    "rsqrt": ("sm90_rsqrt.npy", 2),
    "sqrt": ("sm90_sqrt.npy", 1),
    "ex2_pos": ("sm90_ex2_pos.npy", 1),
    "ex2_neg": ("sm90_ex2_neg.npy", 2),
}


@cache
def _codes(*names: str) -> np.ndarray:
    """The two-bit codes of ``names``' tables, one after the other, in memory (2 to 4 MiB each)."""
    return np.concatenate([np.load(_DATA / _TABLES[n][0]) for n in names])


def _delta(codes: np.ndarray, index: np.ndarray) -> np.ndarray:
    """The two-bit code at each ``index`` (int32) of ``codes``, as int32."""
    shift = ((index & 3) << 1).astype(np.uint8)
    return ((codes[index >> 2] >> shift) & 3).astype(np.int32)


def _rounded_bits(exact: np.ndarray) -> np.ndarray:
    """int32 bits of float64 ``exact`` rounded to float32."""
    return exact.astype(np.float32).view(np.int32)


def _ftz(x: np.ndarray) -> np.ndarray:
    return nx.flush_subnormals(np.asarray(x, np.float32))


def _scaled(
    bits: np.ndarray, exp_change: np.ndarray, x: np.ndarray, normal: np.ndarray, special: Callable
) -> np.ndarray:
    """float32 ``bits`` times 2**``exp_change`` (an exact exponent change), flushed to zero where the
    result is below the normal range, infinite above it; ``special(x)`` where ``x`` is not ``normal``
    (zeros, infinities, NaN, out of range: computed for those elements only)."""
    field = ((bits >> 23) & 0xFF) + exp_change
    sign = bits & _SIGN
    result = np.where(field <= 0, sign, bits + (exp_change << 23))
    result = np.where(field >= 255, sign | _INF, result).view(np.float32)
    if not normal.all():
        with np.errstate(all="ignore"):
            result[~normal] = special(x[~normal])
    return result


def _in_float64(fn: Callable) -> Callable:
    """``fn`` of float32 values computed in float64, rounded to float32."""
    return lambda v: fn(v.astype(np.float64)).astype(np.float32)


def _parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """int32 bits, 23 mantissa bits and unbiased exponent of float32 ``x``."""
    bits = x.view(np.int32)
    return bits, bits & _MANT, ((bits >> 23) & 0xFF) - 127


def rcp(x: np.ndarray) -> np.ndarray:
    """``rcp.approx.ftz.f32`` of float32 ``x``."""
    x = _ftz(x)
    bits, mant, e = _parts(x)
    exact = 1 / (1 + mant * 2.0**-23)
    table = _rounded_bits(exact) + _delta(_codes("rcp"), mant) - _TABLES["rcp"][1]
    table |= bits & _SIGN
    # zeros, infinities and NaN as the instruction gives them
    return _scaled(table, -e, x, np.isfinite(x) & (x != 0), lambda v: np.float32(1) / v)


def _root(name: str, x: np.ndarray, fn, sign: int) -> np.ndarray:
    """``rsqrt`` (``sign`` -1) or ``sqrt`` (+1) of float32 ``x`` (``fn`` in float64: the correctly
    rounded value of a grid point, and what zeros, infinities, negatives and NaN give)."""
    x = _ftz(x)
    bits, mant, e = _parts(x)
    odd = e & 1
    index = mant | (odd << 23)
    exact = fn((1 + mant * 2.0**-23) * (1 + odd))
    table = _rounded_bits(exact) + _delta(_codes(name), index) - _TABLES[name][1]
    return _scaled(table, sign * ((e - odd) >> 1), x, np.isfinite(x) & (x > 0), _in_float64(fn))


def rsqrt(x: np.ndarray) -> np.ndarray:
    """``rsqrt.approx.ftz.f32`` of float32 ``x``."""
    return _root("rsqrt", x, lambda v: 1 / np.sqrt(v), -1)


def sqrt(x: np.ndarray) -> np.ndarray:
    """``sqrt.approx.ftz.f32`` of float32 ``x``."""
    return _root("sqrt", x, np.sqrt, 1)


def ex2(x: np.ndarray) -> np.ndarray:
    """``ex2.approx.ftz.f32`` of float32 ``x``."""
    x = np.asarray(x, np.float32)
    fixed = np.multiply(np.abs(x), 2.0**23, dtype=np.float64)  # |x| in fixed point, exactly
    inside = fixed < 2.0**30  # |x| < 128 (NaN is outside)
    fixed = np.floor(np.where(inside, fixed, 0), out=fixed).astype(np.int32)  # truncated (ftz: 0)
    neg = np.signbit(x).view(np.int8).astype(np.int32)
    q, n = fixed & _MANT, fixed >> 23
    frac = np.multiply(q, 2.0**-23, dtype=np.float64)
    exact = np.exp2(np.where(neg == 1, -frac, frac))
    # one table per sign, after one another: codes offset 1 (x >= 0) or 2 (x < 0)
    table = _rounded_bits(exact) + _delta(_codes("ex2_pos", "ex2_neg"), q | (neg << 23)) - 1 - neg
    # NaN, infinities and |x| >= 128: 2**x, rounded and flushed
    return _scaled(table, n - 2 * neg * n, x, inside, lambda v: _ftz(_in_float64(np.exp2)(v)))


def div_full(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``div.full.f32`` of float32 ``a / b``: ``a * rcp(b)`` rounded once wherever that is what the
    instruction does (``b`` normal and at most 2**126; subnormal quotients included, rounded as
    subnormals: the 554 of the ``math_fp32_edge`` golden all are); elsewhere (the
    instruction scales its operands there, which was not recorded) the correctly rounded quotient,
    within the instruction's 2 ulp. Element by element: a block whose masked-off lanes hold NaN
    still divides its other lanes as the H200 does."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float32), np.asarray(b, np.float32))
    with np.errstate(all="ignore"):
        q = np.asarray(np.multiply(a, rcp(b), dtype=np.float32))
        mag = np.abs(b)
        inside = (mag >= _FLT_MIN) & (mag <= np.float32(2.0**126))
        if not inside.all():
            q[~inside] = np.divide(a[~inside], b[~inside], dtype=np.float32)
    return q
