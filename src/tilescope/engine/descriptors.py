"""Tensor-descriptor ops: rules checked when a descriptor is made, block addressing, then the pipeline.

A descriptor is a base pointer, a per-dimension shape and strides, a block shape and a padding.
A block access at coordinates ``c`` touches the elements ``c + i`` for every block index ``i``
that lies inside the shape (those are the op's enabled lanes); lanes outside the shape read the
padding and are never written. Gathers and scatters address whole rows of a 2-D descriptor.
Every op goes through :func:`tilescope.engine.access.perform`, so records and faults are the
pipeline's; the rules themselves live in :mod:`descriptor_rules`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import FaultKind, OpKind
from . import dtypes
from . import numerics as nx
from .access import Request, fault, perform
from .atomics import atomic
from .descriptor_rules import runtime_rules
from .values import DescriptorValue, Value

#: descriptor reductions by neutral atomic op
REDUCTIONS = ("add", "min", "max", "and", "or", "xor")


def check(launch: Any, desc: DescriptorValue) -> None:
    """Report every rule the descriptor breaks, as a fault at the line that made it."""
    elem = desc.base.dtype.pointee
    base = desc.base.data.astype(np.uint64)
    strides = [s.data.astype(np.int64) for s in desc.strides]
    for broken in runtime_rules(base, strides, desc.block_shape, elem.itemsize):
        lanes = np.asarray(broken.bad, dtype=bool).reshape(-1)
        fault(
            launch,
            FaultKind.DESCRIPTOR_RULE,
            bad=np.broadcast_to(lanes, (max(base.shape[0], lanes.shape[0]),)),
            message=broken.message,
            attrs={"fix": broken.fix, "rule": broken.rule},
            address_node=desc.node,
        )


def _batch(*arrays: np.ndarray) -> int:
    return max(a.shape[0] for a in arrays)


def block_lanes(desc: DescriptorValue, indices: list[Value]) -> tuple[np.ndarray, np.ndarray]:
    """Byte addresses of the block at ``indices`` and which of its lanes lie inside the shape."""
    size = desc.base.dtype.pointee.itemsize
    block = desc.block_shape
    nd = len(block)
    base = desc.base.data.astype(np.uint64)
    batch = _batch(base, *[v.data for v in (*indices, *desc.shape, *desc.strides)])
    offset = np.zeros((batch, *block), dtype=np.int64)
    inside = np.ones((batch, *block), dtype=bool)
    column = (-1, *([1] * nd))
    for d in range(nd):
        along = [1] * (nd + 1)
        along[d + 1] = block[d]
        coord = indices[d].data.astype(np.int64).reshape(column) + np.arange(block[d]).reshape(along)
        offset = offset + coord * desc.strides[d].data.astype(np.int64).reshape(column)
        inside = inside & (coord >= 0) & (coord < desc.shape[d].data.astype(np.int64).reshape(column))
    addr = np.broadcast_to(base.reshape(column), (batch, *block)) + (offset * size).view(np.uint64)
    return addr, inside


def row_lanes(desc: DescriptorValue, rows: Value, column: Value) -> tuple[np.ndarray, np.ndarray]:
    """Byte addresses of rows ``rows`` from column ``column`` of a 2-D descriptor, and which lie inside."""
    size = desc.base.dtype.pointee.itemsize
    r = rows.data.astype(np.int64)[..., None]  # (B, N, 1)
    c = column.data.astype(np.int64).reshape(-1, 1, 1) + np.arange(desc.block_shape[-1]).reshape(1, 1, -1)

    def per_program(v: Value) -> np.ndarray:
        return v.data.astype(np.int64).reshape(-1, 1, 1)

    inside = (r >= 0) & (r < per_program(desc.shape[0])) & (c >= 0) & (c < per_program(desc.shape[1]))
    offset = r * per_program(desc.strides[0]) + c * per_program(desc.strides[1])
    addr = desc.base.data.astype(np.uint64).reshape(-1, 1, 1) + (offset * size).view(np.uint64)
    shape = np.broadcast_shapes(addr.shape, inside.shape)
    return np.broadcast_to(addr, shape), np.broadcast_to(inside, shape)


def _lanes_as_values(desc: DescriptorValue, addr: np.ndarray, inside: np.ndarray) -> tuple[Value, Value]:
    """The addresses as a pointer value derived from the descriptor's base, the inside lanes as a mask."""
    return Value(addr, desc.base.dtype, desc.node, desc.base.prov), Value(inside, dtypes.BOOL, None)


