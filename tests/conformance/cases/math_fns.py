"""Math functions: the fast fp32 transcendental ops (stated error bounds), the correctly rounded
ones (fma, div_rn, sqrt_rn: bit-exact), and libdevice functions through tl.extra."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice

from ..case import Case, poison, register
from ._common import f64, normal, rnd, uniform

_APPROX = ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "erf", "floor", "ceil", "abs", "fdiv")


@triton.jit
def approx_math_kernel(
    x_ptr,
    p_ptr,
    a_ptr,
    exp_ptr,
    exp2_ptr,
    log_ptr,
    log2_ptr,
    sqrt_ptr,
    rsqrt_ptr,
    sin_ptr,
    cos_ptr,
    erf_ptr,
    floor_ptr,
    ceil_ptr,
    abs_ptr,
    fdiv_ptr,
    n,
    BLOCK: tl.constexpr,
):
    """tl.exp/exp2/log/log2/sqrt/rsqrt/sin/cos/erf/floor/ceil/abs and fast division on fp32."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)  # in [-5, 5]
    p = tl.load(p_ptr + offs, mask=mask, other=1.0)  # positive
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)  # angles in [-pi, pi]
    tl.store(exp_ptr + offs, tl.exp(x), mask=mask)
    tl.store(exp2_ptr + offs, tl.exp2(x), mask=mask)
    tl.store(log_ptr + offs, tl.log(p), mask=mask)
    tl.store(log2_ptr + offs, tl.log2(p), mask=mask)
    tl.store(sqrt_ptr + offs, tl.sqrt(p), mask=mask)
    tl.store(rsqrt_ptr + offs, tl.rsqrt(p), mask=mask)
    tl.store(sin_ptr + offs, tl.sin(a), mask=mask)
    tl.store(cos_ptr + offs, tl.cos(a), mask=mask)
    tl.store(erf_ptr + offs, tl.erf(x), mask=mask)
    tl.store(floor_ptr + offs, tl.floor(x * 3.0), mask=mask)
    tl.store(ceil_ptr + offs, tl.ceil(x * 3.0), mask=mask)
    tl.store(abs_ptr + offs, tl.abs(x), mask=mask)
    tl.store(fdiv_ptr + offs, tl.fdiv(x, p), mask=mask)


def _approx_inputs(rng):
    n = 1000
    return {
        "x": uniform(rng, n, -5.0, 5.0),
        "p": np.exp(rng.uniform(-6, 6, n)).astype(np.float32),
        "a": uniform(rng, n, -np.pi, np.pi),
        **{k: poison(n, np.float32) for k in _APPROX},
        "n": n,
    }


def _approx_reference(i):
    x, p, a = f64(i["x"]), f64(i["p"]), f64(i["a"])
    x3 = rnd(x * 3.0, np.float32)
    return {
        "exp": np.exp(x),
        "exp2": np.exp2(x),
        "log": np.log(p),
        "log2": np.log2(p),
        "sqrt": np.sqrt(p),
        "rsqrt": 1 / np.sqrt(p),
        "sin": np.sin(a),
        "cos": np.cos(a),
        "erf": np.vectorize(math.erf)(x),
        "floor": np.floor(x3),
        "ceil": np.ceil(x3),
        "abs": np.abs(x),
        "fdiv": x / p,
    }


register(
    Case(
        name="math_approx_fp32",
        make_inputs=_approx_inputs,
        launch=lambda wrap, t: wrap(approx_math_kernel)[(4,)](
            t["x"], t["p"], t["a"], *(t[k] for k in _APPROX), t["n"], BLOCK=256
        ),
        reference=_approx_reference,
        outputs=_APPROX,
        # GPU fast paths: ex2.approx / lg2.approx (~2^-22 relative, plus argument scaling by
        # log2(e)), sin/cos.approx (2^-20.9 absolute on [-pi, pi]), rsqrt.approx (2^-22.9), sqrt and
        # div.full (~2 ulp); erf from libdevice (~2 ulp). floor/ceil/abs are exact.
        tolerance={
            "exp": (2e-6, 0.0),
            "exp2": (2e-6, 0.0),
            "log": (2e-6, 1e-6),
            "log2": (2e-6, 1e-6),
            "sqrt": (1e-6, 0.0),
            "rsqrt": (1e-6, 0.0),
            "sin": (0.0, 2e-6),
            "cos": (0.0, 2e-6),
            "erf": (1e-6, 1e-7),
            "floor": (0.0, 0.0),
            "ceil": (0.0, 0.0),
            "abs": (0.0, 0.0),
            "fdiv": (1e-6, 0.0),
        },
    )
)


