"""libdevice's fp32 ``sinf``, ``cosf``, ``logf``, ``log2f``, ``erff``, ``tanhf`` and ``expf``,
operation for operation as an sm_90 compile inlines them.

Triton lowers fp32 ``tl.sin``, ``tl.cos``, ``tl.log``, ``tl.log2`` and ``tl.math.erf`` (and
libdevice's own ``tanh``, ``exp``, ...) to libdevice (``__nv_sinf``, ...), a published bitcode library
whose functions are sequences of IEEE operations: fused multiply-adds with subnormals flushed
(``fma.rn.ftz.f32``: Triton links libdevice with ``__CUDA_FTZ`` on), plain multiplies and adds,
integer bit manipulation, and for some the special function unit (``ex2.approx.ftz``,
``rcp.approx.ftz``: passed in as ``ex2``/``rcp``, the recorded tables or the bounded models). The
sequences below are read off the PTX of such compiles (Triton 3.9 and 3.6, sm_90a; their bundled
libdevice differs only in ``erff``'s coefficients above 1.00295), so each result is the GPU's bits
where the instructions it calls are, checked against the H200 goldens in ``tests/numerics``:

- ``sinf``/``cosf``: the argument reduced by ``pi/2`` in three fused steps (Cody-Waite) below
  105615, else by Payne-Hanek with the 192 bits of ``2/pi`` in ``__cudart_i2opi_f``; then a
  polynomial in the reduced argument, the sine's or the cosine's by quadrant.
- ``logf``/``log2f``: the exponent split off at ``2/3`` (``sqrt(2)/2`` for ``log2f``) so the
  significand lies around 1, subnormals scaled by 2**23 first, then a polynomial in ``m - 1``.
- ``erff``, ``tanhf``, ``expf``: a polynomial near zero, ``ex2`` (and ``rcp``) further out.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import numerics as nx
from .dtypes import FP32 as _FP32

_F32, _I32, _U32 = np.float32, np.int32, np.uint32
#: __cudart_i2opi_f: 2/pi in six 32-bit words, least significant first
_TWO_OVER_PI = np.array(
    [0x3C439041, 0xDB629599, 0xF534DDC0, 0xFC2757D1, 0x4E441529, 0xA2F9836E], dtype=np.uint64
)


def _f(bits: int) -> np.float32:
    """The float32 whose bits are ``bits``."""
    return np.array([bits], dtype=np.uint32).view(np.float32)[0]


def _fma(a, b, c) -> np.ndarray:
    """``fma.rn.ftz.f32`` of operands already flushed (constants, results of ``_fma``, or passed
    through :func:`~.numerics.flush_subnormals`): the result flushed to signed zero."""
    return nx.flush_subnormals(np.asarray(nx.fma(a, b, c, _FP32), _F32))


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(_I32)


def _float(bits: np.ndarray) -> np.ndarray:
    return np.asarray(bits, _I32).view(_F32)


# --- sine and cosine -----------------------------------------------------------------------------

_FAST_LIMIT = _f(0x47CE4780)  # 105615: below it the three-step reduction is exact enough
_PIO2 = (_f(0xBFC90FDA), _f(0xB3A22168), _f(0xA7C234C5))  # -pi/2 in three parts
_SIN = (_f(0xB94D4153), _f(0x3C0885E4), _f(0xBE2AAAA8))
_COS = (_f(0x37CBAC00), _f(0xBAB607ED), _f(0x3D2AAABB), _f(0xBEFFFFFF))


def _payne_hanek(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quadrant (int32) and reduced argument of finite float32 ``x`` with ``|x| >= 105615``."""
    bits = x.view(_U32).astype(np.uint64)
    top = ((bits << 8) | 0x80000000) & 0xFFFFFFFF  # the significand, its leading one at bit 31
    words, carry = [], np.zeros_like(bits)
    for w in _TWO_OVER_PI:  # the 224-bit product, 32 bits at a time
        full = w * top + carry
        words.append(full & 0xFFFFFFFF)
        carry = full >> 32
    words.append(carry)
    product = np.stack(words, axis=-1)  # (..., 7), least significant first
    e = bits >> np.uint64(23)
    skip = ((e & 224).astype(np.int64) - 128) >> 5  # whole words below the binary point

    def take(k: int) -> np.ndarray:  # word k of the product, counted from the binary point
        return np.take_along_axis(product, (k - skip)[..., None], axis=-1)[..., 0]

    hi, mid = take(6), take(5)
    n = e & np.uint64(31)
    lo = np.where(n != 0, ((mid << n) | (take(4) >> (np.uint64(32) - n))) & 0xFFFFFFFF, mid)
    hi = np.where(n != 0, ((hi << n) | (mid >> (np.uint64(32) - n))) & 0xFFFFFFFF, hi)
    frac_hi = ((hi << 2) | (lo >> 30)) & 0xFFFFFFFF
    frac_lo = (lo << 2) & 0xFFFFFFFF
    q = ((hi >> 30) + (frac_hi >> 31)).astype(_I32)
    q = np.where(x < 0, -q, q)
    neg = ((frac_hi ^ x.view(_U32)) >> 31).astype(bool)
    sign = (frac_hi >> 31) * 0xFFFFFFFF  # the fraction's two's complement magnitude, as libdevice
    fixed = (((frac_hi ^ sign) << 32) | (frac_lo ^ sign)).astype(np.int64)
    r = (fixed.astype(np.float64) * float.fromhex("0x1.921fb54442d19p-64")).astype(_F32)
    return q, np.where(neg, -r, r)


