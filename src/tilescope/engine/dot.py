"""Matrix products as the GPU's tensor cores compute them, within the numerics contract.

Operands are converted exactly to float32 (fp8, fp16, bf16 are subsets of it), rounded to the
``input_precision`` the kernel asked for (tf32 keeps 10 mantissa bits; the x3/x6 variants split
each operand into high and low parts and sum the partial products, as Triton's lowering does),
multiplied with float32 accumulation, and added to the accumulator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import OpKind
from . import numerics as nx
from .dtypes import DType
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


def _float_product(a: np.ndarray, b: np.ndarray, precision: str) -> np.ndarray:
    """float32 product of float32 operands at the requested input precision."""
    if precision == "tf32":
        return _matmul(nx.round_to_tf32(a), nx.round_to_tf32(b))
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


def product(
    a: np.ndarray, b: np.ndarray, acc: np.ndarray, a_ty: DType, b_ty: DType, out_ty: DType, precision: str
) -> np.ndarray:
    """acc + a @ b over the block axes (program axis first), in the accumulator's type."""
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
    prod = _float_product(a32, b32, prec)
    total = prod + nx.to_float32(acc, out_ty)
    return nx.from_float(total, out_ty) if nx.is_low_float(out_ty) else total.astype(np.float32)


def dot(launch: Any, a: Value, b: Value, acc: Value, precision: str) -> Value:
    """The block product ``acc + a @ b`` for every program; ``precision`` is the fp32 input precision
    (``ieee``, ``tf32``, ``tf32x3``, ``bf16x3``, ``bf16x6``)."""
    from .ops import compute

    out = acc.dtype
    return compute(
        launch,
        OpKind.DOT,
        [a, b, acc],
        out,
        lambda x, y, z: product(x, y, z, a.dtype, b.dtype, out, precision),
        shape=acc.shape,
        precision=precision,
        k=a.shape[-1] if a.shape else 1,
    )
