"""One op record -> rows of the ``ops`` table: one row per program, lanes as list columns.

Big records are cut into slices of at most ``max_lanes`` lanes so that converting a record never
holds more than one slice's Arrow arrays beside the engine's own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ...ir import OpRecord
from . import arrow
from .schema import OPS_SCHEMA

_TYPES = {f.name: f.type for f in OPS_SCHEMA}


@dataclass(frozen=True)
class RowContext:
    """Where a record sits in the trace: launch number, op position, committed batch, site ids."""

    launch: int
    op: int
    batch: int
    site_id: Callable[[object], int]
    keep_values: np.ndarray | None  # (B,) rows whose values are written; None: no values


def itemsize(dtype: str) -> int:
    """Bytes per element of a Triton dtype name (``fp32``, ``bf16``, ``pointer<fp32>``, ``int1``)."""
    if dtype.startswith("pointer") or dtype.endswith("*"):
        return 8
    bits = re.search(r"\d+", dtype)
    return max(1, int(bits.group()) // 8) if bits else 1


def record_tables(record: OpRecord, ctx: RowContext, max_lanes: int) -> Iterator[pa.Table]:
    """Tables of ``OPS_SCHEMA`` holding ``record``, each of at most ``max_lanes`` lanes (one row at least).

    A row's ``mask`` is null when every lane of it is enabled (the common case costs nothing).
    """
    pids = record.program_ids
    rows = pids.shape[0]
    address = mask = values = coords = None
    shape: tuple[int, ...] = ()
    if record.address is not None:
        shape = tuple(record.address.shape[1:])
        address = _rows(record.address, rows)
        mask = _rows(record.mask, rows) if record.mask is not None else None
        if record.values is not None and ctx.keep_values is not None:
            values = _rows(record.values, rows)
    attrs = dict(record.attrs)
    raw_coords = record.coords if record.coords is not None else attrs.pop("coords", None)
    if raw_coords is not None:
        coords = np.stack([np.broadcast_to(np.asarray(c).reshape(-1), (rows,)) for c in raw_coords], axis=1)
    lanes = int(np.prod(shape)) if address is not None else 0
    if mask is not None:
        active = np.count_nonzero(mask.reshape(rows, -1), axis=1).astype(np.int64)
    else:
        active = np.full(rows, lanes, dtype=np.int64)
    constant = {
        "launch": ctx.launch, "op": ctx.op, "batch": ctx.batch, "kind": record.kind.value,
        "site": ctx.site_id(record.site), "argument": record.argument, "dtype": record.dtype,
        "shape": list(shape),
        "loop_sites": [ctx.site_id(s) for s, _ in record.loops],
        "loop_iterations": [i for _, i in record.loops],
        "address_sites": _node_sites(record.address_node, ctx.site_id),
        "mask_sites": _node_sites(record.mask_node, ctx.site_id),
        "attrs": json.dumps(attrs, default=str, sort_keys=True) if attrs else None,
    }
    size = itemsize(record.dtype)
    step = max(1, max_lanes // max(lanes, 1))
    for lo in range(0, rows, step):
        hi = min(rows, lo + step)
        n = hi - lo
        columns = {name: _constant(name, value, n) for name, value in constant.items()}
        columns.update(pid_x=arrow.numeric(pids[lo:hi, 0], pa.int32()),
                       pid_y=arrow.numeric(pids[lo:hi, 1], pa.int32()),
                       pid_z=arrow.numeric(pids[lo:hi, 2], pa.int32()),
                       active_lanes=arrow.numeric(active[lo:hi], pa.int32()),
                       bytes=arrow.numeric(active[lo:hi] * size, pa.int64()))
        columns["address"] = _lists("address", address, lo, hi, lanes)
        partial = active[lo:hi] < lanes
        partial_mask = mask if mask is not None and partial.any() else None
        columns["mask"] = _lists("mask", partial_mask, lo, hi, lanes, partial)
        keep = ctx.keep_values[lo:hi] if values is not None else None
        columns["values"] = _lists("values", values, lo, hi, lanes, keep)
        columns["coords"] = _lists("coords", coords, lo, hi, coords.shape[1] if coords is not None else 0)
        yield pa.Table.from_arrays([columns[f.name] for f in OPS_SCHEMA], schema=OPS_SCHEMA)


def _rows(array: np.ndarray, rows: int) -> np.ndarray:
    """``array`` with its program axis stretched to ``rows`` (uniform values have an axis of 1)."""
    return np.broadcast_to(array, (rows, *array.shape[1:])) if array.shape[0] != rows else array


def _node_sites(node, site_id) -> list[int] | None:
    return None if node is None else [site_id(s) for s in node.sites()]


def _constant(name: str, value, n: int) -> pa.Array:
    ty = _TYPES[name]
    if value is None:
        return pa.nulls(n, ty)
    if pa.types.is_dictionary(ty):
        return arrow.text(value, n)
    if pa.types.is_list(ty):
        items = arrow.numeric(np.tile(np.asarray(value, dtype=np.int64), n), ty.value_type)
        return arrow.lists(np.full(n, len(value)), items, ty)
    return arrow.numeric(np.full(n, value), ty)


def _lists(name: str, data: np.ndarray | None, lo: int, hi: int, width: int,
           keep: np.ndarray | None = None) -> pa.Array:
    """Rows ``lo:hi`` of ``data`` (rows, ...) as a list column; rows outside ``keep`` are null.

    The lanes are copied: a view would keep the engine's whole array alive while the row waits to
    be written.
    """
    ty = _TYPES[name]
    n = hi - lo
    if data is None:
        return pa.nulls(n, ty)
    block = data[lo:hi].reshape(n, width)
    if keep is not None and not keep.all():
        block = block[keep]
    else:
        keep = None
    items = arrow.booleans(block) if ty.value_type == pa.bool_() else arrow.numeric(block, ty.value_type)
    lengths = np.full(n, width) if keep is None else np.where(keep, width, 0)
    return arrow.lists(lengths, items, ty, keep)
