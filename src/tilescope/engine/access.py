"""Memory operations of a running launch: loads, stores, atomics and tensor descriptors.

Each operation resolves its addresses through the address table, reports every enabled lane that
falls outside the tensor its pointer came from (a fault: an error, or a finding when a client
handles faults), moves only in-bounds bytes, and emits an op record when a client subscribed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import triton.language as tl

from ..ir import Fault, Node, OpKind
from . import numerics as nx
from .affine import Affine, Predicate, prove
from .memory import Access
from .values import DescriptorValue, Value

_ATOMIC_INT = {
    "ADD": lambda old, v: old + v,
    "AND": lambda old, v: old & v,
    "OR": lambda old, v: old | v,
    "XOR": lambda old, v: old ^ v,
    "XCHG": lambda old, v: v,
    "MAX": lambda old, v: np.maximum(old, v),
    "MIN": lambda old, v: np.minimum(old, v),
    "UMAX": lambda old, v: np.maximum(old, v),
    "UMIN": lambda old, v: np.minimum(old, v),
}


def _unsigned(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"uint{a.dtype.itemsize * 8}")) if a.dtype.kind == "i" else a


def _signed(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"int{a.dtype.itemsize * 8}")) if a.dtype.kind == "u" else a


def _full(a: np.ndarray, shape: tuple) -> np.ndarray:
    return a if a.shape == shape else np.broadcast_to(a, shape)


class MemoryOps:
    """Checked memory access for one launch (the engine hands itself in as ``run``)."""

    def __init__(self, run: Any):
        self.run = run

    # ------------------------------------------------------------------ shared steps

    def _lanes(self, ptr: Value, mask: Value | None, *others: Value | None):
        """Addresses and enabled lanes broadcast to one (B, *block) shape."""
        addr = ptr.data
        arrays = [addr] + [m.data for m in (mask, *others) if m is not None]
        batch = max(a.shape[0] for a in arrays)
        shape = (batch, *addr.shape[1:])
        addr = _full(addr, shape)
        enabled = np.ones(shape, dtype=bool) if mask is None else _full(mask.data, shape)
        return addr, enabled, shape

    def _check(self, kind: str, ptr: Value, mask: Value | None, addr, enabled, itemsize: int):
        run = self.run
        access = run.memory.check(addr, enabled, ptr.prov, itemsize)
        view = access.view
        if view is None and access.bad.any():
            first = addr[access.bad][0]
            guess = run.memory.view_of(int(first))
            view = guess
        wrapped = None
        if ptr.wrapped is not None:
            wrapped = _full(ptr.wrapped, addr.shape) & enabled
            if not wrapped.any():
                wrapped = None
        if access.bad.any() or wrapped is not None:
            run.fault(
                Fault(
                    kind=kind,
                    launch_id=run.launch_id,
                    kernel=run.kernel_name,
                    site=run.site(),
                    program_ids=run.pids,
                    bad=access.bad,
                    address=addr,
                    view=view.info if view is not None else None,
                    misaligned=access.misaligned,
                    wrapped=wrapped,
                    loops=run.loop_state(),
                    address_node=ptr.node,
                    mask_node=None if mask is None else mask.node,
                )
            )
        return access

    def _record(
        self, kind: OpKind, ptr: Value, mask: Value | None, addr, enabled, access, dtype, values=None, **attrs
    ):
        """Emit the op record of an access checked lane by lane (per-lane addresses)."""
        self._emit(kind, ptr, mask, access, dtype, values, address=addr, lanes=enabled, attrs=attrs)

    def _factored_lanes(self, kind: OpKind, ptr: Value, mask: Value | None):
        """(view, mask in factored form) when the access is proven in bounds for every program, else None.

        Only accesses whose pointer (and mask) are factored qualify; their records carry the
        factored address (``OpRecord.address_affine``).
        """
        run = self.run
        if not isinstance(ptr.lazy, Affine) or ptr.prov < 0:
            return None
        if mask is None:
            lanes = None
        elif isinstance(mask.lazy, Predicate):
            lanes = mask.lazy
        elif mask.lazy is None and mask._data is not None and mask._data.shape[0] == 1:
            lanes = mask._data
        else:
            return None
        view = run.memory.views[ptr.prov]
        if run.memory.bounds == "view":
            lo, hi = view.lo, view.hi
        else:
            lo, hi = view.storage.base, view.storage.base + view.storage.nbytes
        if not prove(ptr.lazy, lanes, lo, hi, nx.itemsize(ptr.dtype.element_ty)):
            return None
        return view, lanes

    def _proven_access(self, view, addr: Affine, lanes, mask: Value | None, itemsize: int, batch: int = 1):
        """The checked access of a proven factored access: element indices built in one pass."""
        st = view.storage
        block = addr.block - st.base
        idx_scalar = addr.scalar // itemsize
        idx_block = block // itemsize
        shape = np.broadcast_shapes(
            (max(batch, idx_scalar.shape[0]), *([1] * (idx_block.ndim - 1))), idx_block.shape
        )
        if mask is not None:
            shape = np.broadcast_shapes(shape, mask.data.shape)
        idx = idx_scalar.reshape(-1, *([1] * (idx_block.ndim - 1))) + idx_block
        idx = np.broadcast_to(idx, shape)
        ok = np.ones(shape, dtype=bool) if mask is None else np.broadcast_to(mask.data, shape)
        none = np.zeros(shape, dtype=bool)
        return Access(ok, none, none, [(st, ok, idx)], view), shape

    def _record_proven(self, kind: OpKind, ptr: Value, mask: Value | None, access, dtype, values) -> None:
        """Emit the op record of a proven factored access: its address stays factored."""
        lanes = None if mask is None else access.ok
        self._emit(kind, ptr, mask, access, dtype, values, address_affine=ptr.lazy, lanes=lanes)

    def _emit(
        self, kind, ptr, mask, access, dtype, values, lanes, address=None, address_affine=None, attrs=None
    ):
        run = self.run
        if not run.hub.wants(kind):
            return
        run.hub.emit_op(
            kind=kind,
            site=run.site(),
            program_ids=run.pids,
            dtype=str(dtype),
            address=address,
            address_affine=address_affine,
            mask=lanes,
            values=values if run.hub.needs_values else None,
            argument=access.view.info.name if access.view is not None else None,
            address_node=ptr.node,
            mask_node=None if mask is None else mask.node,
            attrs=attrs or {},
        )

    def _new(self, data, dtype, op, *inputs) -> Value:
        return Value(data, dtype, Node(op, self.run.site(), tuple(v.node for v in inputs if v is not None)))

    # ------------------------------------------------------------------ load / store

    def load(self, ptr: Value, mask: Value | None, other: Value | None) -> Value:
        """Masked gather; returns a skipped value when a demand-driven run does not need it."""
        run = self.run
        run.yield_point()
        elem = ptr.dtype.element_ty
        site = run.site()
        proven = self._factored_lanes(OpKind.LOAD, ptr, mask)
        if proven is not None:
            if not run.computes(site):
                if run.hub.wants(OpKind.LOAD):
                    access, _ = self._proven_access(proven[0], ptr.lazy, proven[1], mask, nx.itemsize(elem))
                    self._record_proven(OpKind.LOAD, ptr, mask, access, elem, None)
                return Value(None, elem, Node("load", site, (ptr.node,)), skipped=frozenset([site]))
            access, _ = self._proven_access(proven[0], ptr.lazy, proven[1], mask, nx.itemsize(elem))
            other_data = None if other is None else other.data
            data = run.memory.gather(access, nx.storage_dtype(elem), other_data)
            self._record_proven(OpKind.LOAD, ptr, mask, access, elem, data)
            value = self._new(data, elem, "load", ptr, mask)
            if isinstance(elem, tl.pointer_type):
                value.prov = -1
            return value
        addr, enabled, shape = self._lanes(ptr, mask)
        access = self._check("out-of-bounds load", ptr, mask, addr, enabled, nx.itemsize(elem))
        if not run.computes(site):
            self._record(OpKind.LOAD, ptr, mask, addr, enabled, access, elem)
            return Value(None, elem, Node("load", site, (ptr.node,)), skipped=frozenset([site]))
        other_data = None if other is None else other.data
        data = run.memory.gather(access, nx.storage_dtype(elem), other_data)
        self._record(OpKind.LOAD, ptr, mask, addr, enabled, access, elem, values=data)
        value = self._new(data, elem, "load", ptr, mask)
        if isinstance(elem, tl.pointer_type):
            value.prov = -1
        return value

    def store(self, ptr: Value, value: Value, mask: Value | None) -> None:
        """Masked scatter of in-bounds lanes (nothing moves in an addresses-only run)."""
        run = self.run
        run.yield_point()
        elem = ptr.dtype.element_ty
        proven = self._factored_lanes(OpKind.STORE, ptr, mask)
        if proven is not None:
            if not run.compute_outputs and not run.hub.wants(OpKind.STORE):
                return  # addresses-only run, nobody wants the record: proven is all there is to do
            batch = value.data.shape[0] if run.compute_outputs else 1
            access, shape = self._proven_access(
                proven[0], ptr.lazy, proven[1], mask, nx.itemsize(elem), batch
            )
            data = _full(value.data, shape) if run.compute_outputs else None
            self._record_proven(OpKind.STORE, ptr, mask, access, elem, data)
            if data is not None:
                run.memory.scatter(access, data, nx.storage_dtype(elem))
            return
        addr, enabled, shape = self._lanes(ptr, mask, None if value.is_skipped else value)
        access = self._check("out-of-bounds store", ptr, mask, addr, enabled, nx.itemsize(elem))
        if not run.compute_outputs:
            self._record(OpKind.STORE, ptr, mask, addr, enabled, access, elem)
            return
        data = _full(value.data, shape)
        self._record(OpKind.STORE, ptr, mask, addr, enabled, access, elem, values=data)
        run.memory.scatter(access, data, nx.storage_dtype(elem))

    # ------------------------------------------------------------------ atomics

    def _ordered_rounds(self, idx: np.ndarray) -> list[np.ndarray]:
        """Split lane positions (in program order) into rounds with unique addresses each."""
        order = np.argsort(idx, kind="stable")
        sorted_idx = idx[order]
        starts = np.r_[True, sorted_idx[1:] != sorted_idx[:-1]]
        group_start = np.maximum.accumulate(np.where(starts, np.arange(len(idx)), 0))
        rank = np.arange(len(idx)) - group_start
        return [np.sort(order[rank == r]) for r in range(int(rank.max()) + 1 if len(rank) else 0)]

    def _atomic(
        self, kind_attr: str, ptr: Value, mask: Value | None, operands: list[Value], combine
    ) -> Value:
        run = self.run
        run.yield_point()
        elem = ptr.dtype.element_ty
        site = run.site()
        if not run.compute_outputs and self._factored_lanes(OpKind.ATOMIC, ptr, mask) is not None:
            return Value(None, elem, Node("atomic", site, (ptr.node,)), skipped=frozenset([("atomic", site)]))
        addr, enabled, shape = self._lanes(ptr, mask, *operands)
        if shape[0] != run.pids.shape[0]:  # every program performs the atomic, even with uniform operands
            shape = (run.pids.shape[0], *shape[1:])
            addr, enabled = _full(addr, shape), _full(enabled, shape)
        access = self._check("out-of-bounds atomic", ptr, mask, addr, enabled, nx.itemsize(elem))
        site = run.site()
        if not run.compute_outputs:
            self._record(OpKind.ATOMIC, ptr, mask, addr, enabled, access, elem, op=kind_attr)
            return Value(None, elem, Node("atomic", site, (ptr.node,)), skipped=frozenset([("atomic", site)]))
        dtype = nx.storage_dtype(elem)
        vals = [_full(v.data, shape) for v in operands]
        old = np.zeros(shape, dtype=dtype)
        for st, lanes, idx in access.storages:
            flat_lanes = np.flatnonzero(lanes)
            if flat_lanes.size == 0:
                continue
            flat_idx = idx.reshape(-1)[flat_lanes]
            typed = st.typed(dtype)
            operand_flat = [v.reshape(-1)[flat_lanes] for v in vals]
            results = np.empty(flat_lanes.size, dtype=dtype)
            for rnd in self._ordered_rounds(flat_idx):
                where = flat_idx[rnd]
                before = typed[where].copy()
                results[rnd] = before
                run.memory.write_elements(st, dtype, where, combine(before, *(o[rnd] for o in operand_flat)))
            old.reshape(-1)[flat_lanes] = results
        self._record(OpKind.ATOMIC, ptr, mask, addr, enabled, access, elem, values=old, op=kind_attr)
        return self._new(old, elem, "atomic", ptr, mask, *operands)

    def atomic_rmw(self, op: str, ptr: Value, val: Value, mask: Value | None) -> Value:
        """Atomic read-modify-write in program order; returns the values each lane saw."""
        elem = ptr.dtype.element_ty
        if op == "FADD":

            def combine(old, v):
                if nx.is_low_float(elem):
                    return nx.from_float(nx.to_float32(old, elem) + nx.to_float32(v, elem), elem)
                return old + v
        else:
            base = _ATOMIC_INT[op]
            if op in ("UMAX", "UMIN"):

                def combine(old, v):
                    return base(_unsigned(old), _unsigned(v)).view(old.dtype)
            elif op in ("MAX", "MIN"):

                def combine(old, v):
                    return base(_signed(old), _signed(v)).view(old.dtype)
            else:

                def combine(old, v):
                    return base(old, v).astype(old.dtype)

        return self._atomic(op.lower(), ptr, mask, [val], combine)

    def atomic_cas(self, ptr: Value, cmp: Value, val: Value) -> Value:
        """Atomic compare-and-swap (bitwise compare) in program order."""

        def combine(old, c, v):
            bits = np.dtype(f"uint{old.dtype.itemsize * 8}")
            return np.where(old.view(bits) == np.asarray(c).view(bits), v, old)

        return self._atomic("cas", ptr, None, [cmp, val], combine)

    # ------------------------------------------------------------------ tensor descriptors

    def check_descriptor(self, desc: DescriptorValue) -> None:
        """Check a descriptor's rules and its extent against the allocation it points into."""
        run = self.run
        elem = desc.base.dtype.element_ty
        size = nx.itemsize(elem)
        base = desc.base.data.astype(np.uint64)
        strides = [s.data.astype(np.int64) for s in desc.strides]
        problems = []
        if np.any(base % 16):
            problems.append(
                (
                    "base address is not 16-byte aligned",
                    base % 16 != 0,
                    "allocate with 16-byte alignment or slice at a multiple of 16 bytes",
                )
            )
        if np.any(strides[-1] != 1):
            problems.append(("last stride is not 1", strides[-1] != 1, "make the last dimension contiguous"))
        for d, st in enumerate(strides[:-1]):
            bad = (st * size) % 16 != 0
            if np.any(bad):
                problems.append(
                    (
                        f"stride of dimension {d} is not a multiple of 16 bytes",
                        bad,
                        "pad the row length so every row starts 16-byte aligned",
                    )
                )
        if desc.block_shape[-1] * size < 16:
            problems.append(
                (
                    f"last block dimension is {desc.block_shape[-1] * size} bytes (< 16)",
                    np.ones(base.shape, dtype=bool),
                    "use a block of at least 16 bytes in the last dim",
                )
            )
        for message, lanes, fix in problems:
            lanes = np.broadcast_to(lanes, (max(base.shape[0], lanes.shape[0]),))
            run.fault(
                Fault(
                    kind="descriptor rule",
                    launch_id=run.launch_id,
                    kernel=run.kernel_name,
                    site=run.site(),
                    program_ids=run.pids,
                    bad=lanes,
                    message=message,
                    attrs={"fix": fix},
                    address_node=desc.node,
                )
            )

    def _descriptor_lanes(self, desc: DescriptorValue, indices: list[Value], block: list[int] | None = None):
        """Element addresses of the block at ``indices`` and which of them lie inside the shape."""
        elem = desc.base.dtype.element_ty
        size = nx.itemsize(elem)
        block = block or desc.block_shape
        nd = len(block)
        parts = (
            [desc.base.data.astype(np.uint64)]
            + [v.data for v in indices]
            + [v.data for v in desc.shape]
            + [v.data for v in desc.strides]
        )
        batch = max(p.shape[0] for p in parts)
        addr = np.broadcast_to(desc.base.data.astype(np.uint64).reshape(-1, *([1] * nd)), (batch, *block))
        offset = np.zeros((batch, *block), dtype=np.int64)
        inside = np.ones((batch, *block), dtype=bool)
        for d in range(nd):
            shape_d = [1] * (nd + 1)
            shape_d[d + 1] = block[d]
            coord = indices[d].data.astype(np.int64).reshape(-1, *([1] * nd)) + np.arange(block[d]).reshape(
                shape_d
            )
            offset = offset + coord * desc.strides[d].data.astype(np.int64).reshape(-1, *([1] * nd))
            inside = (
                inside & (coord >= 0) & (coord < desc.shape[d].data.astype(np.int64).reshape(-1, *([1] * nd)))
            )
        addr = addr + (offset * size).view(np.uint64)
        return addr, inside

    def _desc_ptr(self, desc: DescriptorValue) -> Value:
        return Value(desc.base.data, desc.base.dtype, desc.node, desc.base.prov)

    def descriptor_load(self, desc: DescriptorValue, indices: list[Value]) -> Value:
        """Block load; coordinates outside the descriptor's shape read the padding value."""
        run = self.run
        elem = desc.base.dtype.element_ty
        addr, inside = self._descriptor_lanes(desc, indices)
        ptr = self._desc_ptr(desc)
        access = self._check("out-of-bounds load", ptr, None, addr, inside, nx.itemsize(elem))
        site = run.site()
        coords = tuple(v.data for v in indices)
        if not run.computes(site):
            self._record(OpKind.DESCRIPTOR_LOAD, ptr, None, addr, inside, access, elem, coords=coords)
            return Value(None, elem, Node("descriptor_load", site, (desc.node,)), skipped=frozenset([site]))
        pad = np.full(addr.shape, np.nan, dtype=np.float32) if desc.padding == "nan" else None
        if pad is not None:
            pad = nx.from_float(pad, elem) if nx.is_low_float(elem) else pad.astype(nx.storage_dtype(elem))
        data = run.memory.gather(access, nx.storage_dtype(elem), pad)
        if desc.round_f32_to_tf32 and elem.name == "fp32":
            data = nx.round_to_tf32(data)
        self._record(
            OpKind.DESCRIPTOR_LOAD, ptr, None, addr, inside, access, elem, values=data, coords=coords
        )
        return self._new(data, elem, "descriptor_load", *indices)

    def descriptor_store(self, desc: DescriptorValue, value: Value, indices: list[Value]) -> None:
        """Block store; coordinates outside the descriptor's shape are not written."""
        run = self.run
        elem = desc.base.dtype.element_ty
        addr, inside = self._descriptor_lanes(desc, indices)
        ptr = self._desc_ptr(desc)
        access = self._check("out-of-bounds store", ptr, None, addr, inside, nx.itemsize(elem))
        coords = tuple(v.data for v in indices)
        if not run.compute_outputs:
            self._record(OpKind.DESCRIPTOR_STORE, ptr, None, addr, inside, access, elem, coords=coords)
            return
        data = _full(value.data, addr.shape)
        self._record(
            OpKind.DESCRIPTOR_STORE, ptr, None, addr, inside, access, elem, values=data, coords=coords
        )
        run.memory.scatter(access, data, nx.storage_dtype(elem))

    def _row_lanes(self, desc: DescriptorValue, x_offsets: Value, y_offset: Value):
        """Addresses for descriptor gather/scatter: rows ``x_offsets``, columns from ``y_offset``."""
        size = nx.itemsize(desc.base.dtype.element_ty)
        rows = x_offsets.data.astype(np.int64)  # (B, N)
        cols = y_offset.data.astype(np.int64).reshape(-1, 1, 1) + np.arange(desc.block_shape[-1]).reshape(
            1, 1, -1
        )
        rows3 = rows[..., None]
        stride0 = desc.strides[0].data.astype(np.int64).reshape(-1, 1, 1)
        stride1 = desc.strides[1].data.astype(np.int64).reshape(-1, 1, 1)
        inside = (
            (rows3 >= 0)
            & (rows3 < desc.shape[0].data.reshape(-1, 1, 1))
            & (cols >= 0)
            & (cols < desc.shape[1].data.reshape(-1, 1, 1))
        )
        offset = rows3 * stride0 + cols * stride1
        base = desc.base.data.astype(np.uint64).reshape(-1, 1, 1)
        addr = base + (offset * size).view(np.uint64)
        shape = np.broadcast_shapes(addr.shape, inside.shape)
        return np.broadcast_to(addr, shape), np.broadcast_to(inside, shape)

    def descriptor_gather(self, desc: DescriptorValue, x_offsets: Value, y_offset: Value) -> Value:
        """Gather whole rows through a 2-D descriptor."""
        run = self.run
        elem = desc.base.dtype.element_ty
        addr, inside = self._row_lanes(desc, x_offsets, y_offset)
        ptr = self._desc_ptr(desc)
        access = self._check("out-of-bounds load", ptr, None, addr, inside, nx.itemsize(elem))
        data = run.memory.gather(access, nx.storage_dtype(elem), None)
        self._record(OpKind.DESCRIPTOR_LOAD, ptr, None, addr, inside, access, elem, values=data, gather=True)
        return self._new(data, elem, "descriptor_gather", x_offsets, y_offset)

    def descriptor_scatter(
        self, desc: DescriptorValue, value: Value, x_offsets: Value, y_offset: Value
    ) -> None:
        """Scatter whole rows through a 2-D descriptor."""
        run = self.run
        elem = desc.base.dtype.element_ty
        addr, inside = self._row_lanes(desc, x_offsets, y_offset)
        ptr = self._desc_ptr(desc)
        access = self._check("out-of-bounds store", ptr, None, addr, inside, nx.itemsize(elem))
        if not run.compute_outputs:
            return
        data = _full(value.data, addr.shape)
        self._record(
            OpKind.DESCRIPTOR_STORE, ptr, None, addr, inside, access, elem, values=data, scatter=True
        )
        run.memory.scatter(access, data, nx.storage_dtype(elem))

    def descriptor_reduce(self, kind: str, desc: DescriptorValue, value: Value, indices: list[Value]) -> None:
        """Atomic reduction of a block into the descriptor's tensor (add, min, max, and, or, xor)."""
        elem = desc.base.dtype.element_ty
        addr, inside = self._descriptor_lanes(desc, indices)
        ptr = Value(addr, desc.base.dtype, desc.node, desc.base.prov)
        mask = Value(inside, tl.int1, None)
        op = {
            "ADD": "FADD" if elem.is_floating() else "ADD",
            "MIN": "MIN",
            "MAX": "MAX",
            "AND": "AND",
            "OR": "OR",
            "XOR": "XOR",
        }.get(kind)
        if op is None:
            self.run.unsupported(f"descriptor reduce {kind.lower()}")
        if op in ("MIN", "MAX") and elem.is_int_unsigned():
            op = "U" + op
        self.atomic_rmw(op, ptr, value, mask)
