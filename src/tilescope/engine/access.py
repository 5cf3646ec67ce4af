"""The one memory-access pipeline: check, fault, demand, record, move.

Every memory op of every frontend (loads, stores, each atomic, tensor-descriptor loads, stores,
gathers, scatters and reductions, a DSL's transfers) is a :class:`Request` handed to
:func:`perform`, which for every op alike:

1. **check**: proves the whole access in bounds from its factored form (per-program scalar plus a
   shared block: O(B + S) for B programs of S lanes) or, failing that, checks every enabled lane
   against the tensor its pointer came from (:class:`~tilescope.engine.memory.AddressTable`);
2. **fault**: reports lanes outside their tensor, and lanes whose address came from wrapped int32
   arithmetic, as one :class:`~tilescope.ir.Fault` (a finding, or an error nobody handles); under
   ``bounds="warn"``, lanes outside their view but inside its storage move data as on the GPU and
   are a second, non-fatal fault;
3. **demand**: decides whether data moves (a demand-driven run reads only what someone needs and
   writes nothing);
4. **record**: builds exactly one op record for clients that subscribed, in every mode;
5. **move**: reads, writes or updates only the in-bounds enabled lanes, through NumPy views of the
   user's tensors (nothing is dereferenced raw).

Atomics (:mod:`atomics`) and descriptors (:mod:`descriptors`) compute their addresses and update
functions, then call :func:`perform`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ir import AffineAddress, Fault, FaultKind, Node, OpKind, RowAddress
from . import iterations
from .affine import Affine, Predicate, Rows, fact, known, prove
from .dtypes import DType
from .errors import KernelError
from .memory import UNKNOWN, Access, Strided
from .values import Value

#: the fault kind of an out-of-bounds lane, by what the op does to memory
FAULTS = {
    "read": FaultKind.OUT_OF_BOUNDS_LOAD,
    "write": FaultKind.OUT_OF_BOUNDS_STORE,
    "update": FaultKind.OUT_OF_BOUNDS_ATOMIC,
}
#: the fault kind of a lane outside its argument's view but inside its storage (``bounds="warn"``)
OUTSIDE_VIEW = {
    "read": FaultKind.LOAD_OUTSIDE_VIEW,
    "write": FaultKind.STORE_OUTSIDE_VIEW,
    "update": FaultKind.ATOMIC_OUTSIDE_VIEW,
}


@dataclass(repr=False, eq=False)
class Request:
    """One memory op of a batch: what it touches, how, and what it carries.

    ``effect`` is "read", "write" or "update" (an atomic read-modify-write). ``pointer`` holds the
    byte addresses (a pointer value, per lane or factored) and ``mask`` the enabled lanes (None:
    all). ``stored`` is what a write stores; ``fill`` what disabled or out-of-shape lanes of a read
    return (a value or an array; default zero); ``update(old, *operands) -> new`` is an atomic's
    combine (None: an atomic that only reads). ``coords`` and ``block_shape`` describe a
    descriptor access; ``attrs`` go on the record as they are.
    """

    kind: OpKind
    effect: str
    pointer: Value
    element: DType
    mask: Value | None = None
    stored: Value | None = None
    fill: Value | np.ndarray | None = None
    update: Callable[..., np.ndarray] | None = None
    operands: list[Value] = field(default_factory=list)
    node: Node | None = None  # expression graph of the address (default: the pointer's)
    coords: tuple[np.ndarray, ...] | None = None
    block_shape: tuple[int, ...] = ()
    attrs: dict = field(default_factory=dict)
    returns: bool = True  # reads and updates give a value back
    after_read: Callable[[np.ndarray], np.ndarray] | None = None  # e.g. tf32 rounding of a descriptor load


@dataclass(repr=False, eq=False)
class _Checked:
    """The outcome of the check step."""

    access: Access | None  # element indices of the in-bounds lanes (None: not built, nothing moves)
    shape: tuple[int, ...]  # (B, *block) of the access
    address: np.ndarray | None  # per-lane byte addresses (None when proven factored)
    affine: Affine | None  # the factored address of a proven access
    enabled: np.ndarray | None  # enabled lanes (None: every lane)
    proven: bool


def perform(launch: Any, req: Request) -> Value | None:
    """Run one memory op for every program of the batch; the loaded or old values, if it returns any."""
    launch.yield_point()
    launch.ops += 1
    if req.kind is OpKind.ATOMIC or req.attrs.get("volatile"):
        if launch.rows is not None:  # its result depends on the order of the iterations
            raise iterations.LoopRowsConflict(launch.rows.site)
        launch.note_sync()
    site = launch.site()
    wants = launch.hub.wants(req.kind)
    moves = _moves(launch, req, site)
    if req.effect != "read" and req.pointer.prov >= 0:  # also when outputs are not computed (sanitizer)
        _check_writable(launch, req, site)
    checked = _prove(launch, req, wants or moves)
    if checked is None and (moves or wants) and req.effect == "read":
        checked = _prove_rows(launch, req, wants)
    if checked is None:
        checked = _check(launch, req)
    if launch.rows is not None and launch.compute_outputs:  # (a run that writes nothing cannot conflict)
        _note_rows(launch, req, checked)
    data = _move(launch, req, checked) if moves else None
    if wants:
        _record(launch, req, checked, data, site)
    if not req.returns:
        return None
    inputs = (req.pointer, req.mask, *req.operands)
    graph = Node(req.kind.value, site, tuple(v.node for v in inputs if v is not None and v.node is not None))
    if data is None:
        origin = site if req.effect == "read" else ("atomic", site)
        return Value(None, req.element, graph, skipped=frozenset([origin]), shape=checked.shape[1:])
    launch.work += data.size
    value = Value(data, req.element, graph)
    if req.element.is_pointer:
        value.prov = UNKNOWN  # a pointer read from memory: its tensor is found by address when used
    return value


def _note_rows(launch: Any, req: Request, checked: _Checked) -> None:
    """Keep the byte range each row of a loop running as rows touches (:func:`iterations.note_access`)."""
    last = req.element.itemsize - 1
    if checked.affine is not None:
        block = checked.affine.block
        if block.size == 0:
            return
        lo = checked.affine.scalar + int(block.min())
        hi = checked.affine.scalar + int(block.max()) + last
    else:
        addr = checked.address
        if addr is None or addr.size == 0:
            return
        flat = np.ascontiguousarray(addr).reshape(addr.shape[0], -1).view(np.int64)
        if checked.enabled is None:
            lo, hi = flat.min(axis=1), flat.max(axis=1) + last
        else:
            on = np.broadcast_to(checked.enabled, addr.shape).reshape(addr.shape[0], -1)
            lo = np.where(on, flat, np.iinfo(np.int64).max).min(axis=1)
            hi = np.where(on, flat, np.iinfo(np.int64).min).max(axis=1) + last
    prov = req.pointer.prov
    key = id(launch.memory.views[prov].storage) if prov >= 0 else None
    iterations.note_access(launch, key, lo, hi, req.effect != "read")


def _check_writable(launch: Any, req: Request, site: Any) -> None:
    """Refuse a write through a pointer into a read-only array, at the user's store or atomic."""
    view = launch.memory.views[req.pointer.prov]
    if not view.writable:
        what = {OpKind.STORE: "a store", OpKind.ATOMIC: "an atomic"}.get(req.kind, f"a {req.kind.value}")
        raise KernelError(
            f"{what} writes to `{view.info.name}`, a read-only NumPy array (flags.writeable is False: a "
            "broadcast, a view of read-only memory, or set so); pass a writable array (x.copy())",
            kernel=launch.kernel_name,
            site=site,
        )


