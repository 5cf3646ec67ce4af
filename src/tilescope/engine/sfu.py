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
``sqrt(m)`` in float64, and ``2**f`` as the product of two float64 entries of ``sm90_ex2_ref.npy``,
written by ``tests/numerics/make_ex2_reference.py``; each rounded to float32, so the same on every
machine, unlike a libm's ``exp2``): -2 to +1 units in the last place, two bits an entry (14 MiB in
all, mapped from the files when an instruction is first met: only the pages a launch touches are
read).

Two implementations give the same bits: the C kernel ``_sfu.c`` (built at install, loaded with
ctypes, one pass an element) where it was built and, checked once per process and instruction,
agrees with the NumPy path (about 15 NumPy passes an element) on random inputs over every binade and
the specials (their NumPy bits stored with the package: :func:`clib.check_data`).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np

from . import clib
from . import numerics as nx

_DATA = Path(__file__).parent / "data"
_MODULE = "tilescope.engine._sfu"
_MANT = np.int32(0x7FFFFF)
_FLT_MIN = np.float32(2.0**-126)
_SIGN = np.int32(-(2**31))
_INF = np.int32(0x7F800000)
LOG2E = nx.LOG2E  # tl.exp's multiplier
#: table -> (file, offset of its two-bit codes: code - offset is the difference in ulps)
_TABLES = {
    "rcp": ("sm90_rcp.npy", 1),
    "rsqrt": ("sm90_rsqrt.npy", 2),
    "sqrt": ("sm90_sqrt.npy", 1),
    "ex2_pos": ("sm90_ex2_pos.npy", 1),
    "ex2_neg": ("sm90_ex2_neg.npy", 2),
}
_EX2 = ("ex2_pos", "ex2_neg")


@cache
def _codes(*names: str) -> np.ndarray:
    """The two-bit codes of ``names``' tables, one after the other (2 to 4 MiB each; one table is
    mapped from its file, several are read into one array)."""
    tables = [np.load(_DATA / _TABLES[n][0], mmap_mode="r") for n in names]
    return tables[0] if len(tables) == 1 else np.concatenate(tables)


#: the reference's layout: for each sign, the 4096 powers of the fraction's high 12 bits, then the
#: three coefficients of the low bits' polynomial
EX2_HIGH, EX2_ROW = 4096, 4096 + 3


@cache
def _ex2_reference() -> np.ndarray:
    """(2, 4099) float64: for x >= 0 then x < 0, ``2**(±i / 4096)`` for i < 4096, then ``ln 2``,
    ``ln(2)**2 / 2``, ``ln(2)**3 / 6`` (``make_ex2_reference.py``)."""
    return np.load(_DATA / "sm90_ex2_ref.npy")


