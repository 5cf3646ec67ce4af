"""Matrix products as the GPU's tensor cores compute them, within the numerics contract.

Operands are converted exactly to float32 (fp8, fp16, bf16 are subsets of it), reduced to the
``input_precision`` the kernel asked for (tf32 keeps 10 mantissa bits: truncated as a Hopper tensor
core reads them in "gpu" numerics, rounded to nearest in "ideal"; the x3/x6 variants split each
operand into high and low parts and sum the partial products, as Triton's lowering does).

In "gpu" numerics a float32-accumulated tensor-core product follows the model measured on the H200
(:func:`tensor_core`): one MMA instruction adds ``chunk`` exact products (16 for fp16/bf16, 8 for
tf32, 32 for fp8) and the accumulator at once, each addend truncated toward zero to 27 bits below
the largest nominal exponent (fp8: 15), the sum truncated to float32 (fp8: to 13 fraction bits, an
e8m13 accumulator; an fp16 accumulator: rounded to nearest fp16). An fp8 dot whose
``max_num_imprecise_acc`` is at most its K (Triton's default
on sm_90 is 2**30: never) runs each group of MMA instructions from a zero accumulator and adds the
group into the float32 one with an IEEE add. An fp32 ``ieee`` dot is the FMA chain each thread of
the compiled code runs: ``acc = fma(a[k], b[k], acc)`` for k in order. "ideal" numerics multiply
with float32 (BLAS) accumulation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import OpKind
from . import numerics as nx
from .dtypes import DType
from .fma_chain import fma_chain
from .values import Value


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched product; a program axis of length 1 broadcasts against the batch."""
    return np.matmul(a, b)


