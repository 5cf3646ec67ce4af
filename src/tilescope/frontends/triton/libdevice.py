"""libdevice functions (``tl.extra.cuda.libdevice`` / ``tl.extra.libdevice``) by symbol.

Float functions are evaluated in float64 and rounded once to the result type, which is correctly
rounded or within one ulp of it (the numerics contract); ``_rn``/``_rz``/``_ru``/``_rd`` variants of
the basic operations round in the direction they name.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special

from ...engine import numerics as nx


def _f64(ty, x: np.ndarray) -> np.ndarray:
    return (nx.to_float32(x, ty) if nx.is_low_float(ty) else x).astype(np.float64)


def _directed(exact: np.ndarray, ret, mode: str) -> np.ndarray:
    """Round float64 values to ``ret`` toward zero, up or down (nearest even for 'rn')."""
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


_UNARY: dict[str, Callable] = {
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
    "nearbyint": np.rint,
    "fabs": np.abs,
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
    "fast_exp": np.exp,
    "fast_exp10": lambda x: np.power(10.0, x),
    "fast_log": np.log,
    "fast_log2": np.log2,
    "fast_log10": np.log10,
    "fast_sin": np.sin,
    "fast_cos": np.cos,
    "fast_tan": np.tan,
    "logb": lambda x: np.floor(np.log2(np.abs(x))),
}
_BINARY: dict[str, Callable] = {
    "pow": np.power,
    "powi": np.power,
    "atan2": np.arctan2,
    "fmod": np.fmod,
    "remainder": np.remainder,
    "fmin": np.fmin,
    "fmax": np.fmax,
    "hypot": np.hypot,
    "copysign": np.copysign,
    "fdim": lambda a, b: np.where(a > b, a - b, 0.0),
    "nextafter": np.nextafter,
    "fast_pow": np.power,
    "fast_fdivide": np.divide,
    "fdivide": np.divide,
    "ldexp": lambda a, b: np.ldexp(a, b.astype(np.int64)),
}
_ROUNDED: dict[str, Callable] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "sqrt": np.sqrt,
    "rcp": lambda x: 1.0 / x,
}
_PREDICATES: dict[str, Callable] = {
    "isnan": np.isnan,
    "isinf": np.isinf,
    "finite": np.isfinite,
    "isfinite": np.isfinite,
    "signbit": np.signbit,
}


def _int_fn(name: str) -> Callable | None:
    def clz(ret, tys, x):
        bits = x.dtype.itemsize * 8
        u = x.view(np.dtype(f"uint{bits}")).astype(np.uint64)
        width = np.zeros(u.shape, dtype=np.int32)
        for b in range(bits):
            width = np.where(u >> np.uint64(b) != 0, b + 1, width)
        return (bits - width).astype(np.int32)

    def popc(ret, tys, x):
        u = x.view(np.dtype(f"uint{x.dtype.itemsize * 8}")).astype(np.uint64)
        return np.bitwise_count(u).astype(np.int32)

    def ffs(ret, tys, x):
        u = x.view(np.dtype(f"uint{x.dtype.itemsize * 8}")).astype(np.uint64)
        low = u & (~u + np.uint64(1))
        return np.where(
            u == 0, 0, np.log2(np.where(low == 0, 1, low).astype(np.float64)).astype(np.int32) + 1
        )

    def brev(ret, tys, x):
        bits = x.dtype.itemsize * 8
        u = x.view(np.dtype(f"uint{bits}")).astype(np.uint64)
        out = np.zeros(u.shape, dtype=np.uint64)
        for b in range(bits):
            out |= ((u >> np.uint64(b)) & np.uint64(1)) << np.uint64(bits - 1 - b)
        return out.astype(np.dtype(f"uint{bits}")).view(x.dtype)

    def mulhi(ret, tys, a, b):
        from ...engine.ops import umulhi

        if a.dtype.kind == "u":
            return umulhi(a, b)
        wide = a.astype(np.int64) * b.astype(np.int64) if a.dtype.itemsize == 4 else None
        if wide is None:
            return umulhi(a, b)
        return (wide >> 32).astype(a.dtype)

    return {
        "clz": clz,
        "clzll": clz,
        "popc": popc,
        "popcll": popc,
        "ffs": ffs,
        "ffsll": ffs,
        "brev": brev,
        "brevll": brev,
        "mulhi": mulhi,
        "umulhi": mulhi,
        "mul64hi": mulhi,
        "umul64hi": mulhi,
    }.get(name)


def _float_fn(table: dict, name: str) -> Callable | None:
    fn = table.get(name)
    if fn is None:
        return None

    def run(ret, tys, *xs):
        with np.errstate(all="ignore"):
            out = fn(*(_f64(t, x) for t, x in zip(tys, xs, strict=False)))
        return nx.from_float(np.asarray(out, dtype=np.float64), ret)

    return run


def lookup(symbol: str) -> Callable | None:
    """The implementation of libdevice ``symbol`` as ``fn(ret_type, arg_types, *arrays)``, or None."""
    name = symbol.removeprefix("__nv_").removeprefix("__ocml_")
    name = name.rsplit("_f32", 1)[0].rsplit("_f64", 1)[0]
    for candidate in (name, name[:-1] if name.endswith("f") else None):
        if not candidate:
            continue
        if candidate.startswith(("f", "d")) and "_r" in candidate:
            base, mode = candidate[1:].rsplit("_", 1)
            if base in _ROUNDED and mode in ("rn", "rz", "ru", "rd"):
                op = _ROUNDED[base]

                def rounded(ret, tys, *xs, op=op, mode=mode):
                    with np.errstate(all="ignore"):
                        exact = op(*(_f64(t, x) for t, x in zip(tys, xs, strict=False)))
                    return _directed(np.asarray(exact, dtype=np.float64), ret, mode)

                return rounded
        if candidate == "fma" or candidate.startswith("fma_r"):
            mode = candidate.split("_", 1)[1] if "_" in candidate else "rn"
            if mode == "rn":
                return lambda ret, tys, a, b, c: nx.fma(a, b, c, ret)
        if candidate in _PREDICATES:
            pred = _PREDICATES[candidate]
            return lambda ret, tys, x, pred=pred: pred(_f64(tys[0], x)).astype(nx.storage_dtype(ret))
        for table in (_UNARY, _BINARY):
            fn = _float_fn(table, candidate)
            if fn is not None:
                return fn
        fn = _int_fn(candidate)
        if fn is not None:
            return fn
    return None
