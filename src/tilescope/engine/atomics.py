"""Atomic memory ops: each computes its update function, then goes through the access pipeline.

Ops by neutral name (``add``, ``max``, ``min``, ``and``, ``or``, ``xor``, ``xchg``, ``cas``,
``load``, ``store``) with the memory semantics (``relaxed``, ``acquire``, ``release``, ``acq_rel``)
and scope (``cta``, ``gpu``, ``sys``) the kernel asked for; both are always on the record. Updates
apply in program order, one element at a time, and return the value each lane saw.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..ir import ATOMIC_OPS, MEMORY_SCOPES, MEMORY_SEMANTICS, OpKind
from .access import Request, perform
from .dtypes import DType
from .ops import RULES, Op
from .values import Value

_ELEMENTWISE = {"add": Op.ADD, "max": Op.MAX, "min": Op.MIN, "and": Op.AND, "or": Op.OR, "xor": Op.XOR}


def update_function(op: str, element: DType, signed: bool | None = None) -> Callable[..., np.ndarray] | None:
    """``new = fn(old, *operands)`` for atomic ``op`` on ``element`` (None: the op only reads)."""
    if op in _ELEMENTWISE:
        fn = RULES[_ELEMENTWISE[op]].value
        params = {"signed": signed} if op in ("max", "min") and element.is_int else {}
        return lambda old, v: fn((element, element), element, old, v, **params).astype(old.dtype, copy=False)
    if op in ("xchg", "store"):
        return lambda old, v: v
    if op == "cas":
        bits = np.dtype(f"uint{element.itemsize * 8}")
        return lambda old, cmp, v: np.where(old.view(bits) == np.asarray(cmp).view(bits), v, old)
    if op == "load":
        return None
    raise ValueError(f"unknown atomic op {op!r}; known: {', '.join(ATOMIC_OPS)}")


def atomic(
    launch: Any,
    op: str,
    ptr: Value,
    operands: list[Value],
    mask: Value | None = None,
    *,
    sem: str = "acq_rel",
    scope: str = "gpu",
    signed: bool | None = None,
    kind: OpKind = OpKind.ATOMIC,
    **request: Any,
) -> Value | None:
    """Atomic ``op`` at ``ptr`` for every enabled lane; the old values (None for ``store``).

    ``operands``: ``[value]`` for read-modify-writes, xchg and store; ``[compare, value]`` for cas;
    ``[]`` for load. ``signed`` picks signed or unsigned integer max/min (default: the type's).
    """
    if sem not in MEMORY_SEMANTICS:
        raise ValueError(f"unknown memory semantics {sem!r}; known: {', '.join(MEMORY_SEMANTICS)}")
    if scope not in MEMORY_SCOPES:
        raise ValueError(f"unknown memory scope {scope!r}; known: {', '.join(MEMORY_SCOPES)}")
    element = ptr.dtype.pointee
    req = Request(
        kind=kind,
        effect="read" if op == "load" else "update",
        pointer=ptr,
        element=element,
        mask=mask,
        update=update_function(op, element, signed),
        operands=list(operands),
        attrs={"op": op, "sem": sem, "scope": scope, **request.pop("attrs", {})},
        returns=op != "store",
        **request,
    )
    return perform(launch, req)