def _reduce(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quadrant (int32) and argument reduced to about [-pi/4, pi/4] of float32 ``x``."""
    with np.errstate(all="ignore"):
        flushed = nx.flush_subnormals(x)
        mag = np.abs(flushed)
        slow = (mag >= _FAST_LIMIT) & np.isfinite(mag)
        t = np.rint(np.multiply(x, _f(0x3F22F983), dtype=_F32))  # x * 2/pi, to nearest even
        q = np.where(mag < _FAST_LIMIT, t, 0).astype(_I32)  # NaN: 0, as the conversion gives it
        r = flushed
        for part in _PIO2:  # the quadrant back in float32 from the integer: +0, never -0
            r = _fma(q.astype(_F32), part, r)
        if slow.any():
            q[slow], r[slow] = _payne_hanek(x[slow])
        inf = np.isinf(x)
        if inf.any():
            q[inf], r[inf] = 0, np.float32(np.nan)
    return q, r


def _quadrant(q: np.ndarray, r: np.ndarray) -> np.ndarray:
    """The sine at quadrant ``q`` and reduced argument ``r``: the sine's polynomial of ``r`` for
    even quadrants, the cosine's for odd ones, negated in quadrants 2 and 3 (the cosine is the
    sine one quadrant on)."""
    r = nx.flush_subnormals(r)  # a Payne-Hanek result may be subnormal
    s = nx.flush_subnormals(np.multiply(r, r, dtype=_F32))
    odd = (q & 1) != 0
    base = np.where(odd, _F32(1), r)
    scaled = _fma(s, base, _F32(0))
    c1 = np.where(odd, _fma(_COS[0], s, _COS[1]), _SIN[0])
    c2, c3 = np.where(odd, _COS[2], _SIN[1]), np.where(odd, _COS[3], _SIN[2])
    y = _fma(_fma(_fma(c1, s, c2), s, c3), scaled, base)
    return np.where((q & 2) != 0, _fma(y, _F32(-1), _F32(0)), y)


def sinf(x: np.ndarray) -> np.ndarray:
    """``__nv_sinf`` of float32 ``x``."""
    q, r = _reduce(np.asarray(x, _F32))
    with np.errstate(all="ignore"):
        return _quadrant(q, r)


def cosf(x: np.ndarray) -> np.ndarray:
    """``__nv_cosf`` of float32 ``x``."""
    q, r = _reduce(np.asarray(x, _F32))
    with np.errstate(all="ignore"):
        return _quadrant(q + 1, r)


# --- logarithms ----------------------------------------------------------------------------------

_LOG = [_f(b) for b in (0xBE055027, 0x3E1039F6, 0xBDF8CDCC, 0x3E0F2955, 0xBE2AD8B9, 0x3E4CED0B,
                        0xBE7FFF22, 0x3EAAAA78, 0xBF000000)]  # fmt: skip
_LOG2 = [_f(b) for b in (0x3DC6B27F, 0xBE2C7F30, 0x3E2FCF2A, 0xBE374E43, 0x3E520BF4, 0xBE763C8B,
                         0x3E93BF99, 0xBEB8AA49, 0x3EF6384A, 0xBF38AA3B)]  # fmt: skip
_LN2, _LOG2E = _f(0x3F317218), _f(0x3FB8AA3B)
_INF = _F32(np.inf)


def _split(x: np.ndarray, pivot: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the input as libdevice sees it: subnormals scaled by 2**23; its exponent in float32, from
    the bits above ``pivot``; the significand minus one)."""
    tiny = x < _f(0x00800000)
    x = np.where(tiny, np.multiply(x, _F32(2.0**23), dtype=_F32), x)
    bits = _bits(x)
    exponent_bits = (bits - _I32(pivot)) & _I32(-(2**23))
    exponent = _fma(exponent_bits.astype(_F32), _F32(2.0**-23), np.where(tiny, _F32(-23), _F32(0)))
    return x, exponent, np.add(_float(bits - exponent_bits), _F32(-1), dtype=_F32)