def _coords(values: list[Value]) -> tuple[np.ndarray, ...]:
    return tuple(v.data for v in values)


def load(launch: Any, desc: DescriptorValue, indices: list[Value]) -> Value:
    """Block load at ``indices``; lanes outside the shape read the padding (zero or NaN)."""
    elem = desc.base.dtype.pointee
    addr, inside = block_lanes(desc, indices)
    ptr, mask = _lanes_as_values(desc, addr, inside)
    fill = None
    if desc.padding == "nan":
        nan = np.full(addr.shape, np.nan, dtype=np.float32)
        fill = nx.from_float(nan, elem) if elem.is_low_float else nan.astype(elem.storage)
    tf32 = desc.round_f32_to_tf32 and elem.name == "fp32"
    return perform(launch, Request(
        OpKind.DESCRIPTOR_LOAD, "read", ptr, elem, mask=mask, fill=fill, node=desc.node,
        coords=_coords(indices), block_shape=tuple(desc.block_shape),
        after_read=nx.round_to_tf32 if tf32 else None,
    ))  # fmt: skip


def store(launch: Any, desc: DescriptorValue, value: Value, indices: list[Value]) -> None:
    """Block store at ``indices``; lanes outside the shape are not written."""
    addr, inside = block_lanes(desc, indices)
    ptr, mask = _lanes_as_values(desc, addr, inside)
    perform(launch, Request(
        OpKind.DESCRIPTOR_STORE, "write", ptr, desc.base.dtype.pointee, mask=mask, stored=value,
        node=desc.node, coords=_coords(indices), block_shape=tuple(desc.block_shape), returns=False,
    ))  # fmt: skip


def gather(launch: Any, desc: DescriptorValue, rows: Value, column: Value) -> Value:
    """Gather whole rows ``rows`` starting at column ``column``."""
    addr, inside = row_lanes(desc, rows, column)
    ptr, mask = _lanes_as_values(desc, addr, inside)
    return perform(launch, Request(
        OpKind.DESCRIPTOR_LOAD, "read", ptr, desc.base.dtype.pointee, mask=mask, node=desc.node,
        coords=_coords([rows, column]), block_shape=tuple(desc.block_shape), attrs={"gather": True},
    ))  # fmt: skip


def scatter(launch: Any, desc: DescriptorValue, value: Value, rows: Value, column: Value) -> None:
    """Scatter whole rows ``rows`` starting at column ``column``."""
    addr, inside = row_lanes(desc, rows, column)
    ptr, mask = _lanes_as_values(desc, addr, inside)
    perform(launch, Request(
        OpKind.DESCRIPTOR_STORE, "write", ptr, desc.base.dtype.pointee, mask=mask, stored=value,
        node=desc.node, coords=_coords([rows, column]), block_shape=tuple(desc.block_shape),
        attrs={"scatter": True}, returns=False,
    ))  # fmt: skip


def reduce(launch: Any, op: str, desc: DescriptorValue, value: Value, indices: list[Value]) -> None:
    """Atomic reduction (``add``, ``min``, ``max``, ``and``, ``or``, ``xor``) of a block into the tensor."""
    if op not in REDUCTIONS:
        launch.unsupported(f"descriptor reduce {op}")
    addr, inside = block_lanes(desc, indices)
    ptr, mask = _lanes_as_values(desc, addr, inside)
    atomic(
        launch, op, ptr, [value], mask, sem="relaxed", scope="gpu", node=desc.node,
        coords=_coords(indices), block_shape=tuple(desc.block_shape), attrs={"descriptor": True},
    )  # fmt: skip