def _split_tf32(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hi = nx.round_to_tf32(x)
    return hi, nx.round_to_tf32(x - hi)


def _split_bf16(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hi = nx.round_to_bf16_f32(x)
    return hi, nx.round_to_bf16_f32(x - hi)


def _float_product(a: np.ndarray, b: np.ndarray, precision: str, truncate: bool) -> np.ndarray:
    """float32 product of float32 operands at the requested input precision (``truncate``: tf32
    operands lose their low mantissa bits, as a Hopper tensor core reads them, instead of rounding)."""
    if precision == "tf32":
        to_tf32 = nx.truncate_to_tf32 if truncate else nx.round_to_tf32
        return _matmul(to_tf32(a), to_tf32(b))
    if precision == "tf32x3":
        ah, al = _split_tf32(a)
        bh, bl = _split_tf32(b)
        return _matmul(ah, bl) + _matmul(al, bh) + _matmul(ah, bh)
    if precision == "bf16x3":
        ah, al = _split_bf16(a)
        bh, bl = _split_bf16(b)
        return _matmul(ah, bl) + _matmul(al, bh) + _matmul(ah, bh)
    if precision == "bf16x6":
        ah, ar = _split_bf16(a)
        am, al = _split_bf16(ar)
        bh, br = _split_bf16(b)
        bm, bl = _split_bf16(br)
        parts = [(am, bm), (ah, bl), (al, bh), (ah, bm), (am, bh), (ah, bh)]
        out = _matmul(*parts[0])
        for x, y in parts[1:]:
            out = out + _matmul(x, y)
        return out
    return _matmul(a, b)


#: products one MMA instruction sums (its K), the bits kept below the largest exponent, and the
#: fraction bits the sum keeps (23: float32), per operand kind
_MMA = {"fp16": (16, 27, 23), "bf16": (16, 27, 23), "tf32": (8, 27, 23), "fp8": (32, 15, 13)}
#: Triton's default ``max_num_imprecise_acc`` for fp8 dots on sm_90: never split the accumulation
MAX_IMPRECISE_SM90 = 2**30


def _truncate_f32(x: np.ndarray) -> np.ndarray:
    """float64 values truncated (toward zero) to float32."""
    r = x.astype(np.float32)
    away = np.abs(r.astype(np.float64)) > np.abs(x)
    return np.where(away, np.nextafter(r, np.float32(0)), r)


def _truncate_fraction(x: np.ndarray, fraction_bits: int) -> np.ndarray:
    """float64 values truncated (toward zero) to ``fraction_bits`` bits after the leading one."""
    _, e = np.frexp(x)
    step = np.ldexp(1.0, e - 1 - fraction_bits)
    return np.trunc(x / step) * step


def _nominal_exponent(x: np.ndarray) -> np.ndarray:
    """The exponent e with |x| < 2**e that the tensor core aligns on (very small for zero)."""
    _, e = np.frexp(x)
    return np.where(x == 0, -(2**20), e)


def tensor_core(
    a: np.ndarray,
    b: np.ndarray,
    acc: np.ndarray,
    chunk: int,
    bits: int,
    fraction: int = 23,
    fp16_acc: bool = False,
) -> np.ndarray:
    """acc + a @ b (float32 operands holding exact fp16/bf16/tf32/fp8 values, program axis first) as
    a chain of MMA instructions of ``chunk`` products each: a product's nominal exponent is the sum
    of its operands' (its significand lies in [1/4, 1)), every addend is truncated to ``bits`` below
    the largest nominal exponent of the instruction (the accumulator's counts one above its own, as
    if it were a product too), the aligned addends are summed exactly and the sum is truncated to
    ``fraction`` fraction bits (23: float32), or (``fp16_acc``) rounded to nearest fp16."""
    k = a.shape[-1]
    ea, eb = _nominal_exponent(a), _nominal_exponent(b)
    shape = np.broadcast_shapes(np.shape(acc), a.shape[:-1] + b.shape[-1:])
    c = np.broadcast_to(acc, shape).astype(np.float16 if fp16_acc else np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    for k0 in range(0, k, chunk):
        ks = slice(k0, min(k0 + chunk, k))
        prods = a64[..., :, None, ks] * np.swapaxes(b64[..., ks, :], -1, -2)[..., None, :, :]
        exps = ea[..., :, None, ks] + np.swapaxes(eb[..., ks, :], -1, -2)[..., None, :, :]
        c64 = c.astype(np.float64)
        top = np.maximum(exps.max(axis=-1), _nominal_exponent(c64) + 1)
        scale = np.ldexp(1.0, top - bits)
        total = (np.trunc(prods / scale[..., None]).sum(axis=-1) + np.trunc(c64 / scale)) * scale
        if fp16_acc:  # the exact sum (at most 32 bits) rounded once
            c = total.astype(np.float16)
        else:
            c = _truncate_f32(total if fraction >= 23 else _truncate_fraction(total, fraction))
    return c


def _fp8_tensor_core(a: np.ndarray, b: np.ndarray, acc: np.ndarray, max_imprecise: int) -> np.ndarray:
    """An fp8 dot on sm_90: one chain of MMA instructions, or (``max_imprecise`` at most K) groups
    of ``max_imprecise`` products, each from a zero accumulator, added to ``acc`` in float32."""
    chunk, bits, fraction = _MMA["fp8"]
    k = a.shape[-1]
    if max_imprecise > k:
        return tensor_core(a, b, acc, chunk, bits, fraction)
    group = max(chunk, -(-max_imprecise // chunk) * chunk)
    out = np.asarray(acc, dtype=np.float32)
    for k0 in range(0, k, group):
        ks = slice(k0, min(k0 + group, k))
        out = out + tensor_core(a[..., ks], b[..., ks, :], np.float32(0), chunk, bits, fraction)
    return out


def _mma_kind(a_ty: DType, precision: str) -> str | None:
    """The tensor-core operand kind of a dot (None: not a tensor-core product we model)."""
    if a_ty.is_fp8:
        return "fp8"
    if a_ty.name in ("fp16", "bf16"):
        return a_ty.name
    return "tf32" if a_ty.name == "fp32" and precision == "tf32" else None


def product(
    a: np.ndarray,
    b: np.ndarray,
    acc: np.ndarray,
    a_ty: DType,
    b_ty: DType,
    out_ty: DType,
    precision: str,
    numerics: nx.Numerics = nx.IDEAL,
    max_imprecise: int = MAX_IMPRECISE_SM90,
) -> np.ndarray:
    """acc + a @ b over the block axes (program axis first), in the accumulator's type
    (``max_imprecise``: an fp8 dot's ``max_num_imprecise_acc``)."""
    out_name = out_ty.name
    if a_ty.is_int:
        prod = _matmul(a.astype(np.int64), b.astype(np.int64))
        return (prod + acc.astype(np.int64)).astype(np.int32)
    if out_name == "fp64":
        return _matmul(a.astype(np.float64), b.astype(np.float64)) + acc
    a32 = nx.to_float32(a, a_ty)
    b32 = nx.to_float32(b, b_ty)
    # only fp32 operands see input_precision; narrower operands are exact in every mode
    prec = precision if a_ty.name == "fp32" else "ieee"
    kind = _mma_kind(a_ty, prec)
    if numerics.gpu and out_name == "fp32":
        if kind == "fp8":
            return _fp8_tensor_core(a32, b32, acc, max_imprecise)
        if kind == "tf32":
            a32, b32 = nx.truncate_to_tf32(a32), nx.truncate_to_tf32(b32)
        if kind is not None:
            return tensor_core(a32, b32, acc, *_MMA[kind])
        if prec == "ieee":
            return fma_chain(a32, b32, acc)
    if numerics.gpu and out_name == "fp16" and kind == "fp16":
        return tensor_core(a32, b32, acc, *_MMA[kind], fp16_acc=True)
    prod = _float_product(a32, b32, prec, numerics.gpu)
    total = prod + nx.to_float32(acc, out_ty)
    return nx.from_float(total, out_ty) if nx.is_low_float(out_ty) else total.astype(np.float32)


def dot(
    launch: Any, a: Value, b: Value, acc: Value, precision: str, max_imprecise: int | None = None
) -> Value:
    """The block product ``acc + a @ b`` for every program; ``precision`` is the fp32 input precision
    (``ieee``, ``tf32``, ``tf32x3``, ``bf16x3``, ``bf16x6``); ``max_imprecise`` an fp8 dot's
    ``max_num_imprecise_acc`` (None: sm_90's default, never split)."""
    imprecise = MAX_IMPRECISE_SM90 if max_imprecise is None else max_imprecise
    from .ops import compute

    out = acc.dtype
    return compute(
        launch,
        OpKind.DOT,
        [a, b, acc],
        out,
        lambda x, y, z: product(x, y, z, a.dtype, b.dtype, out, precision, launch.numerics, imprecise),
        shape=acc.shape,
        precision=precision,
        k=a.shape[-1] if a.shape else 1,
    )
