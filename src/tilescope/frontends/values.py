"""Engine-value helpers every Python-embedded frontend needs, on the running launch (:mod:`running`)."""

from __future__ import annotations

import numpy as np

from ..engine import ops
from ..engine.dtypes import DType
from ..engine.ops import Op
from ..engine.values import Value
from .running import current


def broadcast_to(v: Value, shape: tuple[int, ...]) -> Value:
    """``v`` broadcast to a block ``shape`` (explicitly, so the program axis never pairs with a lane axis)."""
    if tuple(v.shape) == tuple(shape):
        return v
    return ops.apply(current().launch, Op.BROADCAST, v, shape=tuple(shape))


def cast(v: Value, to: DType) -> Value:
    """``v`` converted to ``to`` (no op when it has that type)."""
    return v if v.dtype == to else ops.apply(current().launch, Op.CAST, v, to=to)


def apply_broadcast(op: Op, values: list[Value], **params) -> Value:
    """``op`` on values broadcast NumPy-style to their common block shape."""
    shape = tuple(np.broadcast_shapes(*(v.shape for v in values)))
    return ops.apply(current().launch, op, *(broadcast_to(v, shape) for v in values), **params)


class ShapedValue:
    """What a DSL's tile object shares: an engine value of the running batch (``self.value``) and its
    per-program shape."""

    __slots__ = ()
    value: Value

    @property
    def shape(self) -> tuple[int, ...]:
        """The per-program shape."""
        return tuple(self.value.shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)