def _specials(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``y`` where ``x`` (scaled) is positive and finite; ``x * inf + inf`` (inf, or NaN for
    negatives and NaN) where it is not; -inf at zero."""
    outside = _bits(x).view(_U32) >= _U32(0x7F800000)
    y = np.where(outside, _fma(x, _INF, _INF), y)
    return np.where(x == 0, -_INF, y)


def _horner(coefficients: list[np.float32], f: np.ndarray) -> np.ndarray:
    p = _fma(coefficients[0], f, coefficients[1])
    for c in coefficients[2:]:
        p = _fma(p, f, c)
    return p


def logf(x: np.ndarray) -> np.ndarray:
    """``__nv_logf`` of float32 ``x``."""
    with np.errstate(all="ignore"):
        x, exponent, f = _split(np.asarray(x, _F32), 0x3F2AAAAB)
        tail = _fma(nx.flush_subnormals(np.multiply(f, _horner(_LOG, f), dtype=_F32)), f, f)
        return _specials(x, _fma(exponent, _LN2, tail))


def log2f(x: np.ndarray) -> np.ndarray:
    """``__nv_log2f`` of float32 ``x``."""
    with np.errstate(all="ignore"):
        x, exponent, f = _split(np.asarray(x, _F32), 0x3F3504F3)
        # the terms of degree two and up: f * (f * P(f))
        linear_p = np.multiply(f, _horner(_LOG2, f), dtype=_F32)
        higher = nx.flush_subnormals(np.multiply(f, linear_p, dtype=_F32))
        return _specials(x, np.add(exponent, _fma(f, _LOG2E, higher), dtype=_F32))



# --- through the special function unit: erff, tanhf, expf ----------------------------------------
# these call ex2.approx.ftz (and tanhf rcp.approx.ftz): ``ex2``/``rcp`` are the engine's form of the
# instruction (the recorded tables, bit-exact, or the bounded models)

_ERF_SMALL = [_f(b) for b in (0x38B1E96A, 0xBA574D20, 0x3BAAD5EA, 0xBCDC1BE7, 0x3DE718AF, 0xBEC093AC,
                              0x3E0375D3)]  # fmt: skip
#: above 1.00295, per bundled libdevice (Triton 3.6's and 3.9's differ here)
_ERF_LARGE = {
    "3.6": [_f(b) for b in (0x3789CA3C, 0xB9F560B9, 0x3BAC840B, 0xBD0C8162, 0x3E1CF906, 0x3F6A937E,
                            0x3F20D842)],
    "3.9": [_f(b) for b in (0x38EB4C3A, 0xBAAE005B, 0x3C09919F, 0xBD24D99A, 0x3E235519, 0x3F69B4F9,
                            0x3F210A14)],
}  # fmt: skip
_TANH = [_f(b) for b in (0x3C80F082, 0xBD563CAE, 0x3E085941, 0xBEAAA9ED)]
_SIGN = np.int32(-(2**31))


def _with_sign_of(x: np.ndarray, magnitude: np.ndarray) -> np.ndarray:
    """``magnitude`` (non-negative float32) with the sign bit of ``x`` or-ed in."""
    return _float(_bits(magnitude) | (_bits(x) & _SIGN))


def erff(x: np.ndarray, ex2: Callable, release: str = nx.DEFAULT_LIBDEVICE) -> np.ndarray:
    """``__nv_erff`` of float32 ``x``: an odd polynomial below 1.00295, else ``1 - ex2(p(|x|))``
    (with the coefficients of Triton ``release``'s libdevice)."""
    x = np.asarray(x, _F32)
    large_coefficients = _ERF_LARGE[release]
    with np.errstate(all="ignore"):
        flushed = nx.flush_subnormals(x)
        mag = np.abs(flushed)
        large = mag >= _f(0x3F8060FE)
        t = np.where(large, mag, nx.flush_subnormals(np.multiply(x, x, dtype=_F32)))
        p = np.where(large, large_coefficients[0], _ERF_SMALL[0])
        for big, small in zip(large_coefficients[1:], _ERF_SMALL[1:], strict=True):
            p = _fma(p, t, np.where(large, big, small))
        arg = np.where(large, -t, flushed)
        y = _fma(p, arg, arg)
        if large.any():
            tail = np.subtract(_F32(1), ex2(y[large]), dtype=_F32)
            y[large] = _with_sign_of(x[large], tail)
    return y


def tanhf(x: np.ndarray, ex2: Callable, rcp: Callable) -> np.ndarray:
    """``__nv_tanhf`` of float32 ``x``: an odd polynomial below 0.6, else ``1 - 2 / (ex2(2|x| log2 e)
    + 1)`` (1 from 9.01), with the sign of ``x``."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        flushed = nx.flush_subnormals(x)
        mag = np.abs(flushed)
        e = ex2(np.multiply(mag, _f(0x4038AA3B), dtype=_F32))
        r = rcp(np.add(e, _F32(1), dtype=_F32))
        far = np.where(mag >= _f(0x41102CB4), _F32(1), _fma(r, _F32(-2), _F32(1)))
        square = nx.flush_subnormals(np.multiply(x, x, dtype=_F32))
        p = _horner(_TANH, square)
        near = _fma(_fma(p, square, _F32(0)), flushed, flushed)
        return np.where(mag >= _f(0x3F19999A), _with_sign_of(x, far), near)


def _fma_down(a: np.ndarray, b: float, c: float) -> np.ndarray:
    """``fma.rm.ftz.f32`` for ``a`` in [0, 1] (ftz: flushed), ``b`` and ``c`` float32 with ``a * b``
    exact in float64: ``a * b + c`` rounded toward minus infinity."""
    a = nx.flush_subnormals(a)
    product = a.astype(np.float64) * b
    total = product + c
    error = product - (total - c)  # Fast2Sum (|c| >= |product| here): total + error is exact
    near = total.astype(_F32)
    above = (near.astype(np.float64) > total) | ((near.astype(np.float64) == total) & (error < 0))
    return np.where(above, np.nextafter(near, _F32(-np.inf)), near)


def expf(x: np.ndarray, ex2: Callable) -> np.ndarray:
    """``__nv_expf`` of float32 ``x`` (libdevice's ``exp``, not ``tl.exp``): ``x log2 e`` split into
    an integer ``n`` (from a rounding trick on ``x log2(e) / 256 + 1/2``, saturated) and a remainder
    computed in two fused steps, ``ex2(remainder) * 2**n`` in two factors."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        xf = nx.flush_subnormals(x)
        scaled = np.clip(np.nan_to_num(_fma(xf, _f(0x3BBB989D), _F32(0.5)), nan=0.0), 0, 1).astype(_F32)
        shifted = _fma_down(scaled, 252.0, 12582913.0)  # 0x4B400001: n + 127 in the low bits
        n = np.add(shifted, _f(0xCB40007F), dtype=_F32)
        remainder = _fma(xf, _f(0x32A57060), _fma(xf, _f(0x3FB8AA3B), -n))
        factor = _float(_bits(shifted) << 23)
        return np.multiply(ex2(remainder), factor, dtype=_F32)
