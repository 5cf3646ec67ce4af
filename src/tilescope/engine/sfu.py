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
  number no larger than 2**126 and the quotient is normal (outside that it scales its operands: see
  :func:`div_full`).

Each table is stored as its difference from the correctly rounded value (``1/m``, ``1/sqrt(m)``,
``sqrt(m)``, ``2**f`` in float64, rounded to float32: -2 to +1 units in the last place), two bits an
entry, and read by memory map: only the pages of the mantissas a launch meets are touched.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

_DATA = Path(__file__).parent / "data"
_MANT = np.int32(0x7FFFFF)
_FLT_MIN = np.float32(2.0**-126)
#: (file, offset of the stored two-bit codes, the correctly rounded function of the grid point)
_TABLES = {
    "rcp": ("sm90_rcp.npy", 1),
    "rsqrt": ("sm90_rsqrt.npy", 2),
    "sqrt": ("sm90_sqrt.npy", 1),
    "ex2_pos": ("sm90_ex2_pos.npy", 1),
    "ex2_neg": ("sm90_ex2_neg.npy", 2),
}


@cache
def _packed(name: str) -> np.ndarray:
    return np.load(_DATA / _TABLES[name][0], mmap_mode="r")


def _delta(name: str, index: np.ndarray) -> np.ndarray:
    """The recorded table's difference from the correctly rounded value at ``index`` (int64 ulps)."""
    codes = np.asarray(_packed(name)[index >> 2]).astype(np.int64)
    return ((codes >> ((index & 3) * 2)) & 3) - _TABLES[name][1]


def _from_grid(name: str, index: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """The instruction's float64 result at grid points ``index`` whose true values are ``exact``."""
    bits = exact.astype(np.float32).view(np.int32).astype(np.int64) + _delta(name, index)
    return bits.astype(np.int32).view(np.float32).astype(np.float64)


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A normal float32 array's mantissa bits, significand in [1, 2) (float64) and exponent."""
    bits = x.view(np.int32)
    mant = (bits & _MANT).astype(np.int64)
    exp = ((bits >> 23) & 0xFF).astype(np.int64) - 127
    return mant, 1 + mant / 2.0**23, exp


def _ftz(x: np.ndarray) -> np.ndarray:
    """float32 with subnormals flushed to signed zero, as ``.ftz`` instructions read and write them."""
    x = np.asarray(x, np.float32)
    return np.where(np.abs(x) < _FLT_MIN, np.copysign(np.float32(0), x), x).astype(np.float32)


def _specials(x: np.ndarray, out: np.ndarray, normal: np.ndarray, value: np.ndarray) -> np.ndarray:
    out = np.asarray(out, np.float32).copy()
    out[normal] = _ftz(value.astype(np.float32))
    return out


def rcp(x: np.ndarray) -> np.ndarray:
    """``rcp.approx.ftz.f32`` of float32 ``x``."""
    x = _ftz(x)
    with np.errstate(all="ignore"):
        out = np.float32(1) / x  # zeros, infinities and NaN as the instruction gives them
    normal = np.isfinite(x) & (x != 0)
    mant, m, e = _split(x[normal])
    r = _from_grid("rcp", mant, 1 / m)
    return _specials(x, out, normal, np.copysign(np.ldexp(r, -e), x[normal]))


def _root(name: str, x: np.ndarray, fn, sign: int) -> np.ndarray:
    """``rsqrt`` (``sign`` -1) or ``sqrt`` (+1) of positive normal float32 ``x`` in float64."""
    mant, m, e = _split(x)
    odd = e & 1
    index = np.where(odd == 1, mant + 2**23, mant)
    grid = np.where(odd == 1, 2 * m, m)
    return np.ldexp(_from_grid(name, index, fn(grid)), sign * ((e - odd) // 2))


def rsqrt(x: np.ndarray) -> np.ndarray:
    """``rsqrt.approx.ftz.f32`` of float32 ``x``."""
    x = _ftz(x)
    with np.errstate(all="ignore"):
        out = (np.float32(1) / np.sqrt(x)).astype(np.float32)
    normal = np.isfinite(x) & (x > 0)
    return _specials(x, out, normal, _root("rsqrt", x[normal], lambda v: 1 / np.sqrt(v), -1))


def sqrt(x: np.ndarray) -> np.ndarray:
    """``sqrt.approx.ftz.f32`` of float32 ``x``."""
    x = _ftz(x)
    with np.errstate(all="ignore"):
        out = np.sqrt(x).astype(np.float32)
    normal = np.isfinite(x) & (x > 0)
    return _specials(x, out, normal, _root("sqrt", x[normal], np.sqrt, 1))


def ex2(x: np.ndarray) -> np.ndarray:
    """``ex2.approx.ftz.f32`` of float32 ``x``."""
    x = _ftz(x)
    with np.errstate(all="ignore"):
        out = _ftz(np.exp2(x.astype(np.float64)).astype(np.float32))  # NaN, infinities, beyond ±128
    finite = np.isfinite(x) & (np.abs(x) < 128)
    ax = np.abs(x[finite]).astype(np.float64)
    n = np.floor(ax)
    q = np.floor((ax - n) * 2.0**23).astype(np.int64)  # the fraction, truncated to fixed point
    pos = x[finite] >= 0
    value = np.empty(ax.shape, np.float64)
    for name, where, sign in (("ex2_pos", pos, 1), ("ex2_neg", ~pos, -1)):
        frac = _from_grid(name, q[where], np.exp2(sign * q[where] / 2.0**23))
        value[where] = np.ldexp(frac, sign * n[where].astype(np.int64))
    with np.errstate(over="ignore"):
        return _specials(x, out, finite, value)


def div_full(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """``div.full.f32`` of float32 ``a / b``: ``a * rcp(b)`` rounded once, where that is what the
    instruction does (``b`` normal and at most 2**126, the quotient normal or zero); None when some
    element is outside that range (the caller then keeps its bounded model)."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float32), np.asarray(b, np.float32))
    with np.errstate(all="ignore"):
        q = np.multiply(a, rcp(b), dtype=np.float32)
    mag = np.abs(b)
    normal_q = (np.abs(q) >= _FLT_MIN) | (a == 0) | np.isnan(q)
    inside = (mag >= _FLT_MIN) & (mag <= np.float32(2.0**126)) & normal_q
    return q if inside.all() else None
