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

from ..ir import ATOMIC_OPS, MEMORY_SCOPES, MEMORY_SEMANTICS, Node, OpKind
from .access import Request, perform
from .dtypes import BOOL, DType
from .ops import RULES, Op, apply
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


def poll(launch: Any, ptr: Value, expected: Value, *, sem: str = "acquire", scope: str = "gpu",
         timeout: bool = False) -> Value:  # fmt: skip
    """``atomic_poll``: atomic loads of ``ptr`` until every lane read ``expected``; per lane, whether it did.

    Each round loads only the lanes that have not seen their value yet (one ``atomic`` record of op
    ``load`` per round), so the acquire happens on the read that succeeded. Batched, a poll that
    keeps waiting hands its programs to the concurrent mode like any spin loop; there, a poll with
    a timeout gives up after ``spin_limit`` rounds (the CPU has no GPU timer) and its waiting
    lanes return False.
    """
    site = launch.site()
    frame = launch.loop_enter(site, ("poll", site))
    seen: np.ndarray | None = None
    try:
        round_ = 0
        while True:
            launch.loop_iterate(frame, round_, event=False)
            mask = None if seen is None else Value(~seen, BOOL)
            old = atomic(launch, "load", ptr, [], mask, sem=sem, scope=scope)
            hit = np.asarray(apply(launch, Op.EQ, old, expected).data, dtype=bool)
            seen = hit if seen is None else seen | hit
            waiting = ~seen.reshape(seen.shape[0], -1).all(axis=1)
            active = launch.active
            if active is not None and waiting.shape[0] == active.shape[0]:
                waiting &= active
            if not waiting.any():
                break
            if timeout and launch.scheduler is not None and round_ >= launch.options.spin_limit:
                break
            launch.while_iteration(frame)
            round_ += 1
    finally:
        launch.loop_exit(frame)
    return Value(seen, BOOL, Node("atomic_poll", site, ()))
