"""Conversions and arithmetic as the GPU's generated code does them, on engine dtypes.

Arithmetic on bf16/fp16/fp8 is done in float32 and rounded once to the operand type, which is what
the GPU computes for add, sub, mul, div and sqrt (float32 carries more than 2p+2 bits, so the
double rounding is innocuous).

Conversions to narrower floats round to nearest even; fp8 conversions saturate to the largest
finite value (PTX ``cvt.rn.satfinite``), where ``ml_dtypes`` would give NaN or inf. fp8 formats are
encoded and decoded through 256-entry tables, so formats that ``ml_dtypes`` lacks (e4m3 with bias
15) take the same path as the others. The contract is written down in ``docs/numerics.md``.

A launch computes in one of two modes (:class:`Numerics`): ``"gpu"`` reproduces what the modelled
GPU's generated code computes (an H200 with Triton's code generation: tf32 operands truncated,
multiply-adds contracted into FMAs where the compiler contracts, reductions in the operands' dtype
in the order the compiled layout gives, the approximate instructions' own roundings); ``"ideal"``
computes each operation correctly rounded as written.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from . import dtypes
from .dtypes import DType, bf16_storage

#: fp8 formats that ml_dtypes knows, by its names (used only to build decode tables)
_ML_FP8 = {
    "fp8e4m3fn": "float8_e4m3fn",
    "fp8e5m2": "float8_e5m2",
    "fp8e4m3fnuz": "float8_e4m3fnuz",
    "fp8e5m2fnuz": "float8_e5m2fnuz",
}


def storage_dtype(ty: DType | dtypes.BlockType) -> np.dtype:
    """Return the NumPy dtype the engine stores values of ``ty`` in."""
    return dtypes.element(ty).storage


def itemsize(ty: DType | dtypes.BlockType) -> int:
    """Bytes one element of ``ty`` occupies in memory (int1 is one byte)."""
    return dtypes.element(ty).itemsize


def is_fp8(ty: DType) -> bool:
    """True for every fp8 format."""
    return dtypes.element(ty).is_fp8


def is_low_float(ty: DType) -> bool:
    """True for float types narrower than fp32 (their arithmetic runs in fp32)."""
    return dtypes.element(ty).is_low_float


#: the numerics modes a launch may run in
MODES = ("gpu", "ideal")
#: how a compiled reduction combines the elements one thread holds: "tree" (pairwise, Triton 3.9's
#: code generation) or "linear" (one running sum, Triton 3.6 and older, as recorded on the H200)
PER_THREAD_ORDERS = ("tree", "linear")
#: where "gpu" numerics take the approximate instructions from: bounded models (1 to 3 ulp, the
#: default), or the tables recorded on the H200 (bit-exact: :mod:`tilescope.engine.sfu`; a random
#: lookup an element into 2-4 MiB tables, which a workload's cache misses make cost 15-70 % more)
SFU_MODES = ("model", "tables")
#: the Triton releases whose bundled libdevice differs in what the engine follows: ``erff``'s
#: coefficients above 1.00295 (read from each release's sm_90a code)
LIBDEVICE_RELEASES = ("3.6", "3.9")
#: the libdevice followed where the launch does not say (the installed Triton's, 3.9)
DEFAULT_LIBDEVICE = "3.9"
DEFAULT_SFU = "model"
#: tl.exp's multiplier on NVIDIA GPUs: ``y = x * log2(e)`` rounded to float32, then ``ex2.approx``
LOG2E = np.float32(1.4426950408889634)


@dataclass(frozen=True)
class Numerics:
    """How one launch computes floating point: the modelled GPU's bits or the ideal result.

    ``fp_fusion`` is the compiler's fp-fusion option (Triton's ``enable_fp_fusion`` launch option or
    its ``TRITON_DEFAULT_FP_FUSION`` knob); ``num_warps`` shapes the layout a reduction's order
    follows; ``per_thread`` is the compiler release's within-thread reduction order;
    ``reduce_layouts`` the layouts an offline compile gave the kernel's reductions, by source
    ``(file, line)``: ``(block shape, axis, layout)`` each (empty: the coalesced layout is assumed);
    ``sfu`` where the approximate instructions' results come from (:data:`SFU_MODES`);
    ``libdevice`` whose bundled libdevice the fp32 math sequences follow (:data:`LIBDEVICE_RELEASES`).
    """

    mode: str = "gpu"
    fp_fusion: bool = True
    num_warps: int = 4
    per_thread: str = "tree"
    sfu: str = DEFAULT_SFU
    libdevice: str = DEFAULT_LIBDEVICE
    reduce_layouts: Mapping[tuple[str, int], tuple[tuple[tuple[int, ...], int, Any], ...]] = field(
        default_factory=dict, compare=False
    )

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"numerics must be one of {', '.join(map(repr, MODES))}; got {self.mode!r}")
        if self.per_thread not in PER_THREAD_ORDERS:
            raise ValueError(f"per_thread must be one of {PER_THREAD_ORDERS}; got {self.per_thread!r}")
        if self.libdevice not in LIBDEVICE_RELEASES:
            raise ValueError(f"libdevice must be one of {LIBDEVICE_RELEASES}; got {self.libdevice!r}")
        if self.sfu not in SFU_MODES:
            raise ValueError(f"gpu_sfu must be one of {', '.join(map(repr, SFU_MODES))}; got {self.sfu!r}")

    @property
    def gpu(self) -> bool:
        """True when the launch reproduces the GPU's bits."""
        return self.mode == "gpu"

    def reduce_layout(self, site: Any, shape: tuple[int, ...], axis: int) -> Any:
        """The compiled layout of the reduction of a ``shape`` block along ``axis`` at ``site`` (a
        Site), or None when the compile did not say."""
        for block, red_axis, layout in self.reduce_layouts.get((site.file, site.line), ()) if site else ():
            if block == shape and red_axis == axis:
                return layout
        return None

    def contracts(self, op: str, ty: DType) -> bool:
        """Whether the compiler fuses a product into ``op`` ("add" or "sub") of float type ``ty``.

        LLVM's NVPTX backend contracts fp32/fp64 adds and subtracts when fusion is on; Triton lowers
        fp16/bf16 subtraction to its own ``sub`` instruction, which is never contracted.
        """
        if not (self.gpu and self.fp_fusion and ty.is_float and not ty.is_fp8):
            return False
        return op == "add" or not ty.is_low_float