@triton.jit
def exact_math_kernel(a_ptr, b_ptr, c_ptr, fma_ptr, div_ptr, sqrt_ptr, n, BLOCK: tl.constexpr):
    """The correctly rounded operations: tl.fma (one rounding), tl.div_rn, tl.sqrt_rn."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=1.0)
    b = tl.load(b_ptr + offs, mask=mask, other=1.0)
    c = tl.load(c_ptr + offs, mask=mask, other=1.0)
    tl.store(fma_ptr + offs, tl.fma(a, b, c), mask=mask)
    tl.store(div_ptr + offs, tl.div_rn(a, b), mask=mask)
    tl.store(sqrt_ptr + offs, tl.sqrt_rn(tl.abs(c)), mask=mask)


def _exact_inputs(rng):
    n = 512
    a, b = normal(rng, n), normal(rng, n)
    # c cancels the rounded product, so fma's single rounding leaves the product's rounding error
    # (exactly representable) where a separate multiply and add would leave ~0.
    c = -(a * b).astype(np.float32)
    c[::3] = normal(rng, c[::3].size)
    return {
        "a": a,
        "b": b,
        "c": c.astype(np.float32),
        **{k: poison(n, np.float32) for k in ("fma", "div", "sqrt")},
        "n": n,
    }


def _round_f32_exact(q: Fraction) -> float:
    """Correctly rounded (nearest even) fp32 value of the exact rational `q`."""
    f = np.float32(float(q))
    cands = [f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf))]
    best = min(cands, key=lambda v: (abs(Fraction(float(v)) - q), int(np.float32(v).view(np.uint32)) & 1))
    return float(best)


def _exact_reference(i):
    a, b, c = (f64(i[k]) for k in ("a", "b", "c"))
    fma = [_round_f32_exact(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c, strict=True)]
    # fp32 division and square root rounded once from float64 are correctly rounded (53 >= 2*24+2).
    return {"fma": np.array(fma), "div": rnd(a / b, np.float32), "sqrt": rnd(np.sqrt(np.abs(c)), np.float32)}


register(
    Case(
        name="math_correctly_rounded",
        make_inputs=_exact_inputs,
        launch=lambda wrap, t: wrap(exact_math_kernel)[(2,)](
            t["a"], t["b"], t["c"], t["fma"], t["div"], t["sqrt"], t["n"], BLOCK=256
        ),
        reference=_exact_reference,
        outputs=("fma", "div", "sqrt"),
        tolerance={"fma": (0.0, 0.0), "div": (0.0, 0.0), "sqrt": (0.0, 0.0)},
        tags=frozenset({"exact"}),
    )
)

_LIBDEVICE = (
    "tanh",
    "expm1",
    "log1p",
    "erfc",
    "pow",
    "atan2",
    "fmod",
    "hypot",
    "cbrt",
    "asin",
    "sinh",
    "trunc",
)


@triton.jit
def libdevice_kernel(
    x_ptr,
    y_ptr,
    tanh_ptr,
    expm1_ptr,
    log1p_ptr,
    erfc_ptr,
    pow_ptr,
    atan2_ptr,
    fmod_ptr,
    hypot_ptr,
    cbrt_ptr,
    asin_ptr,
    sinh_ptr,
    trunc_ptr,
    n,
    BLOCK: tl.constexpr,
):
    """A GELU/activation-style grab bag of libdevice functions via triton.language.extra."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.5)  # in (-1, 1)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)  # in (0.5, 4)
    tl.store(tanh_ptr + offs, libdevice.tanh(x * 3.0), mask=mask)
    tl.store(expm1_ptr + offs, libdevice.expm1(x), mask=mask)
    tl.store(log1p_ptr + offs, libdevice.log1p(x), mask=mask)
    tl.store(erfc_ptr + offs, libdevice.erfc(x), mask=mask)
    tl.store(pow_ptr + offs, libdevice.pow(y, x * 4.0), mask=mask)
    tl.store(atan2_ptr + offs, libdevice.atan2(x, y - 2.0), mask=mask)
    tl.store(fmod_ptr + offs, libdevice.fmod(y * 7.0, y), mask=mask)
    tl.store(hypot_ptr + offs, libdevice.hypot(x, y), mask=mask)
    tl.store(cbrt_ptr + offs, libdevice.cbrt(x), mask=mask)
    tl.store(asin_ptr + offs, libdevice.asin(x), mask=mask)
    tl.store(sinh_ptr + offs, libdevice.sinh(x * 2.0), mask=mask)
    tl.store(trunc_ptr + offs, libdevice.trunc(y * x * 5.0), mask=mask)


def _ld_inputs(rng):
    n = 300
    return {
        "x": uniform(rng, n, -0.99, 0.99),
        "y": uniform(rng, n, 0.5, 4.0),
        **{k: poison(n, np.float32) for k in _LIBDEVICE},
        "n": n,
    }


def _ld_reference(i):
    x, y = f64(i["x"]), f64(i["y"])
    f32 = np.float32
    # Scaled arguments are rounded to fp32 first, as the kernel computes them.
    return {
        "tanh": np.tanh(rnd(x * 3.0, f32)),
        "expm1": np.expm1(x),
        "log1p": np.log1p(x),
        "erfc": np.vectorize(math.erfc)(x),
        "pow": np.power(y, rnd(x * 4.0, f32)),
        "atan2": np.arctan2(x, rnd(y - 2.0, f32)),
        "fmod": np.fmod(rnd(y * 7.0, f32), y),
        "hypot": np.hypot(x, y),
        "cbrt": np.cbrt(x),
        "asin": np.arcsin(x),
        "sinh": np.sinh(rnd(x * 2.0, f32)),
        "trunc": np.trunc(rnd(rnd(y * x, f32) * 5.0, f32)),
    }


register(
    Case(
        name="libdevice_functions",
        make_inputs=_ld_inputs,
        launch=lambda wrap, t: wrap(libdevice_kernel)[(2,)](
            t["x"], t["y"], *(t[k] for k in _LIBDEVICE), t["n"], BLOCK=256
        ),
        reference=_ld_reference,
        outputs=_LIBDEVICE,
        # libdevice's fp32 functions are accurate to a few ulp (CUDA math API tables: <= 4 ulp).
        tolerance={k: (1e-6, 1e-7) for k in _LIBDEVICE} | {"fmod": (0.0, 0.0), "trunc": (0.0, 0.0)},
        tags=frozenset({"libdevice"}),
    )
)
