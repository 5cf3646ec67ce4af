"""libdevice symbols (``tl.extra.cuda.libdevice`` / ``tl.extra.libdevice``) as engine ops.

``__nv_expf`` is ``Op.EXP`` computed accurately (libdevice is not the fast instruction tl.exp
lowers to), ``__nv_fadd_rz`` is ``Op.ADD`` rounded toward zero, ``__nv_popc`` is ``Op.POPC``. The
math lives in the engine (:mod:`tilescope.engine.mathfns`); this is only the name map.
"""

from __future__ import annotations

from ...engine.ops import Op

#: libdevice names (after the __nv_ prefix and the f/_f32 suffix) that differ from the engine's
_ALIASES: dict[str, tuple[Op, dict]] = {
    "fmod": (Op.REM, {}),
    "fmin": (Op.MIN, {}),
    "fmax": (Op.MAX, {}),
    "fabs": (Op.ABS, {}),
    "nearbyint": (Op.RINT, {}),
    "powi": (Op.POW, {}),
    "fdivide": (Op.DIV, {}),
    "fast_fdivide": (Op.DIV, {}),
    "finite": (Op.ISFINITE, {}),
    "fma": (Op.FMA, {}),
    "fma_rn": (Op.FMA, {}),
    "clzll": (Op.CLZ, {}),
    "popcll": (Op.POPC, {}),
    "ffsll": (Op.FFS, {}),
    "brevll": (Op.BREV, {}),
    "umulhi": (Op.MULHI, {}),
    "mul64hi": (Op.MULHI, {}),
    "umul64hi": (Op.MULHI, {}),
}
#: rounded arithmetic: f<op>_<mode> / d<op>_<mode>
_ROUNDED = {"add": Op.ADD, "sub": Op.SUB, "mul": Op.MUL, "div": Op.DIV, "sqrt": Op.SQRT, "rcp": Op.RCP}
_MODES = ("rn", "rz", "ru", "rd")
#: ops whose plain form is the GPU's fast instruction: libdevice asks for the accurate one
_HAS_FAST_FORM = {
    Op.EXP,
    Op.EXP2,
    Op.LOG,
    Op.LOG2,
    Op.SIN,
    Op.COS,
    Op.SQRT,
    Op.RSQRT,
    Op.ERF,
    Op.FLOOR,
    Op.CEIL,
}


def _named(name: str) -> tuple[Op, dict] | None:
    if name in _ALIASES:
        return _ALIASES[name]
    if name.startswith(("f", "d")) and "_r" in name:
        base, mode = name[1:].rsplit("_", 1)
        if base in _ROUNDED and mode in _MODES:
            return _ROUNDED[base], {"rounding": mode}
    plain = name.removeprefix("fast_")
    try:
        op = Op(plain)
    except ValueError:
        return None
    return op, ({"approx": False} if op in _HAS_FAST_FORM else {})


def lookup(symbol: str) -> tuple[Op, dict] | None:
    """The engine op (and its parameters) of libdevice ``symbol``, or None."""
    name = symbol.removeprefix("__nv_").removeprefix("__ocml_")
    name = name.rsplit("_f32", 1)[0].rsplit("_f64", 1)[0]
    for candidate in (name, name[:-1] if name.endswith("f") else None, name.replace("f_r", "_r", 1)):
        if candidate:
            found = _named(candidate)
            if found is not None:
                return found
    return None