IDEAL = Numerics(mode="ideal")


# --------------------------------------------------------------------------- fp8 tables


def _decode_e4b15(codes: np.ndarray) -> np.ndarray:
    """fp8e4m3b15: 1 sign, 4 exponent (bias 15), 3 mantissa bits; every code is finite."""
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exp = (codes >> 3) & 0xF
    man = (codes & 0x7).astype(np.float64)
    mag = np.where(exp == 0, man / 8.0 * 2.0**-14, (1.0 + man / 8.0) * np.exp2(exp.astype(np.float64) - 15))
    return (sign * mag).astype(np.float32)


@cache
def fp8_decode_table(name: str) -> np.ndarray:
    """Float32 value of each of the 256 codes of fp8 format ``name`` (NaN where the code is NaN)."""
    codes = np.arange(256, dtype=np.uint8)
    if name == "fp8e4m3b15":
        return _decode_e4b15(codes)
    import ml_dtypes  # loaded only by kernels that touch fp8

    return codes.view(getattr(ml_dtypes, _ML_FP8[name])).astype(np.float32)


@cache
def _fp8_encode_table(name: str) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Sorted finite non-negative values, their codes, the NaN code (-1: none) and the sign bit."""
    table = fp8_decode_table(name)
    codes = np.arange(128, dtype=np.uint8)
    vals = table[:128]
    finite = np.isfinite(vals) & (vals >= 0)
    # a format without negative zero (fnuz) uses 0x80 as NaN; the lower half holds every magnitude
    order = np.argsort(vals[finite], kind="stable")
    nan_codes = np.flatnonzero(np.isnan(table))
    nan_code = int(nan_codes[-1]) if nan_codes.size else -1
    has_neg_zero = table[0x80] == 0.0
    return (
        vals[finite][order].astype(np.float64),
        codes[finite][order],
        nan_code,
        0x80 if has_neg_zero else -1,
    )


def _encode_fp8(x: np.ndarray, name: str, rtz: bool) -> np.ndarray:
    """Round float values to fp8 format ``name`` (nearest even, or toward zero), saturating."""
    vals, codes, nan_code, neg_zero = _fp8_encode_table(name)
    x = np.asarray(x, dtype=np.float64)
    mag = np.abs(x)
    hi = np.clip(np.searchsorted(vals, mag, side="left"), 0, len(vals) - 1)
    lo = np.clip(hi - 1, 0, len(vals) - 1)
    exact_or_above = vals[hi] <= mag  # only at the top: saturate
    d_lo = mag - vals[lo]
    d_hi = vals[hi] - mag
    if rtz:
        pick_hi = vals[hi] <= mag
    else:
        even_hi = (codes[hi] & 1) == 0
        pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & even_hi)
    idx = np.where(pick_hi | exact_or_above, hi, lo)
    out = codes[idx].astype(np.uint8)
    negative = np.signbit(x)
    if neg_zero >= 0:
        out = np.where(negative, out | np.uint8(0x80), out)
    else:
        out = np.where(negative & (out != 0), out | np.uint8(0x80), out)
    if nan_code >= 0:
        out = np.where(np.isnan(x), np.uint8(nan_code), out)
    else:
        out = np.where(np.isnan(x), np.uint8(0x7F), out)  # no NaN code: the largest magnitude, as the GPU
    return out


# --------------------------------------------------------------------------- conversions


_FLT_MIN = np.float32(2.0**-126)


def flush_subnormals(x: np.ndarray) -> np.ndarray:
    """Subnormal values of float32 ``x`` flushed to signed zero, as ``.ftz`` instructions read and
    write them (``x`` itself when it holds none: treat the result as read-only)."""
    tiny = np.abs(x) < _FLT_MIN
    if not tiny.any():
        return x
    return np.where(tiny, np.copysign(np.float32(0), x), x).astype(x.dtype, copy=False)


def to_float32(data: np.ndarray, ty: DType) -> np.ndarray:
    """Exact float32 value of ``data`` stored as float type ``ty`` (fp64 is rounded); ``data`` itself
    when it is float32 already: treat the result as read-only."""
    ty = dtypes.element(ty)
    if ty.is_fp8:
        return fp8_decode_table(ty.name)[data]
    return data.astype(np.float32, copy=False)


def _round_to_odd_f32(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounding to odd, so that a second rounding to a narrower type is exact."""
    r = x.astype(np.float32)
    inexact = (r.astype(np.float64) != x) & np.isfinite(x)
    even = (r.view(np.uint32) & 1) == 0
    fix = inexact & even
    if np.any(fix):
        toward = np.where(x > r.astype(np.float64), np.float32(np.inf), np.float32(-np.inf))
        r = np.where(fix, np.nextafter(r, toward), r)
    return r


