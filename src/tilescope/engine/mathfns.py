"""Math functions (the libdevice set: exp, tanh, erfinv, lgamma, popc, ...) by neutral name.

Float functions are evaluated in float64 and rounded once to the result type, which is correctly
rounded or within one ulp of it (the numerics contract). Rounded arithmetic (``add`` with
``rounding="rz"`` and the like) rounds in the direction it names. Frontends map their DSL's names
(libdevice symbols, NKI functions) to the names here; the op table (:mod:`ops`) builds one op each.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special

from . import numerics as nx
from .arith import mulhi


def _f64(ty, x: np.ndarray) -> np.ndarray:
    return (nx.to_float32(x, ty) if ty.is_low_float else x).astype(np.float64)


def directed(exact: np.ndarray, ret, mode: str) -> np.ndarray:
    """Round float64 values to ``ret`` toward zero ('rz'), up ('ru'), down ('rd') or to nearest even."""
    near = nx.from_float(exact, ret)
    if mode == "rn" or ret.name == "fp64":
        return near
    back = near.astype(np.float64)
    if mode == "rz":
        step = np.abs(back) > np.abs(exact)
        toward = np.zeros_like(back)
    elif mode == "ru":
        step = back < exact
        toward = np.full_like(back, np.inf)
    else:  # rd
        step = back > exact
        toward = np.full_like(back, -np.inf)
    moved = np.nextafter(near, toward.astype(near.dtype))
    return np.where(step & np.isfinite(exact), moved, near)


UNARY: dict[str, Callable] = {
    "exp": np.exp,
    "exp2": np.exp2,
    "exp10": lambda x: np.power(10.0, x),
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "cbrt": np.cbrt,
    "rcbrt": lambda x: 1.0 / np.cbrt(x),
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x),
    "rint": np.rint,
    "erf": special.erf,
    "erfc": special.erfc,
    "erfinv": special.erfinv,
    "erfcinv": special.erfcinv,
    "lgamma": special.gammaln,
    "tgamma": special.gamma,
    "normcdf": special.ndtr,
    "normcdfinv": special.ndtri,
    "j0": special.j0,
    "j1": special.j1,
    "y0": special.y0,
    "y1": special.y1,
    "sinpi": lambda x: np.sin(np.pi * x),
    "cospi": lambda x: np.cos(np.pi * x),
    "saturate": lambda x: np.clip(x, 0.0, 1.0),
    "logb": lambda x: np.floor(np.log2(np.abs(x))),
}
BINARY: dict[str, Callable] = {
    "pow": np.power,
    "atan2": np.arctan2,
    "fmod": np.fmod,
    "remainder": np.remainder,
    "fmin": np.fmin,
    "fmax": np.fmax,
    "hypot": np.hypot,
    "copysign": np.copysign,
    "fdim": lambda a, b: np.where(a > b, a - b, 0.0),
    "nextafter": np.nextafter,
    "ldexp": lambda a, b: np.ldexp(a, b.astype(np.int64)),
}
ROUNDED: dict[str, Callable] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "sqrt": np.sqrt,
    "rcp": lambda x: 1.0 / x,
}
PREDICATES: dict[str, Callable] = {
    "isnan": np.isnan,
    "isinf": np.isinf,
    "finite": np.isfinite,
    "isfinite": np.isfinite,
    "signbit": np.signbit,
}


def _bits(x: np.ndarray) -> tuple[int, np.ndarray]:
    bits = x.dtype.itemsize * 8
    return bits, x.view(np.dtype(f"uint{bits}")).astype(np.uint64)


def clz(ins, out, x: np.ndarray) -> np.ndarray:
    """Leading zero bits."""
    bits, u = _bits(x)
    width = np.zeros(u.shape, dtype=np.int32)
    for b in range(bits):
        width = np.where(u >> np.uint64(b) != 0, b + 1, width)
    return (bits - width).astype(np.int32)


def popc(ins, out, x: np.ndarray) -> np.ndarray:
    """Set bits."""
    _, u = _bits(x)
    return np.bitwise_count(u).astype(np.int32)


def ffs(ins, out, x: np.ndarray) -> np.ndarray:
    """1-based position of the lowest set bit (0 when none)."""
    _, u = _bits(x)
    low = u & (~u + np.uint64(1))
    return np.where(u == 0, 0, np.log2(np.where(low == 0, 1, low).astype(np.float64)).astype(np.int32) + 1)


def brev(ins, out, x: np.ndarray) -> np.ndarray:
    """Bits reversed."""
    bits, u = _bits(x)
    res = np.zeros(u.shape, dtype=np.uint64)
    for b in range(bits):
        res |= ((u >> np.uint64(b)) & np.uint64(1)) << np.uint64(bits - 1 - b)
    return res.astype(np.dtype(f"uint{bits}")).view(x.dtype)


INTEGER: dict[str, Callable] = {"clz": clz, "popc": popc, "ffs": ffs, "brev": brev, "mulhi": mulhi}


def precise(fn: Callable) -> Callable[..., np.ndarray]:
    """A float function evaluated in float64 and rounded once to the result type."""

    def run(ins, out, *xs):
        with np.errstate(all="ignore"):
            res = fn(*(_f64(t, x) for t, x in zip(ins, xs, strict=False)))
        return nx.from_float(np.asarray(res, dtype=np.float64), out)

    return run


def predicate(fn: Callable) -> Callable[..., np.ndarray]:
    """A float classification (isnan, signbit, ...) as a boolean-valued integer of the result type."""

    def run(ins, out, x):
        return fn(_f64(ins[0], x)).astype(out.storage)

    return run


def rounded(fn: Callable) -> Callable[..., np.ndarray]:
    """Basic arithmetic rounded once in the direction ``rounding`` names (rn, rz, ru, rd)."""

    def run(ins, out, *xs, rounding: str = "rn"):
        with np.errstate(all="ignore"):
            exact = fn(*(_f64(t, x) for t, x in zip(ins, xs, strict=False)))
        return directed(np.asarray(exact, dtype=np.float64), out, rounding)

    return run
