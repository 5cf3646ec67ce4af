"""The op table: one neutral ``Op`` enum, one rule record per op, and the one ``apply`` step.

A frontend translates its DSL's operations into ``apply(launch, Op.X, *values, **params)``. The
rule of an op holds each of its interpretations:

* ``value``: the pure array function ``fn(ins, out, *arrays, **params)`` (:mod:`arith`,
  :mod:`mathfns`, the layout functions below);
* ``factored``: the op on factored values (per-program scalar + shared block, :mod:`factored`),
  tried first so addresses stay cheap to prove;
* ``taint``: how lanes computed from wrapped int32 arithmetic propagate (when a client needs it);
* ``result``: the result dtype when the caller does not say (the first operand's by default);
* ``provenance``: whether a pointer result keeps the tensor its operand pointed into;
* ``shape``: the result's per-program shape from the operands' (also when values are skipped);
* ``compute``: whether the op is arithmetic a profiler should count (an ``elementwise`` record).

:func:`apply` does, for every op alike: skip propagation (a demand-driven run's skipped operands
make a skipped result), the factored form, the value, the memory budget, the expression-graph node
and the overflow taint. Adding an elementwise op is one :class:`Op` member plus one rule here.
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..ir import Node, OpKind
from . import arith, contraction, dtypes, factored, mathfns
from . import numerics as nx
from .dtypes import DType
from .memory import UNKNOWN
from .values import Value, common_batch


class Op(str, enum.Enum):
    """Every elementwise, cast and layout operation the engine knows, by neutral name."""

    # arithmetic
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    REM = "rem"
    NEG = "neg"
    ABS = "abs"
    MIN = "min"  # floats: the number when one operand is NaN (IEEE minNum)
    MAX = "max"
    MINIMUM = "minimum"  # floats: NaN when either operand is NaN
    MAXIMUM = "maximum"
    FMA = "fma"
    CLAMP = "clamp"
    MULHI = "mulhi"
    # bits
    AND = "and"
    OR = "or"
    XOR = "xor"
    SHL = "shl"
    SHR = "shr"
    CLZ = "clz"
    POPC = "popc"
    FFS = "ffs"
    BREV = "brev"
    # comparisons and selection
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    SELECT = "select"
    ISNAN = "isnan"
    ISINF = "isinf"
    ISFINITE = "isfinite"
    SIGNBIT = "signbit"
    # math
    EXP = "exp"
    EXP2 = "exp2"
    EXP10 = "exp10"
    EXPM1 = "expm1"
    LOG = "log"
    LOG2 = "log2"
    LOG10 = "log10"
    LOG1P = "log1p"
    SIN = "sin"
    COS = "cos"
    TAN = "tan"
    ASIN = "asin"
    ACOS = "acos"
    ATAN = "atan"
    SINH = "sinh"
    COSH = "cosh"
    TANH = "tanh"
    ASINH = "asinh"
    ACOSH = "acosh"
    ATANH = "atanh"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    CBRT = "cbrt"
    RCBRT = "rcbrt"
    RCP = "rcp"
    FLOOR = "floor"
    CEIL = "ceil"
    TRUNC = "trunc"
    ROUND = "round"
    RINT = "rint"
    ERF = "erf"
    ERFC = "erfc"
    ERFINV = "erfinv"
    ERFCINV = "erfcinv"
    LGAMMA = "lgamma"
    TGAMMA = "tgamma"
    NORMCDF = "normcdf"
    NORMCDFINV = "normcdfinv"
    J0 = "j0"
    J1 = "j1"
    Y0 = "y0"
    Y1 = "y1"
    SINPI = "sinpi"
    COSPI = "cospi"
    SATURATE = "saturate"
    LOGB = "logb"
    POW = "pow"
    ATAN2 = "atan2"
    REMAINDER = "remainder"
    HYPOT = "hypot"
    COPYSIGN = "copysign"
    FDIM = "fdim"
    NEXTAFTER = "nextafter"
    LDEXP = "ldexp"
    # conversions
    CAST = "cast"
    BITCAST = "bitcast"
    PTR_TO_INT = "ptr_to_int"
    INT_TO_PTR = "int_to_ptr"
    PTR_ADD = "ptr_add"
    # layout
    BROADCAST = "broadcast"
    EXPAND_DIMS = "expand_dims"
    RESHAPE = "reshape"
    PERMUTE = "permute"
    CAT = "cat"
    JOIN = "join"
    SPLIT = "split"
    GATHER = "gather"
    HISTOGRAM = "histogram"
    SLICE = "slice"  # a static region of a block (on-chip tile indexing: NKI's ``t[:, 0:128]``)
    INSERT = "insert"  # a block written into a static region of another (NKI's ``t[:, 0:128] = v``)


class Taint(enum.Enum):
    """How lanes that depend on wrapped int32 arithmetic propagate through an op."""

    ELEMENTWISE = "elementwise"  # a result lane is tainted when an operand lane it reads is
    LAYOUT = "layout"  # the op moves lanes: move the taint the same way
    WRAPPING = "wrapping"  # elementwise, and int32 add/sub/mul also taint the lanes they wrap


class Rule(NamedTuple):
    """Everything the engine knows about one op (see the module docstring). Immutable; a named tuple,
    not a frozen dataclass, whose generated methods cost every first launch ~0.5 ms to create."""

    value: Callable[..., np.ndarray]
    factored: Callable[..., Any] | None = None
    taint: Taint = Taint.ELEMENTWISE
    result: Callable[[tuple[DType, ...], dict], DType] | None = None
    provenance: str = "none"  # "none", "first" (operand 0's), "shared" (when every operand agrees)
    compute: bool = True
    shape: Callable[[list[tuple[int, ...]], dict], tuple[int, ...]] | None = None  # None: broadcast
    numerics: bool = False  # the value function takes ``gpu``: the launch computes the GPU's bits
    libdevice: bool = False  # it also takes ``libdevice``: the release whose libdevice it follows


# --------------------------------------------------------------------------- layout values


def broadcast(ins, out, a: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """A scalar or block broadcast to ``shape`` (lower-rank operands gain leading size-1 axes)."""
    shape = tuple(shape)
    missing = len(shape) - (a.ndim - 1)
    if missing:
        a = a.reshape(a.shape[0], *([1] * missing), *a.shape[1:])
    if a.shape[1:] == shape:  # nothing to broadcast: a read-only view, as np.broadcast_to gives
        view = a.view()
        view.flags.writeable = False
        return view
    return np.broadcast_to(a, (a.shape[0], *shape))


def expand_dims(ins, out, a: np.ndarray, axis: int) -> np.ndarray:
    """Insert a size-1 block axis at ``axis``."""
    return np.expand_dims(a, axis + 1)


def reshape(ins, out, a: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Reshape the block (row-major); ``shape=()`` makes a scalar."""
    return a.reshape(a.shape[0], *shape)