def _rtz_fixup(rounded: np.ndarray, x: np.ndarray, decode) -> np.ndarray:
    """Step a round-to-nearest result one code toward zero where it rounded away from zero."""
    back = decode(rounded).astype(np.float64)
    away = np.abs(back) > np.abs(x.astype(np.float64))
    if not np.any(away):
        return rounded
    bits = rounded.view(np.uint16)
    return np.where(away, bits - np.uint16(1), bits).view(rounded.dtype)


def from_float(x: np.ndarray, ty: DType, rtz: bool = False) -> np.ndarray:
    """Round float values to float type ``ty`` as the GPU's conversion does."""
    name = dtypes.element(ty).name
    x = np.asarray(x)
    if name == "fp64":
        return x.astype(np.float64)
    if name == "fp32":
        if rtz and x.dtype == np.float64:
            r = x.astype(np.float32)
            away = np.abs(r.astype(np.float64)) > np.abs(x)
            return np.where(away, np.nextafter(r, np.float32(0)), r)
        return x.astype(np.float32)
    if x.dtype == np.float64:
        x = _round_to_odd_f32(x)
    if dtypes.element(ty).is_fp8:
        return _encode_fp8(x, name, rtz)
    out = x.astype(bf16_storage() if name == "bf16" else np.float16)
    if rtz:
        out = _rtz_fixup(out, x, lambda v: v.astype(np.float32))
    return out