def power_of_two(ref: np.ndarray, q: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """float64 ``2**(±q / 2**23)`` (``neg`` 1: negative) for q < 2**23 from the reference ``ref``:
    ``2**(±(q >> 11) / 4096)`` times ``1 + t (c1 + t (c2 + t c3))`` for ``t = ±(q & 2047) / 2**23``,
    each operation an IEEE float64 one (the C kernel's, in the same order)."""
    c1, c2, c3 = ref[0, EX2_HIGH:]
    t = np.where(neg == 1, -(q & 2047), q & 2047) * 2.0**-23
    return ref[neg, q >> 11] * (1 + t * (c1 + t * (c2 + t * c3)))


def _power(q: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """:func:`power_of_two` from the stored reference."""
    return power_of_two(_ex2_reference(), q, neg)


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


def _numpy_rcp(x: np.ndarray) -> np.ndarray:
    """``rcp.approx.ftz.f32`` in NumPy."""
    x = _ftz(x)
    bits, mant, e = _parts(x)
    exact = 1 / (1 + mant * 2.0**-23)
    table = _rounded_bits(exact) + _delta(_codes("rcp"), mant) - _TABLES["rcp"][1]
    table |= bits & _SIGN
    # zeros, infinities and NaN as the instruction gives them
    return _scaled(table, -e, x, np.isfinite(x) & (x != 0), lambda v: np.float32(1) / v)


def _root(name: str, x: np.ndarray, fn, sign: int) -> np.ndarray:
    """``rsqrt`` (``sign`` -1) or ``sqrt`` (+1) of float32 ``x`` in NumPy (``fn`` in float64: the
    correctly rounded value of a grid point, and what zeros, infinities, negatives and NaN give)."""
    x = _ftz(x)
    bits, mant, e = _parts(x)
    odd = e & 1
    index = mant | (odd << 23)
    exact = fn((1 + mant * 2.0**-23) * (1 + odd))
    table = _rounded_bits(exact) + _delta(_codes(name), index) - _TABLES[name][1]
    return _scaled(table, sign * ((e - odd) >> 1), x, np.isfinite(x) & (x > 0), _in_float64(fn))


def _numpy_rsqrt(x: np.ndarray) -> np.ndarray:
    """``rsqrt.approx.ftz.f32`` in NumPy."""
    return _root("rsqrt", x, lambda v: 1 / np.sqrt(v), -1)


def _numpy_sqrt(x: np.ndarray) -> np.ndarray:
    """``sqrt.approx.ftz.f32`` in NumPy."""
    return _root("sqrt", x, np.sqrt, 1)


def _numpy_ex2(x: np.ndarray) -> np.ndarray:
    """``ex2.approx.ftz.f32`` in NumPy."""
    x = np.asarray(x, np.float32)
    fixed = np.multiply(np.abs(x), 2.0**23, dtype=np.float64)  # |x| in fixed point, exactly
    inside = fixed < 2.0**30  # |x| < 128 (NaN is outside)
    fixed = np.floor(np.where(inside, fixed, 0), out=fixed).astype(np.int32)  # truncated (ftz: 0)
    neg = np.signbit(x).view(np.int8).astype(np.int32)
    q, n = fixed & _MANT, fixed >> 23
    # one table per sign, after one another: codes offset 1 (x >= 0) or 2 (x < 0)
    offset = _TABLES["ex2_pos"][1] + neg * (_TABLES["ex2_neg"][1] - _TABLES["ex2_pos"][1])
    table = _rounded_bits(_power(q, neg)) + _delta(_codes(*_EX2), q | (neg << 23)) - offset
    # NaN, infinities and |x| >= 128: 2**x, rounded and flushed (inf, 0 or NaN)
    return _scaled(table, n - 2 * neg * n, x, inside, lambda v: _ftz(_in_float64(np.exp2)(v)))


def _numpy_exp(x: np.ndarray) -> np.ndarray:
    """``tl.exp`` in fp32 in NumPy: ``ex2.approx.f32`` of ``y = x * log2(e)`` rounded to float32;
    the instruction keeps subnormal results (it is not ``.ftz``): below 2**-126 they are modelled as
    the reference ``2**y`` rounded once."""
    y = np.multiply(x, LOG2E, dtype=np.float32)
    out = _numpy_ex2(y)
    tiny = y < -126
    if tiny.any():
        fixed = np.multiply(-y[tiny], 2.0**23, dtype=np.float64)
        small = fixed < 2.0**31  # |y| < 256: 2**y is a float64 of the reference times 2**-n
        fixed = np.where(small, fixed, 0).astype(np.int32)
        value = np.ldexp(_power(fixed & _MANT, np.int32(1)), -(fixed >> 23))
        out[tiny] = np.where(small, value, 0).astype(np.float32)
    return out


#: instruction -> its NumPy form
_NUMPY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "rcp": _numpy_rcp,
    "rsqrt": _numpy_rsqrt,
    "sqrt": _numpy_sqrt,
    "ex2": _numpy_ex2,
    "exp": _numpy_exp,
}


def _library(path: str) -> ctypes.CDLL:
    """The C kernels built at ``path``, their signatures declared."""
    common = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_void_p]
    powers = [*common, ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    return clib.declare(
        ctypes.CDLL(path),
        {
            "tilescope_sfu_rcp": ([*common, ctypes.c_int], None),
            "tilescope_sfu_rsqrt": ([*common, ctypes.c_int], None),
            "tilescope_sfu_sqrt": ([*common, ctypes.c_int], None),
            "tilescope_sfu_ex2": (powers, None),
            "tilescope_sfu_exp": ([*powers, ctypes.c_float], None),
        },
    )


def _tables(name: str) -> tuple:
    """The table arguments of C kernel ``name`` (the codes, and ex2's reference and offsets)."""
    if name in ("ex2", "exp"):
        offsets = tuple(_TABLES[t][1] for t in _EX2)
        scale = (float(LOG2E),) if name == "exp" else ()
        return (_codes(*_EX2).ctypes.data, _ex2_reference().ctypes.data, *offsets, *scale)
    return _codes(name).ctypes.data, _TABLES[name][1]


def _compiled(lib: ctypes.CDLL, name: str, x: np.ndarray) -> np.ndarray:
    """Instruction ``name`` of float32 ``x`` through the C kernels ``lib``."""
    x = np.require(x, np.float32, "C")
    out = np.empty_like(x)
    getattr(lib, f"tilescope_sfu_{name}")(x.ctypes.data, out.ctypes.data, x.size, *_tables(name))
    return out


def _check_inputs() -> np.ndarray:
    """float32 inputs where a wrong kernel shows: every binade's random significands (each
    exponent's parity, both signs), ex2's fixed-point range and its ends, subnormals, zeros,
    infinities and NaN."""
    rng = np.random.default_rng(17)
    exponents = np.arange(-149, 128).repeat(16)
    wide = np.ldexp(rng.uniform(1, 2, exponents.size), exponents) * rng.choice([-1, 1], exponents.size)
    powers = rng.uniform(-260, 260, 8192)
    ends = np.array([126, 127, 128, 150, 255, 256, 2**-126, 2**-127, 2**-149, 3.4e38, np.inf, np.nan, 0.0])
    ends = np.concatenate([ends, np.nextafter(ends.astype(np.float32), np.float32(0))])
    return np.concatenate([wide, powers, ends, -ends]).astype(np.float32)


def check_expected() -> dict[str, np.ndarray]:
    """The check as stored (``data/sfu_check/``): the inputs ``x`` of :func:`_check_inputs` and
    ``bits``, each instruction's NumPy bits on them (a row each, in :data:`_NUMPY`'s order)."""
    x = _check_inputs()
    with np.errstate(all="ignore"):
        return {"x": x, "bits": np.stack([numpy(x) for numpy in _NUMPY.values()])}


def _agrees(lib: ctypes.CDLL, names: tuple[str, ...] = tuple(_NUMPY)) -> bool:
    """The C kernels ``lib`` of instructions ``names`` give the NumPy forms' bits on
    :func:`_check_inputs` (as stored)."""
    stored = clib.check_data("sfu")
    rows = dict(zip(_NUMPY, stored["bits"], strict=True))
    return all(clib.same_bits(_compiled(lib, name, stored["x"]), rows[name]) for name in names)


@cache
def _kernel(name: str) -> ctypes.CDLL | None:
    """The C kernels, where the install built them and instruction ``name``'s agrees with NumPy
    (checked once per process and instruction: a launch pays for the checks of what it runs)."""
    return clib.checked(_MODULE, _library, lambda lib: _agrees(lib, (name,)))


def _run(name: str, x: np.ndarray) -> np.ndarray:
    """Instruction ``name`` of ``x`` (as float32), through the C kernels where they are used."""
    lib = _kernel(name)
    if lib is None:
        return _NUMPY[name](np.asarray(x, np.float32))
    with np.errstate(all="ignore"):
        return _compiled(lib, name, x)


def rcp(x: np.ndarray) -> np.ndarray:
    """``rcp.approx.ftz.f32`` of float32 ``x``."""
    return _run("rcp", x)


def rsqrt(x: np.ndarray) -> np.ndarray:
    """``rsqrt.approx.ftz.f32`` of float32 ``x``."""
    return _run("rsqrt", x)


def sqrt(x: np.ndarray) -> np.ndarray:
    """``sqrt.approx.ftz.f32`` of float32 ``x``."""
    return _run("sqrt", x)


def ex2(x: np.ndarray) -> np.ndarray:
    """``ex2.approx.ftz.f32`` of float32 ``x``."""
    return _run("ex2", x)


def exp(x: np.ndarray) -> np.ndarray:
    """``tl.exp`` of float32 ``x`` as Triton lowers it: ``ex2.approx.f32`` of ``x * log2(e)``
    rounded to float32 (subnormal results kept, modelled as the reference ``2**y`` rounded once)."""
    return _run("exp", x)


def _distinct(x: np.ndarray) -> np.ndarray:
    """``x`` without the repeats of its broadcast (stride 0) axes: length 1 there, so that it
    broadcasts back to ``x``'s shape."""
    return x[tuple(slice(0, 1) if step == 0 else slice(None) for step in x.strides)]


def div_full(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``div.full.f32`` of float32 ``a / b``: ``a * rcp(b)`` rounded once wherever that is what the
    instruction does (``b`` normal and at most 2**126; subnormal quotients included, rounded as
    subnormals: the 554 of the ``math_fp32_edge`` golden all are); elsewhere (the instruction
    scales its operands there, which was not recorded) the correctly rounded quotient, within the
    instruction's 2 ulp. Element by element: a block whose masked-off lanes hold NaN still divides
    its other lanes as the H200 does. A divisor broadcast over the quotient (a softmax's row sum)
    takes one ``rcp`` per distinct value."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float32), np.asarray(b, np.float32))
    distinct = _distinct(b)
    with np.errstate(all="ignore"):
        q = np.asarray(np.multiply(a, rcp(distinct), dtype=np.float32))
        mag = np.abs(distinct)
        inside = (mag >= _FLT_MIN) & (mag <= np.float32(2.0**126))
        if not np.all(inside):
            outside = ~np.broadcast_to(inside, q.shape)
            q[outside] = np.divide(a[outside], b[outside], dtype=np.float32)
    return q