def _moves(launch: Any, req: Request, site: Any) -> bool:
    """The demand step: whether this op's data moves in this run."""
    if req.effect == "read":
        return launch.computes(site)
    return launch.compute_outputs


# ------------------------------------------------------------------ check


def _factored_mask(mask: Value | None) -> tuple[bool, Predicate | np.ndarray | None]:
    """(usable, mask in factored form) for the proof."""
    if mask is None:
        return True, None
    if isinstance(mask.lazy, Predicate):
        return True, mask.lazy
    if mask.lazy is None and mask._data is not None and mask._data.shape[0] == 1:
        return True, mask._data
    return False, None


def _prove(launch: Any, req: Request, build: bool) -> _Checked | None:
    """The check step's fast path: the whole access proven in bounds from its factored form.

    Returns None when the access is not factored or the proof fails (then every lane is checked).
    ``build``: whether element indices are needed (data moves or a record is wanted).
    """
    ptr = req.pointer
    if not isinstance(ptr.lazy, Affine) or ptr.prov < 0:
        return None
    usable, lanes = _factored_mask(req.mask)
    if not usable:
        return None
    memory = launch.memory
    view = memory.views[ptr.prov]
    lo, hi = memory.extent(view)
    itemsize = req.element.itemsize
    if not prove(ptr.lazy, lanes, lo, hi, itemsize):
        return None
    addr = ptr.lazy
    block_shape = np.broadcast_shapes(addr.block.shape[1:], *([] if req.mask is None else [req.mask.shape]))
    if not build:
        return _Checked(None, (1, *block_shape), None, addr, None, True)
    shape, enabled, ok, none = _lanes(launch, req, lanes, addr.scalar.shape[0], block_shape)
    st = view.storage
    # uneven program starts (a 2-D grid's tiles) are moved block by block for reads, and for
    # writes of every lane (a masked write moves only its enabled lanes, by index)
    per_program = req.effect == "read" or (req.effect == "write" and enabled is None)
    box = strided_box(addr, st, itemsize, shape, per_program=per_program)
    if box is not None:
        access = Access(ok, none, none, [(st, ok, None)], view, box, whole=enabled is None)
    else:
        idx_block = (addr.block - st.base) // itemsize
        idx = (addr.scalar // itemsize).reshape(-1, *([1] * (idx_block.ndim - 1))) + idx_block
        access = Access(ok, none, none, [(st, ok, np.broadcast_to(idx, shape))], view)
    return _Checked(access, shape, None, addr, enabled, True)


def _lanes(
    launch: Any, req: Request, lanes: Predicate | np.ndarray | None, batch: int, block_shape: tuple
) -> tuple[tuple[int, ...], np.ndarray | None, np.ndarray, np.ndarray]:
    """(shape, enabled, ok, bad) of a proven access: ``batch`` programs' addresses of ``block_shape``
    lanes; enabled is None when every lane is; ok and bad are read-only broadcasts."""
    everywhere = req.mask is None or (isinstance(lanes, Predicate) and lanes.all_true())
    if req.effect == "update" or launch.active is not None:
        batch = max(batch, launch.pids.shape[0])
    for a in _operand_arrays(req, with_mask=not everywhere):
        batch = max(batch, a.shape[0])
    shape = (batch, *block_shape)
    enabled = None if everywhere else np.broadcast_to(req.mask.data, shape)
    active = launch.active_column(len(shape) - 1)
    if active is not None:
        enabled = np.broadcast_to(active, shape) if enabled is None else enabled & active
    # read-only broadcasts: nothing writes an access's lane masks
    ok = np.broadcast_to(True, shape) if enabled is None else enabled
    return shape, enabled, ok, np.broadcast_to(False, shape)


def _prove_rows(launch: Any, req: Request, record: bool) -> _Checked | None:
    """A read through per-row pointers from data plus shared columns (an embedding lookup), proven
    in bounds row by row and moved a row at a time; None when the form or the proof does not hold
    (then every lane is checked). With ``record`` a client records the op: it gets the row form."""
    ptr = req.pointer
    if not isinstance(ptr.lazy, Rows) or ptr.prov < 0 or (record and ptr.wrapped is not None):
        return None  # (a wrapped address is a finding for the clients: checked lane by lane)
    usable, lanes = _factored_mask(req.mask)
    if not usable or (isinstance(lanes, Predicate) and lanes.terms):
        return None
    memory = launch.memory
    view = memory.views[ptr.prov]
    box = row_box(ptr.lazy, view.storage, req.element.itemsize, *memory.extent(view))
    if box is None:
        return None
    block_shape = np.broadcast_shapes(ptr.lazy.shape(), *([] if req.mask is None else [req.mask.shape]))
    shape, enabled, ok, none = _lanes(launch, req, lanes, box.rows.shape[0], block_shape)
    if shape[1:] != ptr.lazy.shape():
        return None  # a mask wider than the address: lanes the rows do not describe
    rows = np.broadcast_to(box.rows, (shape[0], *box.rows.shape[1:]))
    box = Strided(box.storage, box.offset, box.strides, rows)
    access = Access(ok, none, none, [(view.storage, ok, None)], view, box, whole=enabled is None)
    # a recorded read keeps the row form (the record's ``address_rows``); per-lane addresses only
    # where a loop running as rows notes the bytes it touches
    address = (
        np.broadcast_to(ptr.lazy.materialize(np.uint64), shape)
        if record and launch.rows is not None
        else None
    )
    return _Checked(access, shape, address, None, enabled, True)


def row_box(addr: Rows, storage: Any, itemsize: int, lo: int, hi: int) -> Strided | None:
    """The lanes of ``addr`` as rows of one strided block each, when every row's block lies in the
    byte range [lo, hi) of ``storage`` (aligned) and the rows index the leading block axes while the
    shared block varies only on the trailing ones (``idx[:, None] * D + cols[None, :]``); else None.
    """
    rows, block = addr.rows, addr.block
    varies = [n > 1 for n in block.shape[1:]]
    if not any(varies):
        return None
    k = varies.index(True)  # the first block axis the shared block varies on
    if any(varies[:k]) or any(n > 1 for n in rows.shape[1 + k :]):
        return None
    if np.any(rows % itemsize) or np.any(block % itemsize):
        return None
    low, high = int(rows.min()), int(rows.max())
    if low + int(block.min()) < lo or high + int(block.max()) > hi - itemsize:
        return None
    lanes = _lane_steps(block.reshape(block.shape[1 + k :]))
    if lanes is None:
        return None
    origin, steps = lanes
    start = low + origin - storage.base
    starts = rows.reshape(rows.shape[: 1 + k]) - low
    return Strided(storage, start // itemsize, (0,) * (1 + k) + tuple(s // itemsize for s in steps),
                   starts // itemsize)  # fmt: skip


def _lane_steps(block: np.ndarray) -> tuple[int, list[int]] | None:
    """(origin, step per axis) when every lane of ``block`` (no program axis) is exactly
    ``origin + sum(index_d * step_d)``, as ``tl.arange`` arithmetic gives; else None."""
    origin = int(block.flat[0]) if block.size else 0
    steps = []
    expected = np.full(block.shape, origin, dtype=np.int64)
    for axis, n in enumerate(block.shape):
        index = [0] * block.ndim
        index[axis] = 1 if n > 1 else 0
        step = int(block[tuple(index)]) - origin if n > 1 else 0
        steps.append(step)
        along = [1] * block.ndim
        along[axis] = n
        expected = expected + (np.arange(n, dtype=np.int64) * step).reshape(along)
    return (origin, steps) if np.array_equal(expected, block) else None


def strided_box(
    addr: Affine, storage: Any, itemsize: int, shape: tuple[int, ...], per_program: bool = False
) -> Strided | None:
    """The access as a strided box of ``storage`` when its lanes form one, and the whole box (every
    lane, enabled or not) lies inside the storage; else None.

    The shared block must be an affine function of the lane index (``tl.arange`` arithmetic),
    checked exactly. The per-program part must step evenly from program to program, unless
    ``per_program`` (reads, writes of every lane): then uneven starts (a 2-D grid's tiles) give a
    box with ``rows``.
    """
    scalar, block = addr.scalar, addr.block
    batch = shape[0]
    if scalar.size != batch and scalar.size != 1:
        return None
    rows = None
    program_step = 0
    if scalar.size > 1:
        steps = np.diff(scalar)
        if steps.size and not np.all(steps == steps[0]):
            if not per_program:
                return None
            rows = scalar - scalar.min()
        else:
            program_step = int(steps[0]) if steps.size else 0
    lanes = fact(block, ("lanes", shape[1:]), lambda b: _lane_steps(np.broadcast_to(b, (1, *shape[1:]))[0]))
    if lanes is None:
        return None
    origin, lane_steps = lanes
    byte_steps = [program_step, *lane_steps]
    if any(s % itemsize for s in byte_steps):
        return None
    if rows is not None and np.bitwise_or.reduce(rows) % itemsize:
        return None
    start = int(scalar.flat[0] if rows is None else scalar.min()) + origin - storage.base
    extents = [(n - 1) * s for n, s in zip(shape, byte_steps, strict=True)]
    if rows is not None:
        extents.append(int(rows.max()))
    lowest = start + sum(e for e in extents if e < 0)
    highest = start + sum(e for e in extents if e > 0) + itemsize
    if start % itemsize or lowest < 0 or highest > storage.nbytes:
        return None
    steps = tuple(s // itemsize for s in byte_steps)
    return Strided(storage, start // itemsize, steps, None if rows is None else rows // itemsize)


def _check(launch: Any, req: Request) -> _Checked:
    """The check step, lane by lane; reports the fault step's findings."""
    ptr = req.pointer
    addr = ptr.data
    batch = max(a.shape[0] for a in [addr, *_operand_arrays(req)])
    active = launch.active_column(0)
    if req.effect == "update" or active is not None:
        batch = max(batch, launch.pids.shape[0])  # every program performs the atomic
    block = addr.shape[1:] if req.mask is None else np.broadcast_shapes(addr.shape[1:], req.mask.shape)
    shape = (batch, *block)
    addr = np.broadcast_to(addr, shape)
    enabled = np.ones(shape, dtype=bool) if req.mask is None else np.broadcast_to(req.mask.data, shape)
    if active is not None:
        enabled = enabled & launch.active_column(len(block))
    memory = launch.memory
    access = memory.check(addr, enabled, ptr.prov, req.element.itemsize)
    wrapped = None
    if ptr.wrapped is not None:
        wrapped = np.broadcast_to(ptr.wrapped, shape) & enabled
        if not wrapped.any():
            wrapped = None
    if access.bad.any() or wrapped is not None:
        view = access.view
        if view is None and access.bad.any():
            view = memory.view_of(int(addr[access.bad][0]))
        fault(
            launch,
            FAULTS[req.effect],
            bad=access.bad,
            address=addr,
            view=view.info if view is not None else None,
            misaligned=access.misaligned,
            wrapped=wrapped,
            address_node=req.node if req.node is not None else ptr.node,
            mask_node=None if req.mask is None else req.mask.node,
        )
    outside = access.outside_view
    if outside is not None and wrapped is not None:
        outside = outside & ~wrapped  # the wrap is the bug there, wherever the address landed
    if outside is not None and outside.any():
        fault(
            launch,
            OUTSIDE_VIEW[req.effect],
            bad=outside,
            address=addr,
            view=access.view.info,
            address_node=req.node if req.node is not None else ptr.node,
            mask_node=None if req.mask is None else req.mask.node,
        )
    return _Checked(
        access, shape, addr, None, None if req.mask is None and active is None else enabled, False
    )


def _operand_arrays(req: Request, with_mask: bool = True) -> list[np.ndarray]:
    """The arrays of the mask (unless a proof made it moot) and the data an op carries (those
    computed in this run)."""
    mask = req.mask if with_mask else None
    values = (mask, req.stored, req.fill if isinstance(req.fill, Value) else None, *req.operands)
    arrays = [v.data for v in values if v is not None and not v.is_skipped]
    if isinstance(req.fill, np.ndarray):
        arrays.append(req.fill)
    return arrays


def fault(launch: Any, kind: FaultKind, *, bad: np.ndarray, **details: Any) -> None:
    """The one fault constructor: a fault of the current op, handed to the launch."""
    launch.fault(
        Fault(
            kind=kind,
            launch_id=launch.launch_id,
            kernel=launch.kernel_name,
            site=launch.site(),
            program_ids=launch.pids,
            bad=bad,
            loops=launch.loop_state(),
            **details,
        )
    )


# ------------------------------------------------------------------ move


def _move(launch: Any, req: Request, checked: _Checked) -> np.ndarray | None:
    """The move step: read, write or update the in-bounds enabled lanes."""
    memory = launch.memory
    access = checked.access
    storage = req.element.storage
    if req.effect == "read":
        fill = req.fill.data if isinstance(req.fill, Value) else req.fill
        data = memory.gather(access, storage, fill, launch.site())
        return req.after_read(data) if req.after_read is not None else data
    if req.effect == "write":
        values = np.broadcast_to(req.stored.data, checked.shape)
        memory.scatter(access, values, storage)
        return values
    return _update(memory, access, checked.shape, storage, req)


def _ordered_rounds(idx: np.ndarray) -> list[np.ndarray]:
    """Split lane positions (in program order) into rounds with unique addresses each."""
    order = np.argsort(idx, kind="stable")
    sorted_idx = idx[order]
    starts = np.r_[True, sorted_idx[1:] != sorted_idx[:-1]]
    group_start = np.maximum.accumulate(np.where(starts, np.arange(len(idx)), 0))
    rank = np.arange(len(idx)) - group_start
    return [np.sort(order[rank == r]) for r in range(int(rank.max()) + 1 if len(rank) else 0)]


def _update(memory: Any, access: Access, shape: tuple, storage: np.dtype, req: Request) -> np.ndarray:
    """An atomic read-modify-write of every enabled in-bounds lane, in program order.

    Lanes that hit the same element apply one after another (lowest program first, then lane
    order), so contended updates see each other as on the GPU; the result is the old value each
    lane saw.
    """
    vals = [np.broadcast_to(v.data, shape) for v in req.operands]
    old = np.zeros(shape, dtype=storage)
    memory.settle(access, storage)  # an earlier store of the attempt may still be pending
    for st, lanes, idx in access.indexed():
        flat_lanes = np.flatnonzero(lanes)
        if flat_lanes.size == 0:
            continue
        flat_idx = np.broadcast_to(idx, shape).reshape(-1)[flat_lanes]
        typed = st.typed(storage)
        operands = [v.reshape(-1)[flat_lanes] for v in vals]
        results = np.empty(flat_lanes.size, dtype=storage)
        for rnd in _ordered_rounds(flat_idx):
            where = flat_idx[rnd]
            before = typed[where].copy()
            results[rnd] = before
            memory.write_elements(st, storage, where, req.update(before, *(o[rnd] for o in operands)))
        old.reshape(-1)[flat_lanes] = results
    return old


# ------------------------------------------------------------------ record


def _record(launch: Any, req: Request, checked: _Checked, data: np.ndarray | None, site: Any) -> None:
    """The record step: exactly one op record for this access."""
    access = checked.access
    in_bounds = None
    if access is not None and not checked.proven and access.bad.any():
        in_bounds = access.ok
    values = None
    if data is not None and launch.hub.needs_values:
        values = (
            data if req.attrs.get("op") != "store" else np.broadcast_to(req.operands[0].data, checked.shape)
        )
    affine = None
    if checked.affine is not None:
        block = checked.affine.block  # the lane steps, when moving the data already worked them out
        lanes = known(block, ("lanes", block.shape[1:])) if block.size else None
        steps = None if lanes is None else (lanes[0], tuple(lanes[1]))
        affine = AffineAddress(checked.affine.scalar, block, steps)
    rows = None
    lazy = req.pointer.lazy
    if checked.affine is None and isinstance(lazy, Rows) and lazy.shape() == tuple(checked.shape[1:]):
        rows = RowAddress(lazy.rows, lazy.block)
    launch.emit_op(
        kind=req.kind,
        site=site,
        dtype=str(req.element),
        itemsize=req.element.itemsize,
        shape=tuple(checked.shape[1:]),
        address=checked.address,
        address_affine=affine,
        address_rows=rows,
        mask=checked.enabled,  # None: every lane (no mask, or one proven true everywhere)
        in_bounds=in_bounds,
        values=values,
        argument=_argument(launch, req, access),
        coords=req.coords,
        block_shape=tuple(req.block_shape),
        address_node=req.node if req.node is not None else req.pointer.node,
        mask_node=None if req.mask is None else req.mask.node,
        attrs=dict(req.attrs),
    )


def _argument(launch: Any, req: Request, access: Access | None) -> str | None:
    """The tensor argument the access belongs to (its pointer's, else the one its lanes landed in)."""
    if req.pointer.prov >= 0:
        return launch.memory.views[req.pointer.prov].info.name
    if access is not None and access.view is not None:
        return access.view.info.name
    return None


def load(
    launch: Any, ptr: Value, mask: Value | None = None, other: Value | None = None, volatile: bool = False
) -> Value:
    """A (masked) load; disabled lanes take ``other`` (or zero)."""
    return perform(launch, Request(
        OpKind.LOAD, "read", ptr, ptr.dtype.pointee, mask=mask, fill=other,
        attrs={"volatile": True} if volatile else {},
    ))  # fmt: skip


def store(launch: Any, ptr: Value, value: Value, mask: Value | None = None) -> None:
    """A (masked) store of the in-bounds enabled lanes."""
    perform(
        launch, Request(OpKind.STORE, "write", ptr, ptr.dtype.pointee, mask=mask, stored=value, returns=False)
    )