def permute(ins, out, a: np.ndarray, perm: Sequence[int]) -> np.ndarray:
    """Permute block axes; the program axis stays first."""
    return np.transpose(a, (0, *[p + 1 for p in perm]))


def cat(ins, out, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Concatenate two blocks along the first block axis."""
    return np.concatenate(common_batch(a, b), axis=1)


def join(ins, out, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Stack two blocks along a new last axis."""
    return np.stack(common_batch(a, b), axis=-1)


def split(ins, out, a: np.ndarray, index: int) -> np.ndarray:
    """Half ``index`` (0 or 1) of a block whose last axis has size 2."""
    return a[..., index]


def gather(ins, out, src: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """Pick along ``axis`` by index."""
    src, indices = common_batch(src, indices)
    return np.take_along_axis(src, indices.astype(np.int64), axis=axis + 1)


def histogram(ins, out, data: np.ndarray, *mask: np.ndarray, bins: int) -> np.ndarray:
    """Per-program histogram over [0, bins); values outside (and masked-off lanes) are dropped."""
    d = data.reshape(data.shape[0], -1).astype(np.int64)
    valid = (d >= 0) & (d < bins)
    if mask:
        m = mask[0]
        valid &= np.broadcast_to(m.reshape(m.shape[0], -1), d.shape)
    rows = np.broadcast_to(np.arange(d.shape[0])[:, None], d.shape)
    flat = (rows * bins + d)[valid]
    return np.bincount(flat, minlength=d.shape[0] * bins).reshape(d.shape[0], bins).astype(np.int32)


def _region(index: tuple) -> tuple:
    """A static block index (ints, slices, integer arrays) with the program axis in front."""
    return (slice(None), *index)


def take(ins, out, a: np.ndarray, index: tuple) -> np.ndarray:
    """The static region ``index`` of every program's block (NumPy basic and integer-array indexing)."""
    return a[_region(index)]


def insert(ins, out, dst: np.ndarray, src: np.ndarray, index: tuple) -> np.ndarray:
    """A copy of ``dst`` with region ``index`` of every program's block replaced by ``src`` (already
    shaped like the region)."""
    dst, src = common_batch(dst, src)
    result = np.array(dst, copy=True)
    result[_region(index)] = src
    return result


# --------------------------------------------------------------------------- conversions


def cast(ins, out, a: np.ndarray, rounding: str = "rn") -> np.ndarray:
    """Convert between any two scalar types as the GPU does.

    Integers wrap or extend by the source's signedness; float to integer truncates and saturates
    (NaN gives 0); float to float rounds to nearest even (``rounding="rz"``: toward zero), fp8
    saturating; integer to float rounds to nearest even.
    """
    src = ins[0]
    if src.is_float and out.is_float:
        return nx.convert_float(a, src, out, rounding == "rz")
    if src.is_float:
        return nx.float_to_int(nx.to_float32(a, src) if src.is_low_float else a, out.storage)
    if out.is_float:
        if a.dtype == np.bool_:
            a = a.astype(np.uint8)
        if out.name in ("fp32", "fp64", "fp16"):
            return a.astype(out.storage)
        return nx.from_float(a.astype(np.float64), out)
    if out.is_bool:
        return a != 0
    return a.astype(out.storage)


def bitcast(ins, out, a: np.ndarray) -> np.ndarray:
    """Reinterpret the bits."""
    return a.view(out.storage)


def ptr_to_int(ins, out, a: np.ndarray) -> np.ndarray:
    """A pointer's real byte address as an integer."""
    return a.view(np.int64).astype(out.storage)


def int_to_ptr(ins, out, a: np.ndarray) -> np.ndarray:
    """An integer as a byte address (its tensor is found later, by address)."""
    return a.astype(np.int64).view(np.uint64)


def ptr_add(ins, out, p: np.ndarray, o: np.ndarray) -> np.ndarray:
    """ptr + offset elements (byte arithmetic wraps like the GPU's 64-bit add)."""
    return p + (o.astype(np.int64) * out.pointee.itemsize).view(np.uint64)


# --------------------------------------------------------------------------- result shapes


def _given_shape(shapes, params) -> tuple[int, ...]:
    return tuple(params["shape"])


def _expanded_shape(shapes, params) -> tuple[int, ...]:
    s = list(shapes[0])
    s.insert(params["axis"], 1)
    return tuple(s)


def _permuted_shape(shapes, params) -> tuple[int, ...]:
    return tuple(shapes[0][p] for p in params["perm"])


def _cat_shape(shapes, params) -> tuple[int, ...]:
    a, b = shapes
    return (a[0] + b[0], *a[1:]) if a else ()


def _join_shape(shapes, params) -> tuple[int, ...]:
    return (*np.broadcast_shapes(*shapes), 2)


def _split_shape(shapes, params) -> tuple[int, ...]:
    return tuple(shapes[0][:-1])


def _gather_shape(shapes, params) -> tuple[int, ...]:
    return tuple(shapes[1])


def _histogram_shape(shapes, params) -> tuple[int, ...]:
    return (params["bins"],)


def _slice_shape(shapes, params) -> tuple[int, ...]:
    return np.broadcast_to(np.empty((), dtype=bool), shapes[0])[params["index"]].shape


def _first_shape(shapes, params) -> tuple[int, ...]:
    return tuple(shapes[0])


def result_shape(rule: Rule, inputs: Sequence[Value], params: dict) -> tuple[int, ...]:
    """The per-program shape of an op's result, from its operands' shapes."""
    shapes = [v.shape for v in inputs]
    if rule.shape is not None:
        return rule.shape(shapes, params)
    return tuple(np.broadcast_shapes(*shapes)) if shapes else ()


# --------------------------------------------------------------------------- the table


def _bool_result(ins, params) -> DType:
    return dtypes.BOOL


def _cast_result(ins, params) -> DType:
    raise TypeError("a conversion needs its result type: apply(..., to=dtype)")


def _int32_result(ins, params) -> DType:
    return dtypes.INT32


def _float_or_int(float_fn: Callable, int_fn: Callable) -> Callable:
    return arith.by_kind(arith.float_fn(float_fn), int_fn)


def _approximate(name: str, approx_fn: Callable) -> Callable:
    """A math function with the GPU's fast form (``approx=True``) and libdevice's accurate one
    (float64, rounded once). The fast form is what the approximate instruction computes: from the
    special function unit's recorded tables with ``sfu`` (:data:`_ON_SFU`, bit-exact), else emulated
    where known (:data:`_GPU_FAST`) or within its bound in the operand's float type. Functions
    whose fp32 form on the GPU is a libdevice sequence in both forms (:data:`_LIBDEVICE`) follow
    it, and those whose accurate form is one (:data:`_LIBDEVICE_ACCURATE`: libdevice's ``exp``).
    "ideal" numerics (``gpu=False``) take the accurate form."""
    accurate = mathfns.precise(mathfns.UNARY[name])
    gpu_fast = _GPU_FAST.get(name)
    fast = arith.float_fn(approx_fn) if gpu_fast is None else gpu_fast
    tables = _ON_SFU.get(name, fast)
    on_gpu = _LIBDEVICE.get(name)
    on_gpu_accurate = _LIBDEVICE_ACCURATE.get(name, on_gpu)

    def run(
        ins, out, a, approx: bool = True, gpu: bool = True, sfu: bool = False,
        libdevice: str = nx.DEFAULT_LIBDEVICE,
    ):  # fmt: skip
        sequence = on_gpu if approx else on_gpu_accurate
        if gpu and sequence is not None:
            return sequence(ins, out, a, sfu, libdevice)
        if not (approx and gpu):
            return accurate(ins, out, a)
        return tables(ins, out, a) if sfu else fast(ins, out, a)

    return run


def _fp32_only(fp32: Callable, accurate: Callable) -> Callable:
    """A math function whose float32 form is ``fp32`` (the GPU's instruction, emulated); other float
    types take ``accurate`` in float64, rounded once."""

    def run(ins, out, a):
        if out.name != "fp32":
            return mathfns.precise(accurate)(ins, out, a)
        with np.errstate(all="ignore"):
            return fp32(np.asarray(a, np.float32))

    return run


def _emulated(fn: Callable, ftz: bool = False) -> Callable[[np.ndarray], np.ndarray]:
    """A float32 approximate instruction emulated as ``fn`` in float64, rounded once (within the
    instruction's ulp bound of it; ``ftz``: subnormal inputs and results flushed to zero)."""
    flush = nx.flush_subnormals if ftz else (lambda x: x)

    def run(x: np.ndarray) -> np.ndarray:
        y = np.asarray(fn(flush(x)))
        return flush(y if y.dtype == np.float32 else nx.from_float(y, dtypes.FP32))

    return run


def _on_first_call(module: str, name: str) -> Callable:
    """The engine's ``module.name``, its module imported at the first call: libdevice's sequences
    (:mod:`.libdevice`) and the special function unit's tables (:mod:`.sfu`) serve only kernels that
    call math functions, and importing them costs every first launch ~0.7 ms."""

    def call(*args: Any) -> Any:
        return getattr(importlib.import_module(f"{__package__}.{module}"), name)(*args)

    return call


def _exp_f32(x: np.ndarray) -> np.ndarray:
    """``ex2.approx.f32`` of ``x * log2(e)`` rounded to float32, in one new array."""
    y = np.multiply(x, nx.LOG2E, dtype=np.float32)
    return np.exp2(y, out=y)


def _gpu_fp32(fn: Callable, ftz: bool = False) -> Callable:
    """:func:`_emulated` for float32, ``fn`` rounded once for the other float types."""
    return _fp32_only(_emulated(fn, ftz), fn)


#: Triton's fp32 lowering on NVIDIA: tl.exp is ``ex2.approx.f32`` of ``x * log2(e)`` rounded to
#: float32; tl.exp2 ``ex2.approx.ftz.f32``; tl.sqrt and tl.rsqrt ``sqrt/rsqrt.approx.ftz.f32``
_EX2_MODEL = _emulated(lambda x: np.exp2(x.astype(np.float64)), ftz=True)
_GPU_FAST: dict[str, Callable] = {
    "exp": _gpu_fp32(_exp_f32),
    "exp2": _fp32_only(_EX2_MODEL, np.exp2),
    "sqrt": _gpu_fp32(lambda x: np.sqrt(x.astype(np.float64)), ftz=True),
    "rsqrt": _gpu_fp32(lambda x: 1.0 / np.sqrt(x.astype(np.float64)), ftz=True),
}

#: the special function unit's instructions libdevice's sequences call: (bounded model, recorded tables)
_SFU_CALLS: dict[str, tuple[Callable, Callable]] = {
    "ex2": (_EX2_MODEL, _on_first_call("sfu", "ex2")),
    "rcp": (_emulated(lambda x: 1.0 / x.astype(np.float64), ftz=True), _on_first_call("sfu", "rcp")),
}


def _sequence(fp32: Callable, accurate: Callable, *calls: str, by_release: bool = False) -> Callable:
    """A libdevice function whose float32 form is the sequence ``fp32(x, *instructions[, release])``
    (:mod:`.libdevice`), calling the special function unit's ``calls`` (the tables with ``sfu``, else
    the models: :data:`_SFU_CALLS`); other float types take ``accurate`` in float64, rounded once."""

    def run(ins, out, a, sfu: bool, release: str):
        if out.name != "fp32":
            return mathfns.precise(accurate)(ins, out, a)
        instructions = [_SFU_CALLS[c][1 if sfu else 0] for c in calls]
        with np.errstate(all="ignore"):
            return fp32(np.asarray(a, np.float32), *instructions, *((release,) if by_release else ()))

    return run


#: fp32 functions that are libdevice sequences on the GPU, the plain form and libdevice's alike
#: (``__nv_sinf``, ...), reproduced operation for operation: bit-exact (those calling the special
#: function unit with ``gpu_sfu="tables"``)
_LIBDEVICE: dict[str, Callable] = {
    "sin": _sequence(_on_first_call("libdevice", "sinf"), np.sin),
    "cos": _sequence(_on_first_call("libdevice", "cosf"), np.cos),
    "log": _sequence(_on_first_call("libdevice", "logf"), np.log),
    "log2": _sequence(_on_first_call("libdevice", "log2f"), np.log2),
    "erf": _sequence(_on_first_call("libdevice", "erff"), mathfns.UNARY["erf"], "ex2", by_release=True),
}
#: libdevice sequences of the accurate form only (``tl.exp`` is ``ex2.approx``; libdevice's ``exp``
#: is ``__nv_expf``)
_LIBDEVICE_ACCURATE: dict[str, Callable] = {
    "exp": _sequence(_on_first_call("libdevice", "expf"), np.exp, "ex2")
}
_TANH = _sequence(_on_first_call("libdevice", "tanhf"), mathfns.UNARY["tanh"], "ex2", "rcp")


def _tanh(ins, out, a, gpu: bool = True, sfu: bool = False, libdevice: str = nx.DEFAULT_LIBDEVICE):
    """libdevice's ``tanh``: ``__nv_tanhf`` in "gpu" numerics, else correctly rounded."""
    return _TANH(ins, out, a, sfu, libdevice) if gpu else mathfns.precise(mathfns.UNARY["tanh"])(ins, out, a)


#: the same instructions from the special function unit's tables recorded on the H200 (bit-exact;
#: ``gpu_sfu="tables"``; in C an instruction costs about its model, but its table lookups miss the cache)
_ON_SFU: dict[str, Callable] = {
    "exp": _fp32_only(_on_first_call("sfu", "exp"), np.exp),
    "exp2": _fp32_only(_on_first_call("sfu", "ex2"), np.exp2),
    "sqrt": _fp32_only(_on_first_call("sfu", "sqrt"), np.sqrt),
    "rsqrt": _fp32_only(_on_first_call("sfu", "rsqrt"), lambda x: 1.0 / np.sqrt(x)),
}


def _with_rounding(float_impl: Callable, name: str) -> Callable:
    """Float arithmetic in the usual way, or rounded in a named direction (libdevice's ``_rz`` forms)."""
    directed = mathfns.rounded(mathfns.ROUNDED[name])

    def run(ins, out, *arrays, rounding: str | None = None, **params):
        if rounding is not None:
            return directed(ins, out, *arrays, rounding=rounding)
        return float_impl(ins, out, *arrays, **params)

    return run


def _div(ins, out, a, b, signed=None, approx=False, rounding=None, full=False, gpu=True, sfu=False):
    """``a / b``; ``full``: Triton's fp32 ``/`` (``div.full.f32``), which "gpu" numerics with ``sfu``
    (the recorded tables) compute as the H200 does (:func:`.sfu.div_full`); else correctly rounded,
    within the instruction's 2 ulp."""
    if ins[0].is_float:
        if rounding is not None:
            return mathfns.rounded(mathfns.ROUNDED["div"])(ins, out, a, b, rounding=rounding)
        if full and gpu and sfu and out.name == "fp32":
            from .sfu import div_full

            return div_full(a, b)
        return arith.float_fn(np.divide)(ins, out, a, b)
    return arith.int_div(ins, out, a, b, signed)


def _rem(ins, out, a, b, signed=None):
    if ins[0].is_float:
        return arith.float_fn(np.fmod)(ins, out, a, b)
    return arith.int_rem(ins, out, a, b, signed)


def _sqrt(ins, out, a, approx=True, rounding=None, gpu=True, sfu=False):
    if rounding is not None:
        return mathfns.rounded(mathfns.ROUNDED["sqrt"])(ins, out, a, rounding=rounding)
    return _approximate("sqrt", np.sqrt)(ins, out, a, approx, gpu, sfu)


def _rcp(ins, out, a, rounding="rn"):
    return mathfns.rounded(mathfns.ROUNDED["rcp"])(ins, out, a, rounding=rounding)


def _rsqrt(x):
    return (1.0 / np.sqrt(x.astype(np.float64))).astype(x.dtype)


def _erf(x):
    from scipy import special

    return special.erf(x.astype(np.float64)).astype(x.dtype)


def _fma(ins, out, a, b, c, rounding=None):
    return arith.fma(ins, out, a, b, c)


_ARITH = {
    Op.ADD: Rule(
        _with_rounding(_float_or_int(np.add, arith.wrapping(np.add)), "add"),
        factored=factored.add,
        taint=Taint.WRAPPING,
    ),
    Op.SUB: Rule(
        _with_rounding(_float_or_int(np.subtract, arith.wrapping(np.subtract)), "sub"),
        factored=factored.sub,
        taint=Taint.WRAPPING,
    ),
    Op.MUL: Rule(
        _with_rounding(_float_or_int(np.multiply, arith.wrapping(np.multiply)), "mul"),
        factored=factored.mul,
        taint=Taint.WRAPPING,
    ),
    Op.DIV: Rule(_div, numerics=True),
    Op.REM: Rule(_rem),
    Op.NEG: Rule(arith.by_kind(arith.float_neg, arith.int_neg)),
    Op.ABS: Rule(arith.by_kind(arith.float_abs, arith.int_abs)),
    Op.MIN: Rule(_float_or_int(np.fmin, arith.int_minmax(np.minimum))),
    Op.MAX: Rule(_float_or_int(np.fmax, arith.int_minmax(np.maximum))),
    Op.MINIMUM: Rule(_float_or_int(np.minimum, arith.int_minmax(np.minimum))),
    Op.MAXIMUM: Rule(_float_or_int(np.maximum, arith.int_minmax(np.maximum))),
    Op.FMA: Rule(_fma),
    Op.CLAMP: Rule(arith.float_clamp),
    Op.MULHI: Rule(arith.mulhi),
    Op.AND: Rule(lambda ins, out, a, b: np.bitwise_and(a, b), factored=factored.conjoin),
    Op.OR: Rule(lambda ins, out, a, b: np.bitwise_or(a, b)),
    Op.XOR: Rule(lambda ins, out, a, b: np.bitwise_xor(a, b)),
    Op.SHL: Rule(arith.shift_left),
    Op.SHR: Rule(arith.shift_right),
    Op.CLZ: Rule(mathfns.clz, result=_int32_result),
    Op.POPC: Rule(mathfns.popc, result=_int32_result),
    Op.FFS: Rule(mathfns.ffs, result=_int32_result),
    Op.BREV: Rule(mathfns.brev),
    Op.SELECT: Rule(arith.select, provenance="shared_values", result=lambda ins, params: ins[1]),
}

_COMPARE = {
    Op(name): Rule(arith.compare(name), factored=factored.compare, result=_bool_result)
    for name in ("eq", "ne", "lt", "le", "gt", "ge")
}

_PREDICATES = {
    Op.ISNAN: Rule(mathfns.predicate(mathfns.PREDICATES["isnan"]), result=_bool_result),
    Op.ISINF: Rule(mathfns.predicate(mathfns.PREDICATES["isinf"]), result=_bool_result),
    Op.ISFINITE: Rule(mathfns.predicate(mathfns.PREDICATES["isfinite"]), result=_bool_result),
    Op.SIGNBIT: Rule(mathfns.predicate(mathfns.PREDICATES["signbit"]), result=_bool_result),
}

#: math functions with a fast (approximate-instruction) form on the GPU: tl.exp, tl.sqrt, ...
_FAST_MATH = {
    Op.EXP: np.exp,
    Op.EXP2: np.exp2,
    Op.LOG: np.log,
    Op.LOG2: np.log2,
    Op.SIN: np.sin,
    Op.COS: np.cos,
    Op.RSQRT: _rsqrt,
    Op.ERF: _erf,
    Op.FLOOR: np.floor,
    Op.CEIL: np.ceil,
}
_MATH = {op: Rule(_approximate(op.value, fn), numerics=True, libdevice=True) for op, fn in _FAST_MATH.items()}
_MATH[Op.TANH] = Rule(_tanh, numerics=True, libdevice=True)
_MATH[Op.SQRT] = Rule(_sqrt, numerics=True)
_MATH[Op.RCP] = Rule(_rcp)
#: libdevice-set functions computed accurately only (fmod/fmin/fmax are REM/MIN/MAX above)
_MATH.update(
    {
        Op(name): Rule(mathfns.precise(fn))
        for name, fn in {**mathfns.UNARY, **mathfns.BINARY}.items()
        if name not in ("fmod", "fmin", "fmax") and Op(name) not in _MATH
    }
)

_CONVERSIONS = {
    Op.CAST: Rule(cast, factored=factored.widen, result=_cast_result),
    Op.BITCAST: Rule(bitcast, result=_cast_result, provenance="first", compute=False),
    Op.PTR_TO_INT: Rule(ptr_to_int, result=_cast_result, compute=False),
    Op.INT_TO_PTR: Rule(int_to_ptr, result=_cast_result, compute=False),
    Op.PTR_ADD: Rule(ptr_add, factored=factored.ptr_add, provenance="first"),
}


def _layout(value: Callable, shape: Callable) -> Rule:
    return Rule(
        value, factored=factored.layout, taint=Taint.LAYOUT, provenance="first", compute=False, shape=shape
    )


_LAYOUT = {
    Op.BROADCAST: _layout(broadcast, _given_shape),
    Op.EXPAND_DIMS: _layout(expand_dims, _expanded_shape),
    Op.RESHAPE: _layout(reshape, _given_shape),
    Op.PERMUTE: _layout(permute, _permuted_shape),
    Op.CAT: Rule(cat, compute=False, shape=_cat_shape),
    Op.JOIN: Rule(join, provenance="shared", compute=False, shape=_join_shape),
    Op.SPLIT: Rule(split, provenance="first", compute=False, shape=_split_shape),
    Op.GATHER: Rule(gather, compute=False, shape=_gather_shape),
    Op.HISTOGRAM: Rule(histogram, result=_int32_result, shape=_histogram_shape),
    Op.SLICE: Rule(take, taint=Taint.LAYOUT, provenance="first", compute=False, shape=_slice_shape),
    Op.INSERT: Rule(insert, taint=Taint.LAYOUT, compute=False, shape=_first_shape),
}

RULES: dict[Op, Rule] = {**_ARITH, **_COMPARE, **_PREDICATES, **_MATH, **_CONVERSIONS, **_LAYOUT}

#: each op's name (an enum's ``.value`` is a descriptor call; this is the hot path's lookup)
_NAMES: dict[Op, str] = {op: op.value for op in Op}
_WIDE = {Op.ADD: np.add, Op.SUB: np.subtract, Op.MUL: np.multiply}
#: float ops the GPU compiler may fuse with a multiply operand (contraction.py)
_CONTRACTIBLE = (Op.ADD, Op.SUB)


# --------------------------------------------------------------------------- apply


def _provenance(rule: Rule, inputs: Sequence[Value]) -> int:
    if rule.provenance == "first":
        return inputs[0].prov
    if rule.provenance == "shared":
        return inputs[0].prov if all(v.prov == inputs[0].prov for v in inputs) else UNKNOWN
    if rule.provenance == "shared_values":  # select: the two alternatives, not the condition
        return inputs[1].prov if inputs[1].prov == inputs[2].prov else UNKNOWN
    return UNKNOWN


def skipped_result(
    launch: Any, name: str, out: DType, inputs: Sequence[Any], shape: tuple[int, ...] = ()
) -> Value | None:
    """The skipped result of an op when a demand-driven run skipped any operand, else None."""
    skipped = [v.skipped for v in inputs if isinstance(v, Value) and v.is_skipped]
    if not skipped:
        return None
    return Value(None, out, node(launch, name, inputs), skipped=frozenset().union(*skipped), shape=shape)


def node(launch: Any, name: str, inputs: Sequence[Any]) -> Node:
    """The expression-graph node of an op at the current site."""
    parents = tuple([n for v in inputs if (n := getattr(v, "node", None)) is not None])
    return Node(name, launch.site(), parents)


def apply(
    launch: Any, op: Op, *inputs: Value, out: DType | None = None, record: bool = True, **params: Any
) -> Value:
    """Run ``op`` on engine values for every program of the batch; the one step every op takes.

    ``out`` (or ``to``, for conversions) is the result dtype; by default the op's rule decides.
    ``record=False`` for the engine's own bookkeeping (predication's merges), which is not the
    kernel's work and emits no compute record.
    """
    launch.ops += 1
    rule = RULES[op]
    name = _NAMES[op]
    ins = tuple([v.dtype for v in inputs])
    if "to" in params:
        out = params.pop("to")
    if out is None:
        out = rule.result(ins, params) if rule.result is not None else ins[0]
    if any([v.is_skipped for v in inputs]):
        skipped = skipped_result(launch, name, out, inputs, result_shape(rule, inputs, params))
        if record and rule.compute and launch.records_compute:
            launch.emit_compute(OpKind.ELEMENTWISE, skipped, inputs, op=name)
        return skipped
    prov = _provenance(rule, inputs) if rule.provenance != "none" else UNKNOWN
    if rule.factored is not None and launch.factoring:
        lazy = rule.factored(launch, op, inputs, out, **params)
        if lazy is not None:
            result = Value(None, out, node(launch, name, inputs), prov, lazy=lazy)
            if record and rule.compute and launch.records_compute:
                launch.emit_compute(OpKind.ELEMENTWISE, result, inputs, op=name)
            return result
    arrays = [v.data for v in inputs]
    data = None
    for v in inputs:
        if v.product is not None:
            v.product.uses += 1
    if op in _CONTRACTIBLE and "rounding" not in params and launch.numerics.contracts(name, out):
        data = contraction.fused(name, inputs, out)
    if data is None:
        if rule.numerics:
            params = {**params, "gpu": launch.numerics.gpu, "sfu": launch.numerics.sfu == "tables"}
            if rule.libdevice:
                params["libdevice"] = launch.numerics.libdevice
        data = rule.value(ins, out, *arrays, **params)
    launch.budget(data)
    result = Value(data, out, node(launch, name, inputs), prov)
    if op is Op.MUL and "rounding" not in params and launch.numerics.contracts("add", out):
        result.product = contraction.note_product(launch, inputs[0], inputs[1], out)
    if launch.track_overflow:
        _taint(rule, op, inputs, arrays, result, params)
    if record and rule.compute and launch.records_compute:
        launch.emit_compute(OpKind.ELEMENTWISE, result, inputs, op=name)
    return result


def _taint(rule: Rule, op: Op, inputs: Sequence[Value], arrays: list, result: Value, params: dict) -> None:
    """Carry wrapped-lane masks into ``result``; int32 add/sub/mul add the lanes they wrap."""
    if any(v.wrapped is not None for v in inputs):
        masks = [
            v.wrapped if v.wrapped is not None else np.zeros(a.shape, dtype=bool)
            for v, a in zip(inputs, arrays, strict=True)
        ]
        if rule.taint is Taint.LAYOUT:
            result.wrapped = np.asarray(
                rule.value((dtypes.BOOL,) * len(masks), dtypes.BOOL, *masks, **params)
            )
        else:
            shape = result.data.shape
            wrapped = np.zeros(shape, dtype=bool)
            for m in masks:
                try:
                    wrapped |= np.broadcast_to(m, shape)
                except ValueError:
                    continue
            result.wrapped = wrapped
    if rule.taint is Taint.WRAPPING and result.dtype.name == "int32":
        wide = _WIDE[op](arrays[0].astype(np.int64), arrays[1].astype(np.int64))
        wrapped = wide != result.data
        if wrapped.any():
            result.wrapped = wrapped if result.wrapped is None else result.wrapped | wrapped
            result.node = Node(result.node.op, result.node.site, result.node.inputs, wrapped=True)


#: a dot's multiply-adds that cost about what one element of an elementwise op costs (a matrix
#: product's inner loops run at BLAS speed, an elementwise op's at memory speed)
DOT_MACS_PER_ELEMENT = 8


def compute(
    launch: Any,
    kind: OpKind,
    inputs: Sequence[Value],
    out: DType,
    fn: Callable[..., np.ndarray],
    shape: tuple[int, ...],
    **attrs: Any,
) -> Value:
    """A non-elementwise compute op (dot, a frontend's special op): record, skip, value, budget, node.

    ``fn(*arrays)`` computes the result; ``shape`` is its per-program shape; ``attrs`` go on the
    compute record (a dot's ``k`` also weighs its work: multiply-adds per result element, at
    :data:`DOT_MACS_PER_ELEMENT` to an element of an elementwise op).
    """
    launch.ops += 1
    result = Value(None, out, node(launch, kind.value, inputs), shape=tuple(shape))
    if launch.records_compute:
        launch.emit_compute(kind, result, inputs, **attrs)
    skipped = skipped_result(launch, kind.value, out, inputs, tuple(shape))
    if skipped is not None:
        return skipped
    data = fn(*(v.data for v in inputs))
    launch.budget(data, max(1, attrs.get("k", 1) // DOT_MACS_PER_ELEMENT))
    result._data = data
    return result


# --------------------------------------------------------------------------- sources


def constant(value: Any, dtype: DType) -> Value:
    """A value the same for every program and lane."""
    return Value(np.array([value]).astype(dtype.storage), dtype, Node("const", None))


def all_ones(dtype: DType) -> Value:
    """Every bit set (True for int1)."""
    if dtype.is_bool:
        return constant(True, dtype)
    return Value(np.array([-1]).astype(np.int64).astype(dtype.storage), dtype, Node("const", None))


def program_id(launch: Any, axis: int) -> Value:
    """Each program's id along ``axis`` (factored when addresses may stay factored)."""
    n = Node(f"program_id({axis})", launch.site())
    pids = launch.pids
    if launch.factoring and pids.shape[0] > 1:
        return Value(None, dtypes.INT32, n, lazy=factored.per_program(pids[:, axis]))
    return Value(pids[:, axis].copy(), dtypes.INT32, n)


def num_programs(launch: Any, axis: int) -> Value:
    """The grid's size along ``axis`` (the same for every program)."""
    return Value(
        np.array([launch.grid[axis]], dtype=np.int32),
        dtypes.INT32,
        Node(f"num_programs({axis})", launch.site()),
    )


def arange(launch: Any, start: int, stop: int) -> Value:
    """``start, start + 1, ..., stop - 1`` as an int32 block, the same for every program."""
    return Value(np.arange(start, stop, dtype=np.int32)[None], dtypes.INT32, node(launch, "arange", ()))