def convert_float(data: np.ndarray, src: DType, dst: DType, rtz: bool = False) -> np.ndarray:
    """Convert between any two float types (exact upcasts, rounded downcasts)."""
    src, dst = dtypes.element(src), dtypes.element(dst)
    if src == dst:
        return data
    if src.name == "fp64":
        return from_float(data, dst, rtz)
    return from_float(to_float32(data, src), dst, rtz)


def float_to_int(x: np.ndarray, dst: np.dtype) -> np.ndarray:
    """Float -> integer as ``cvt.rzi`` does: truncate, saturate to the range, NaN to 0."""
    dst = np.dtype(dst)
    if dst == np.bool_:
        return x != 0
    info = np.iinfo(dst)
    x = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0, posinf=float(info.max), neginf=float(info.min))
    big = x >= float(info.max)
    small = x <= float(info.min)
    out = np.clip(x, info.min, info.max).astype(dst)
    out = np.where(big, dst.type(info.max), out)
    return np.where(small, dst.type(info.min), out)


def round_to_tf32(x: np.ndarray) -> np.ndarray:
    """Round float32 to tf32 (10 mantissa bits), nearest even, leaving inf/NaN as they are."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    special = (bits & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
    bias = ((bits >> np.uint32(13)) & np.uint32(1)) + np.uint32(0x0FFF)
    rounded = (bits + bias) & np.uint32(0xFFFFE000)
    return np.where(special, bits, rounded).view(np.float32)


def truncate_to_tf32(x: np.ndarray) -> np.ndarray:
    """float32 with its low 13 mantissa bits cleared: the tf32 operand a Hopper tensor core reads
    (toward zero; inf and NaN keep their class)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    nan = (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    return np.where(nan, bits, bits & np.uint32(0xFFFFE000)).view(np.float32)


def round_to_bf16_f32(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to bf16 precision, kept as float32."""
    return x.astype(np.float32).astype(bf16_storage()).astype(np.float32)


# --------------------------------------------------------------------------- fused multiply-add


def _as_f64(x: np.ndarray, ty: DType) -> np.ndarray:
    """Exact float64 value of ``x`` stored as a float type of at most 32 bits."""
    return to_float32(x, ty).astype(np.float64) if ty.is_fp8 else np.asarray(x).astype(np.float64)


#: float64 bits below a float32's last place, and the pattern of a value halfway between two float32s
_BELOW_F32 = np.uint64((1 << 29) - 1)
_HALF_F32 = np.uint64(1 << 28)
#: a float64's bits shifted left once, less one, below this: 0 < |x| < 2**-125 (float32 may be subnormal)
_TINY_F32 = np.uint64(((1023 - 125) << 53) - 1)
_ONE = np.uint64(1)


def _round_to_odd_sum(p: np.ndarray, c: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``s = p + c`` (float64, rounded) moved to odd where it was inexact (TwoSum's error), so that a
    second rounding to a narrower type rounds as the exact sum would."""
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    even = (s.view(np.uint64) & 1) == 0
    fix = (err != 0) & even & np.isfinite(s)
    if np.any(fix):
        s = np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s


def _uniform(x: Any) -> float | None:
    """The value of an operand that holds one value everywhere (a scalar broadcast), else None."""
    x = np.asarray(x)
    return float(x.flat[0]) if x.size and not any(x.strides) else None


def _exact_product(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """The float32 product ``a * b`` where one operand is a power of two and no element overflowed
    or lost bits to a subnormal (then fusing it changes nothing); None otherwise."""
    for x, y in ((a, b), (b, a)):
        v = _uniform(y)
        if v is not None and v != 0 and math.isfinite(v) and math.frexp(v)[0] in (0.5, -0.5):
            prod = np.multiply(x, np.float32(v), dtype=np.float32)
            if np.array_equal(prod * np.float32(1 / v), x):
                return prod
    return None


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray, ty: DType) -> np.ndarray:
    """a * b + c rounded once to ``ty`` (the product is exact in float64 for inputs up to fp32)."""
    ty = dtypes.element(ty)
    if ty.name == "fp64":
        return _fma_f64(a, b, c)
    if ty.name != "fp32":
        p = _as_f64(a, ty) * _as_f64(b, ty)
        c64 = _as_f64(c, ty)
        return from_float(_round_to_odd_sum(p, c64, p + c64), ty)
    if hardware_fma() is not None:  # one pass, one rounding: the fastest way, exact products included
        return fma_f32_hardware(a, b, c)
    shape = np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c))
    exact = _exact_product(a, b)
    if exact is not None:  # nothing to fuse: the product is exact in float32 (no float64 pass)
        out = np.add(exact, c, dtype=np.float32)
        return out if out.shape == shape else np.broadcast_to(out, shape).copy()
    return _fma_f32(a, b, c, shape)


