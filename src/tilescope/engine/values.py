"""Engine values: arrays with a leading program axis, their provenance and expression node.

``data`` has shape ``(B, *block_shape)`` where ``B`` is the number of programs in the batch, or 1
when the value is the same for every program (constants, arguments, ``num_programs``). A value a
demand-driven run chose not to compute has ``data = None`` and names the skipped operations it
depends on in ``skipped``; touching it raises :class:`NeedValues` so the run is redone with those
operations computed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import Node
from .affine import Affine, Predicate, Rows
from .dtypes import DType
from .errors import NeedValues
from .memory import UNKNOWN


def common_batch(*arrays: np.ndarray) -> list[np.ndarray]:
    """Arrays of one block shape broadcast to the largest program axis among them (1 vs B)."""
    batch = max(a.shape[0] for a in arrays)
    return [a if a.shape[0] == batch else np.broadcast_to(a, (batch, *a.shape[1:])) for a in arrays]


class Value:
    """One SSA value of the running kernel, for every program of the batch at once."""

    __slots__ = (
        "_data",
        "dtype",
        "node",
        "prov",
        "skipped",
        "wrapped",
        "attr",
        "lazy",
        "product",
        "_shape",
        "__weakref__",
    )

    def __init__(
        self,
        data: np.ndarray | None,
        dtype: DType,
        node: Node | None = None,
        prov: int = UNKNOWN,
        skipped: frozenset | None = None,
        wrapped: np.ndarray | None = None,
        lazy: Affine | Predicate | Rows | None = None,
        shape: tuple[int, ...] | None = None,
    ):
        self._data = data
        self.lazy = lazy  # factored form (addresses-only runs); ``data`` materializes it on demand
        self.dtype = dtype  # the engine's element type
        self.node = node
        self.prov = prov
        self.skipped = skipped
        self.wrapped = wrapped  # lanes whose int32 arithmetic wrapped (when overflow is tracked)
        self.attr: dict = {}
        self.product: Any = None  # a float multiply's operands, for FMA contraction (contraction.Product)
        self._shape = shape  # per-program block shape of a skipped value (known without its data)

    @property
    def data(self) -> np.ndarray:
        """The array (materialized from the factored form if needed); NeedValues when skipped."""
        if self._data is None:
            if self.lazy is None:
                raise NeedValues(self.skipped or frozenset())
            if isinstance(self.lazy, (Affine, Rows)):
                self._data = self.lazy.materialize(self.dtype.storage)
            else:
                batch = max([t[2].size for t in self.lazy.terms] or [1])
                self._data = self.lazy.materialize(batch)
        return self._data

    @property
    def shape(self) -> tuple[int, ...]:
        """The per-program block shape (``()`` for a scalar), known even when the value was skipped."""
        if self._data is not None:
            return self._data.shape[1:]
        if isinstance(self.lazy, Affine):
            return self.lazy.block.shape[1:]
        if isinstance(self.lazy, Predicate):
            return self.lazy.block_shape()
        if isinstance(self.lazy, Rows):
            return self.lazy.shape()
        return self._shape or ()

    @property
    def is_skipped(self) -> bool:
        """True when this value was not computed (demand-driven run)."""
        return self._data is None and self.lazy is None

    def set_attr(self, key: str, value: Any) -> None:
        """Record a compiler hint a frontend passes along (divisibility, contiguity); unused by the engine."""
        self.attr[key] = value

    def __repr__(self) -> str:
        shape = None if self._data is None else self._data.shape
        return f"Value({self.dtype}, shape={shape})"


class DescriptorValue:
    """A tensor descriptor: base pointer, per-dimension shape and strides, block shape, padding."""

    __slots__ = ("base", "shape", "strides", "block_shape", "padding", "round_f32_to_tf32", "node")

    def __init__(
        self, base: Value, shape: list[Value], strides: list[Value], block_shape, padding, node=None
    ):
        self.base = base
        self.shape = shape
        self.strides = strides
        self.block_shape = [int(b) for b in block_shape]
        self.padding = padding  # "zero" or "nan"
        self.round_f32_to_tf32 = False
        self.node = node

    def set_attr(self, key: str, value: Any) -> None:
        """Compiler hints are accepted and ignored."""
