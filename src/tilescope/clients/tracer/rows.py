"""One op record -> rows of the ``ops`` table: one row per program, lanes as list columns.

A row whose addresses are affine over the block (lane ``i`` at ``base + Σ i_d × stride_d``: what
``tl.arange`` arithmetic produces) is written as its base and strides, a few numbers however big
the block; only other rows list every lane. Rows are cut into slices of at most ``max_bytes`` of
Arrow data, so converting a record never holds more than one slice beside the engine's own arrays.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ...ir import OpRecord
from . import arrow
from .schema import OPS_SCHEMA

_TYPES = {f.name: f.type for f in OPS_SCHEMA}

#: lanes the affine check compares at a time: bounds its scratch memory to a few MiB
CHECK_LANES = 1 << 16
#: Arrow bytes of a row besides its lanes (ids, pids, site lists), for cutting slices
ROW_BYTES = 128


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


def record_tables(record: OpRecord, ctx: RowContext, max_bytes: int) -> Iterator[tuple[pa.Table, int]]:
    """Tables of ``OPS_SCHEMA`` holding ``record``, each with its size in bytes (about ``max_bytes``
    at most, one row at least).

    A row's ``mask`` is null when every lane of it is enabled, its ``address`` null when its
    addresses are affine (then ``address_base`` and ``address_strides`` give them).
    """
    pids = record.program_ids
    rows = pids.shape[0]
    shape: tuple[int, ...] = ()
    lanes = 0
    address = base = strides = listed = mask = partial = values = None
    active = np.zeros(rows, dtype=np.int64)
    factored = _factored(record, rows)
    if factored is not None:  # one shared block: check it once, every program is it plus its offset
        shape, base, strides = factored
        lanes = math.prod(shape)
        listed = np.zeros(rows, dtype=bool)
    elif record.addresses() is not None:
        shape = tuple(record.address.shape[1:])
        lanes = math.prod(shape)
        address = _programs(record.address)
        base, strides, affine = (_rows(a, rows) for a in affine_rows(address))
        address, listed = _rows(address, rows), ~affine
    if record.address is not None or factored is not None:
        active, partial = _active(record.mask, rows, lanes)
        mask = _rows(_programs(record.mask), rows) if partial.any() else None
        if record.values is not None and ctx.keep_values is not None:
            values = _rows(_programs(record.values), rows)
    weight = np.full(rows, ROW_BYTES, dtype=np.int64)
    if listed is not None:
        weight += lanes * (8 * listed + partial + (8 * ctx.keep_values if values is not None else 0))
    attrs = dict(record.attrs)
    raw_coords = record.coords if record.coords is not None else attrs.pop("coords", None)
    coords = None
    if raw_coords is not None:
        coords = np.stack([np.broadcast_to(np.asarray(c).reshape(-1), (rows,)) for c in raw_coords], axis=1)
    constant = {
        "launch": ctx.launch,
        "op": ctx.op,
        "batch": ctx.batch,
        "kind": record.kind.value,
        "site": ctx.site_id(record.site),
        "argument": record.argument,
        "dtype": record.dtype,
        "shape": list(shape),
        "loop_sites": [ctx.site_id(s) for s, _ in record.loops],
        "loop_iterations": [i for _, i in record.loops],
        "address_sites": _node_sites(record.address_node, ctx.site_id),
        "mask_sites": _node_sites(record.mask_node, ctx.site_id),
        "attrs": json.dumps(attrs, default=str, sort_keys=True) if attrs else None,
    }
    whole = {name: _constant(name, value, rows) for name, value in constant.items()}
    whole.update(
        pid_x=arrow.numeric(pids[:, 0], pa.int32()),
        pid_y=arrow.numeric(pids[:, 1], pa.int32()),
        pid_z=arrow.numeric(pids[:, 2], pa.int32()),
        active_lanes=arrow.numeric(active, pa.int32()),
        bytes=arrow.numeric(active * itemsize(record.dtype), pa.int64()),
        address_base=arrow.numeric(base, pa.uint64()) if base is not None else pa.nulls(rows, pa.uint64()),
        address_strides=_lists(
            "address_strides", strides, 0, rows, len(shape), None if listed is None else ~listed
        ),
        coords=_lists("coords", coords, 0, rows, coords.shape[1] if coords is not None else 0),
    )
    for lo, hi in _slices(weight, max_bytes):
        n = hi - lo
        columns = {name: column.slice(lo, n) for name, column in whole.items()}
        columns["address"] = _lists(
            "address", address, lo, hi, lanes, None if listed is None else listed[lo:hi]
        )
        columns["mask"] = _lists("mask", mask, lo, hi, lanes, None if mask is None else partial[lo:hi])
        keep = ctx.keep_values[lo:hi] if values is not None else None
        columns["values"] = _lists("values", values, lo, hi, lanes, keep)
        yield (
            pa.Table.from_arrays([columns[f.name] for f in OPS_SCHEMA], schema=OPS_SCHEMA),
            int(weight[lo:hi].sum()),
        )


def affine_rows(address: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of ``address`` (P, *block): lane 0's address, the byte stride of each block dimension,
    and whether every lane sits at ``base + Σ index_d × stride_d`` (modulo 2^64, as the reader rebuilds it).
    """
    a = address.view(np.int64)
    rows, block = a.shape[0], a.shape[1:]
    lanes = math.prod(block)
    if lanes == 0:
        return np.zeros(rows, np.uint64), np.zeros((rows, len(block)), np.int64), np.zeros(rows, bool)
    base = a[(slice(None),) + (0,) * len(block)]
    strides = np.zeros((rows, len(block)), dtype=np.int64)
    for d, size in enumerate(block):
        if size > 1:
            strides[:, d] = a[(slice(None),) + (0,) * d + (1,) + (0,) * (len(block) - d - 1)] - base
    affine = np.ones(rows, dtype=bool)
    uniform = bool((strides == strides[:1]).all())
    axes = tuple(range(1, a.ndim))
    shaped = [(-1,) + (1,) * d + (size,) + (1,) * (len(block) - d - 1) for d, size in enumerate(block)]
    lane_offsets = (
        sum(
            (np.arange(size, dtype=np.int64) * strides[0, d]).reshape(shaped[d][1:])
            for d, size in enumerate(block)
        )
        if uniform
        else None
    )
    step = max(1, CHECK_LANES // lanes)
    for lo in range(0, rows, step):
        hi = min(rows, lo + step)
        rel = a[lo:hi] - base[lo:hi].reshape((-1,) + (1,) * len(block))
        if uniform:
            affine[lo:hi] = (rel == lane_offsets).all(axis=axes)
            continue
        for d, size in enumerate(block):
            rel -= (strides[lo:hi, d, None] * np.arange(size, dtype=np.int64)).reshape(shaped[d])
        affine[lo:hi] = ~rel.any(axis=axes)
    return base.view(np.uint64), strides, affine


def _factored(record: OpRecord, rows: int):
    """(block shape, per-row base, per-row strides) of a factored address whose shared block is affine."""
    aff = record.address_affine
    if record.address is not None or aff is None:
        return None
    block = np.ascontiguousarray(aff.block).view(np.uint64)
    base, strides, affine = affine_rows(block)
    if not affine[0]:
        return None  # a gather-like block: list the lanes (``addresses()`` materializes them)
    per_program = np.broadcast_to(aff.scalar, (rows,)).astype(np.int64) + base.view(np.int64)[0]
    return (
        tuple(block.shape[1:]),
        per_program.view(np.uint64),
        np.broadcast_to(strides, (rows, strides.shape[1])),
    )


def _programs(array: np.ndarray) -> np.ndarray:
    """``array`` with a program axis of 1 when it is a broadcast view (every program the same)."""
    return array[:1] if array.shape[0] > 1 and array.strides[0] == 0 else array


def _rows(array: np.ndarray, rows: int) -> np.ndarray:
    """``array`` with its program axis stretched to ``rows`` (uniform values have an axis of 1)."""
    return np.broadcast_to(array, (rows, *array.shape[1:])) if array.shape[0] != rows else array


def _active(mask: np.ndarray | None, rows: int, lanes: int) -> tuple[np.ndarray, np.ndarray]:
    """Enabled lanes per row, and which rows have some lane disabled."""
    if mask is None or mask.all():
        return np.full(rows, lanes, dtype=np.int64), np.zeros(rows, dtype=bool)
    mask = _programs(mask)
    active = _rows(np.count_nonzero(mask, axis=tuple(range(1, mask.ndim))).astype(np.int64), rows)
    return active, active < lanes


def _slices(weight: np.ndarray, max_bytes: int) -> Iterator[tuple[int, int]]:
    """Row ranges ``[lo, hi)`` of at most ``max_bytes`` total weight each (one row at least)."""
    ends = np.cumsum(weight)
    lo = 0
    while lo < len(weight):
        start = ends[lo - 1] if lo else 0
        hi = max(lo + 1, int(np.searchsorted(ends, start + max_bytes, side="right")))
        yield lo, hi
        lo = hi


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


def _lists(
    name: str, data: np.ndarray | None, lo: int, hi: int, width: int, keep: np.ndarray | None = None
) -> pa.Array:
    """Rows ``lo:hi`` of ``data`` (rows, ...) as a list column; rows outside ``keep`` are null.

    The lanes are copied: a view would keep the engine's whole array alive while the row waits to
    be written.
    """
    ty = _TYPES[name]
    n = hi - lo
    if data is None or (keep is not None and not keep.any()):
        return pa.nulls(n, ty)
    block = data[lo:hi]
    if keep is not None and not keep.all():
        block = block[keep]
    else:
        keep = None
    items = arrow.booleans(block) if ty.value_type == pa.bool_() else arrow.numeric(block, ty.value_type)
    lengths = np.full(n, width) if keep is None else np.where(keep, width, 0)
    return arrow.lists(lengths, items, ty, keep)
