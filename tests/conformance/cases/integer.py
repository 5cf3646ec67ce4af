"""Integer semantics as the GPU has them: int32 wrap-around, C division and modulo (toward zero),
arithmetic and logical shifts, umulhi, unsigned comparison."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ..case import Case, poison, register


def _wrap(x, bits=32, signed=True):
    """Wrap Python/NumPy integers (int64 or object) to `bits` two's complement."""
    x = np.asarray(x, dtype=object) % (1 << bits)
    if signed:
        x = np.where(x >= (1 << (bits - 1)), x - (1 << bits), x)
    return x.astype(np.int64)


@triton.jit
def hash_kernel(key_ptr, out_ptr, sum_ptr, n, BLOCK: tl.constexpr):
    """A multiplicative int32 hash (wrapping multiply-add, xor-shift) as used for bucketing keys."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    k = tl.load(key_ptr + offs, mask=mask, other=0)
    h = k * -1640531535 + 374761393  # int32 wrap-around on purpose
    h = h ^ ((h >> 15) & 0x1FFFF)
    h = h * 668265263
    tl.store(out_ptr + offs, h, mask=mask)
    tl.store(sum_ptr + offs, k + k * 3 - 2147483647, mask=mask)


def _hash_reference(i):
    k = i["key"].astype(np.int64)
    h = _wrap(k * -1640531535 + 374761393)
    h = _wrap(h ^ ((h >> 15) & 0x1FFFF))
    h = _wrap(h * 668265263)
    return {"out": h, "sum": _wrap(k + k * 3 - 2147483647)}


register(
    Case(
        name="int32_wraparound_hash",
        make_inputs=lambda rng: {
            "key": rng.integers(-(2**31), 2**31, 1000, dtype=np.int64).astype(np.int32),
            "out": poison(1000, np.int32),
            "sum": poison(1000, np.int32),
            "n": 1000,
        },
        launch=lambda wrap, t: wrap(hash_kernel)[(4,)](t["key"], t["out"], t["sum"], t["n"], BLOCK=256),
        reference=_hash_reference,
        outputs=("out", "sum"),
        tolerance={"out": (0.0, 0.0), "sum": (0.0, 0.0)},
        tags=frozenset({"exact"}),
    )
)


@triton.jit
def divmod_kernel(a_ptr, b_ptr, q_ptr, r_ptr, q64_ptr, r64_ptr, fdiv_ptr, n, BLOCK: tl.constexpr):
    """Signed // and % on int32 and int64 (C semantics: quotient toward zero, remainder takes the
    dividend's sign), and tl.cdiv-style rounding up done by hand."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=1)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    tl.store(q_ptr + offs, a // b, mask=mask)
    tl.store(r_ptr + offs, a % b, mask=mask)
    a64 = a.to(tl.int64) * 3000000000
    tl.store(q64_ptr + offs, a64 // b, mask=mask)
    tl.store(r64_ptr + offs, a64 % b, mask=mask)
    tl.store(fdiv_ptr + offs, (a + b - 1) // b, mask=mask)


def _divmod_inputs(rng):
    n = 600
    a = rng.integers(-(10**6), 10**6, n).astype(np.int32)
    b = rng.integers(-200, 200, n).astype(np.int32)
    b[b == 0] = 7
    a[:4], b[:4] = [-7, 7, -7, 7], [2, -2, -2, 2]
    return {
        "a": a,
        "b": b,
        **{k: poison(n, np.int32) for k in ("q", "r", "fdiv")},
        **{k: poison(n, np.int64) for k in ("q64", "r64")},
        "n": n,
    }


def _c_divmod(a, b):
    q = np.abs(a) // np.abs(b) * np.sign(a) * np.sign(b)
    return q, a - q * b


def _divmod_reference(i):
    a, b = i["a"].astype(np.int64), i["b"].astype(np.int64)
    q, r = _c_divmod(a, b)
    a64 = a.astype(object) * 3000000000
    q64, r64 = _c_divmod(a64, b.astype(object))
    fq, _ = _c_divmod(a + b - 1, b)
    return {"q": q, "r": r, "q64": q64.astype(np.int64), "r64": r64.astype(np.int64), "fdiv": fq}


register(
    Case(
        name="int_div_mod_toward_zero",
        make_inputs=_divmod_inputs,
        launch=lambda wrap, t: wrap(divmod_kernel)[(3,)](
            t["a"], t["b"], t["q"], t["r"], t["q64"], t["r64"], t["fdiv"], t["n"], BLOCK=256
        ),
        reference=_divmod_reference,
        outputs=("q", "r", "q64", "r64", "fdiv"),
        tolerance={k: (0.0, 0.0) for k in ("q", "r", "q64", "r64", "fdiv")},
        tags=frozenset({"exact"}),
    )
)


@triton.jit
def shift_kernel(
    x_ptr, s_ptr, shl_ptr, ashr_ptr, lshr_ptr, umulhi_ptr, ult_ptr, slt_ptr, umax_ptr, n, BLOCK: tl.constexpr
):
    """Shifts of signed and unsigned values, umulhi, and comparisons that differ by signedness."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    s = tl.load(s_ptr + offs, mask=mask, other=0)
    u = x.to(tl.uint32, bitcast=True)
    tl.store(shl_ptr + offs, x << s, mask=mask)
    tl.store(ashr_ptr + offs, x >> s, mask=mask)  # arithmetic: sign bits shift in
    tl.store(lshr_ptr + offs, (u >> s).to(tl.int32, bitcast=True), mask=mask)  # logical
    hi = tl.umulhi(u, 2654435769)
    tl.store(umulhi_ptr + offs, hi.to(tl.int32, bitcast=True), mask=mask)
    y = tl.load(x_ptr + (n - 1 - offs), mask=mask, other=0)
    uy = y.to(tl.uint32, bitcast=True)
    tl.store(ult_ptr + offs, (u < uy).to(tl.int32), mask=mask)
    tl.store(slt_ptr + offs, (x < y).to(tl.int32), mask=mask)
    tl.store(umax_ptr + offs, tl.maximum(u, uy).to(tl.int32, bitcast=True), mask=mask)


_SHIFT_OUT = ("shl", "ashr", "lshr", "umulhi", "ult", "slt", "umax")


def _shift_inputs(rng):
    n = 500
    return {
        "x": rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32),
        "s": rng.integers(0, 32, n).astype(np.int32),
        **{k: poison(n, np.int32) for k in _SHIFT_OUT},
        "n": n,
    }


def _shift_reference(i):
    x, s = i["x"].astype(np.int64), i["s"].astype(np.int64)
    u = x % 2**32
    y = x[::-1]
    uy = u[::-1]
    return {
        "shl": _wrap(x.astype(object) << s.astype(object)),
        "ashr": x >> s,
        "lshr": _wrap(u >> s),
        "umulhi": _wrap((u.astype(object) * 2654435769) >> 32),
        "ult": (u < uy).astype(np.int64),
        "slt": (x < y).astype(np.int64),
        "umax": _wrap(np.maximum(u, uy)),
    }


register(
    Case(
        name="int_shifts_umulhi_unsigned",
        make_inputs=_shift_inputs,
        launch=lambda wrap, t: wrap(shift_kernel)[(2,)](
            t["x"], t["s"], *(t[k] for k in _SHIFT_OUT), t["n"], BLOCK=256
        ),
        reference=_shift_reference,
        outputs=_SHIFT_OUT,
        tolerance={k: (0.0, 0.0) for k in _SHIFT_OUT},
        tags=frozenset({"exact"}),
    )
)
