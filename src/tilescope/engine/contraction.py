"""Multiply-add contraction as the GPU compiler does it: ``a * b + c`` becomes one fused multiply-add.

With fp fusion on (Triton's default), LLVM's NVPTX backend folds a floating-point add or subtract
whose operand is a multiply into an ``fma``, rounding once, even when the product has other uses
(NVPTX asks for aggressive fusion). Triton lowers fp16/bf16 subtraction to its own instruction,
which is never folded (:meth:`Numerics.contracts`). When both operands are products, LLVM folds the
one with fewer uses, the left one on a tie; the compiler has merged identical products first.

The engine sees a kernel's operations one at a time, so it keeps, for each product, its operands
and a use count shared by identical products (same operand values); uses are counted as they come,
so a product used again *after* the add counts fewer uses than the compiler saw (documented in
``docs/numerics.md``).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from . import numerics as nx
from .dtypes import DType


class Product:
    """The operands of a float multiply and how many operations used its result so far."""

    __slots__ = ("a", "b", "dtype", "uses", "_left", "_right")

    def __init__(self, a: Any, b: Any, dtype: DType):
        self.a, self.b, self.dtype = a.data, b.data, dtype
        self.uses = 0
        self._left, self._right = weakref.ref(a), weakref.ref(b)

    def same_operands(self, a: Any, b: Any) -> bool:
        """True when this product multiplies exactly these two values (the compiler's CSE)."""
        return self._left() is a and self._right() is b


def note_product(launch: Any, a: Any, b: Any, dtype: DType) -> Product:
    """The product record of ``a * b`` for this launch: a new one, or the one an identical multiply
    made (so that their uses add up, as after the compiler merged them)."""
    seen = launch.products
    key = (id(a), id(b))
    rec = seen.get(key)
    if rec is None or not rec.same_operands(a, b):
        if len(seen) > 4096:  # forget products whose operands are gone
            for k in [k for k, r in seen.items() if r._left() is None or r._right() is None]:
                del seen[k]
        rec = seen[key] = Product(a, b, dtype)
    return rec


def fused(op: str, inputs: tuple, out: DType) -> np.ndarray | None:
    """``op`` ("add" or "sub") of two values computed as the contracted FMA, or None when neither
    operand is a product of the same type."""
    prods = [v.product if v.product is not None and v.product.dtype == out else None for v in inputs]
    if prods[0] is None and prods[1] is None:
        return None
    pick = 0 if prods[1] is None or (prods[0] is not None and prods[0].uses <= prods[1].uses) else 1
    prod, other = prods[pick], inputs[1 - pick].data
    a, b = prod.a, prod.b
    if op == "sub":
        if pick == 0:  # a*b - c -> fma(a, b, -c)
            other = -other
        else:  # c - a*b -> fma(-a, b, c)
            a = -a
    return nx.fma(a, b, other, out)
