"""A client that records the op stream, and records flattened to one comparable row per program.

Shared by the op-stream contract tests and the frontends that must give the same stream another way
(Helion through its generated Triton).
"""

from __future__ import annotations

import json

import numpy as np

from tilescope.clients.base import Client
from tilescope.ir import FaultKind, Need, OpKind


class Recorder(Client):
    """Keeps every record, fault and loop event it is given."""

    name = "recorder"
    kinds = frozenset(OpKind)
    fault_kinds = frozenset(FaultKind)

    def __init__(self, needs=()):
        self.needs = frozenset({Need.LOOP_EVENTS, *needs})
        self.ops, self.faults, self.loops = [], [], []
        self.bases: dict[str, int] = {}

    def on_launch_start(self, launch):
        self.bases = {a.name: a.address for a in launch.arguments if a.kind in ("tensor", "descriptor")}

    def offsets(self, name, addresses):
        """Addresses as byte offsets from their tensor argument (arguments move between runs)."""
        if addresses is None:
            return None
        base = self.bases.get(name, min(self.bases.values()))
        return (np.asarray(addresses).astype(np.int64) - base).tolist()

    def on_op(self, record):
        self.ops.append(record)

    def on_fault(self, fault):
        self.faults.append(fault)

    def on_loop(self, event):
        self.loops.append(event)


def _row(array, r, shape):
    if array is None:
        return None
    full = (
        np.broadcast_to(array, (max(array.shape[0], r + 1), *shape))
        if array.ndim == len(shape) + 1
        else array
    )
    return np.asarray(full[min(r, full.shape[0] - 1)]).tolist()


def _program(array, r):
    """Row ``r`` of a per-program array (or its only row when uniform), as a list."""
    a = np.asarray(array)
    a = a.reshape(a.shape[0], -1) if a.ndim else a.reshape(1, 1)
    return a[min(r, a.shape[0] - 1)].tolist()


def per_program(record, values: bool, recorder: Recorder) -> list[tuple]:
    """One hashable row per program of a record (seq, attempt and step are execution details)."""
    rows = []
    site = (record.site.file, record.site.line, record.site.column) if record.site else None
    loops = tuple((s.line, i) for s, i in record.loops)
    attrs = json.dumps(record.attrs, sort_keys=True, default=str)
    operands = tuple(record.operands)
    for r, pid in enumerate(record.program_ids.tolist()):
        key = [record.kind.value, site, tuple(pid), record.dtype, record.itemsize, record.shape]
        key += [record.argument, loops, attrs, operands, record.block_shape]
        if record.kind.is_memory:
            address = record.addresses()
            enabled = _row(record.enabled(), r, record.shape)
            in_bounds = _row(record.in_bounds, r, record.shape) if record.in_bounds is not None else enabled
            coords = None if record.coords is None else [_program(c, r) for c in record.coords]
            key += [json.dumps(recorder.offsets(record.argument, _row(address, r, record.shape))),
                    json.dumps(enabled), json.dumps(in_bounds),
                    json.dumps(coords, default=str)]  # fmt: skip
            if values and record.kind is not OpKind.ATOMIC and record.values is not None:
                key.append(json.dumps(_row(record.values, r, record.shape), default=float))
        rows.append(tuple(key))
    return rows


def fault_rows(fault, recorder: Recorder) -> list[tuple]:
    """One hashable row per program that has bad lanes in a fault: kind, line, lanes, offsets, view, loops."""
    rows = []
    bad = np.asarray(fault.bad)
    for r, pid in enumerate(fault.program_ids.tolist()):
        lanes = np.broadcast_to(bad, (fault.program_ids.shape[0], *bad.shape[1:]))[r]
        if not lanes.any():
            continue
        addr = None
        if fault.address is not None:
            a = np.broadcast_to(fault.address, lanes.shape if fault.address.ndim == lanes.ndim
                                else (fault.program_ids.shape[0], *lanes.shape))  # fmt: skip
            addr = np.asarray(a if a.ndim == lanes.ndim else a[min(r, a.shape[0] - 1)])[lanes]
            addr = recorder.offsets(fault.view.name if fault.view else None, addr)
        view = fault.view.name if fault.view else None
        loops = tuple((s.line, i) for s, i in fault.loops)
        lanes_text, addr_text = json.dumps(lanes.tolist()), json.dumps(addr)
        rows.append(
            (str(fault.kind), fault.site.line, tuple(pid), lanes_text, addr_text, view, loops, fault.message)
        )
    return rows