def _fma_f32(a: np.ndarray, b: np.ndarray, c: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """float32 ``a * b + c`` rounded once, in NumPy: the exact float64 product plus ``c``, rounded
    to float32, redone exactly where that second rounding could be wrong."""
    # in place: fresh large temporaries cost more (first-touch page faults) than the arithmetic
    s = np.multiply(a, b, out=np.empty(shape, np.float64), dtype=np.float64)
    np.add(s, c, out=s)
    out = s.astype(np.float32)
    # Rounding the float64 sum again to float32 is wrong only where it landed on a float32 halfway
    # point, or below 2**-125 where float32 results may be subnormal (zero is exact): redo those few
    # from the exact sum. (bits << 1) drops the sign; minus one sends zero to the top.
    bits = s.view(np.uint64)
    tmp = np.bitwise_and(bits, _BELOW_F32)
    suspect = tmp == _HALF_F32
    np.left_shift(bits, _ONE, out=tmp)
    np.subtract(tmp, _ONE, out=tmp)
    suspect |= tmp < _TINY_F32
    if suspect.any():
        at = np.nonzero(suspect)
        a_at, b_at = (np.broadcast_to(v, shape)[at].astype(np.float64) for v in (a, b))
        c_at = np.broadcast_to(c, shape)[at].astype(np.float64)
        out[at] = _round_to_odd_sum(a_at * b_at, c_at, s[at]).astype(np.float32)
    return out


def as_torch(torch: Any, x: Any) -> Any:
    """A float32 torch tensor of ``x``'s values, for torch to read: a view where torch can share
    ``x``'s memory, else a copy of its distinct elements expanded like a broadcast (torch takes no
    read-only arrays, nor negative strides)."""
    x = np.asarray(x, dtype=np.float32)
    if min(x.strides, default=0) >= 0:
        shared = x if x.flags.writeable else _writable_alias(x)
        if shared is not None:
            return torch.from_numpy(shared)
    distinct = x[tuple(slice(0, 1) if st == 0 else slice(None) for st in x.strides)]
    return torch.from_numpy(np.array(distinct)).expand(x.shape)


def _writable_alias(x: np.ndarray) -> np.ndarray | None:
    """A writable view of read-only ``x``'s elements, made over the writable, contiguous array its
    memory belongs to (None where there is none: memory the user gave read-only, a broadcast of
    a read-only array, a buffer that is not an array). The engine's loads and broadcasts are read-only
    views of writable arrays; torch, which takes no read-only array, only reads this one."""
    root = x
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root is x or not root.flags.writeable or not root.flags.c_contiguous:
        return None
    offset = x.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    try:
        return np.ndarray(x.shape, x.dtype, buffer=root, offset=offset, strides=x.strides)
    except ValueError:  # NumPy checks that the view lies inside ``root``: one that does not is copied
        return None


@contextlib.contextmanager
def one_torch_thread(torch: Any) -> Iterator[None]:
    """torch on one thread, as the rest of the engine runs: its thread pool's hand-off costs more than
    it gains on the engine's block-sized operands, and far more on a busy machine (10x on 2 cores)."""
    threads = torch.get_num_threads()
    if threads != 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if threads != 1:
            torch.set_num_threads(threads)


def fma_f32_hardware(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 ``a * b + c`` rounded once by the CPU's fused multiply-add (:func:`hardware_fma`)."""
    torch = hardware_fma()
    with one_torch_thread(torch):
        return torch.addcmul(as_torch(torch, c), as_torch(torch, a), as_torch(torch, b)).numpy()


@cache
def hardware_fma() -> Any | None:
    """The installed torch, where its float32 ``addcmul`` rounds ``c + a * b`` once on this CPU (the
    vectorized kernels use the fused multiply-add instruction), else None: checked once, against the
    exact NumPy path, on inputs where one rounding and two differ, of several sizes and broadcasts."""
    try:
        import torch
    except ImportError:
        return None
    from . import clib

    arrays = clib.unpacked(clib.check_data("hardware_fma"))  # (drawing them would import numpy.random)
    try:
        for x, y, z, want in (arrays[i : i + 4] for i in range(0, len(arrays), 4)):
            got = torch.addcmul(as_torch(torch, z), as_torch(torch, x), as_torch(torch, y)).numpy()
            if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
                return None
    except Exception:  # noqa: BLE001 - any trouble: the NumPy path
        return None
    return torch


def _hardware_fma_cases() -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(a, b, c) where one rounding and two differ: products whose rounding error is all that is
    left, of several sizes and broadcasts."""
    rng = np.random.default_rng(0)
    a = rng.uniform(1, 2, 4099).astype(np.float32)
    b = (1 / a.astype(np.float64) * np.exp2(rng.integers(-30, 30, a.size))).astype(np.float32)
    c = -(a.astype(np.float64) * b).astype(np.float32)  # the rounding error of a * b is all that is left
    return [(a, b, c), (a[:7], b[:7], c[:7]), (a[:33, None], b[None, :65], np.array(1.5, np.float32))]


def hardware_fma_check_expected() -> dict[str, np.ndarray]:
    """:func:`hardware_fma`'s check as stored (``data/hardware_fma_check/``, ``clib.packed``): each
    case's ``a``, ``b``, ``c`` from :func:`_hardware_fma_cases` and the exact NumPy path's bits of
    ``a * b + c``."""
    from . import clib

    arrays = []
    for a, b, c in _hardware_fma_cases():
        arrays += [a, b, c, _fma_f32(a, b, c, np.broadcast_shapes(a.shape, b.shape, c.shape))]
    return clib.packed(arrays)


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's error-free product: a * b == p + e exactly (barring overflow)."""
    split = 134217729.0  # 2**27 + 1

    def halves(x):
        t = split * x
        hi = t - (t - x)
        return hi, x - hi

    ah, al = halves(a)
    bh, bl = halves(b)
    p = a * b
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _fma_f64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float64 a * b + c with error-free transforms (faithful: within 1 ulp, exact in most cases)."""
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    p, e = _two_product(a, b)
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    out = s + (t + e)
    return np.where(np.isfinite(p), out, p + c)
