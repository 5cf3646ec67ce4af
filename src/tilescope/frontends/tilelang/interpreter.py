"""The interpreter of a TileLang PrimFunc's statements, for every program of a batch at once.

``T.Kernel``'s block indices are the engine's program ids; its thread indices are not modelled
(tile operations and ``T.Parallel`` loops are block-level: the engine does the whole tile at once).
Serial and pipelined loops (``range``, ``T.serial``, ``T.Pipelined``, ``T.unroll``) run their
iterations in order and tell the engine where they are; a ``T.Parallel`` nest runs its body once
over the nest's whole index space (:mod:`exprs`). An ``if`` inside a parallel nest enables only
the lanes it selects; elsewhere an ``if`` on a value the programs disagree on splits the batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...engine import ops
from ...engine.ops import Op
from ..values import apply_broadcast, cast
from .buffers import GlobalBuffer, LocalBuffer, engine_dtype
from .exprs import THREAD, Frame, evaluate, key, static_int, write_local
from .spans import SpanSites
from .tileops import HINTS, TILE_OPS
from .tir import tirx

_BLOCK_AXES = {"blockIdx.x": 0, "blockIdx.y": 1, "blockIdx.z": 2}
_PARALLEL = tirx.ForKind.PARALLEL


def run(frame: Frame, stmt: Any, sites: SpanSites) -> None:
    """Execute ``stmt`` for every program of the running batch."""
    before = sites.enter(stmt)
    try:
        rule = _RULES.get(type(stmt))
        if rule is None:
            frame.launch.unsupported(f"TileLang statement {type(stmt).__name__}")
        rule(frame, stmt, sites)
    finally:
        sites.leave(before)


def _seq(frame: Frame, stmt: Any, sites: SpanSites) -> None:
    for s in stmt.seq:
        run(frame, s, sites)


def _block_realize(frame: Frame, stmt: Any, sites: SpanSites) -> None:
    run(frame, stmt.block, sites)


def _block(frame: Frame, stmt: Any, sites: SpanSites) -> None:
    for buf in stmt.alloc_buffers:
        shape = tuple(static_int(frame, n) for n in buf.shape)
        frame.buffers[buf.data.__chandle__()] = LocalBuffer(
            buf.name, shape, engine_dtype(buf.dtype), buf.scope()
        )
    for match in stmt.match_buffers:
        frame.launch.unsupported(f"T.match_buffer of {match.buffer.name} inside the kernel")
    run(frame, stmt.body, sites)


def _bind(frame: Frame, stmt: Any, sites: SpanSites) -> None:
    value = stmt.value
    if isinstance(value, tirx.Call) and value.op.name == "tl.launch_thread_idx":
        frame.env[key(stmt.var)] = THREAD
    else:
        frame.env[key(stmt.var)] = evaluate(frame, value)


def _attr(frame: Frame, stmt: Any, sites: SpanSites) -> None:
    run(frame, stmt.body, sites)


def _for(frame: Frame, stmt: tirx.For, sites: SpanSites) -> None:
    launch = frame.launch
    binding = stmt.thread_binding
    if binding is not None:
        tag = binding.thread_tag
        if tag not in _BLOCK_AXES:
            launch.unsupported(f"a loop bound to {tag}")
        frame.env[key(stmt.loop_var)] = ops.program_id(launch, _BLOCK_AXES[tag])
        run(frame, stmt.body, sites)
        return
    if stmt.kind == _PARALLEL:
        _parallel(frame, stmt, sites)
        return
    if frame.shape:
        launch.unsupported("a serial loop inside a T.Parallel loop")
    start, extent = static_int(frame, stmt.min), static_int(frame, stmt.extent)
    var = key(stmt.loop_var)
    dtype = engine_dtype(stmt.loop_var.dtype)
    loop = launch.loop_enter(launch.site())
    try:
        for i in range(extent):
            launch.loop_iterate(loop, i)
            frame.env[var] = ops.constant(start + i, dtype)
            run(frame, stmt.body, sites)
    finally:
        launch.loop_exit(loop)


def _parallel(frame: Frame, stmt: tirx.For, sites: SpanSites) -> None:
    """A ``T.Parallel`` nest: its perfectly nested parallel loops become the axes of one block."""
    loops = [stmt]
    while isinstance(loops[-1].body, tirx.For) and loops[-1].body.kind == _PARALLEL:
        loops.append(loops[-1].body)
    body = loops[-1].body
    launch = frame.launch
    if frame.shape:
        launch.unsupported("a T.Parallel loop nested inside another one below other statements")
    outer = (dict(frame.lanes), frame.shape)
    extents = tuple(static_int(frame, loop.extent) for loop in loops)
    for axis, loop in enumerate(loops):
        lane = ops.arange(launch, 0, extents[axis])
        shape = tuple(extents[axis] if k == axis else 1 for k in range(len(loops)))
        lane = ops.apply(launch, Op.RESHAPE, lane, shape=shape)
        if not (isinstance(loop.min, tirx.IntImm) and loop.min.value == 0):
            lane = apply_broadcast(Op.ADD, [cast(evaluate(frame, loop.min), lane.dtype), lane])
        frame.env[key(loop.loop_var)] = cast(lane, engine_dtype(loop.loop_var.dtype))
        frame.lanes[key(loop.loop_var)] = axis
    frame.shape = extents
    try:
        run(frame, body, sites)
    finally:
        frame.lanes, frame.shape = outer


def _if(frame: Frame, stmt: Any, sites: SpanSites) -> None:
    cond = evaluate(frame, stmt.condition)
    if all(n == 1 for n in cond.shape):
        taken = bool(frame.launch.decide(cond.data, frame.launch.site()))
        branch = stmt.then_case if taken else stmt.else_case
        if branch is not None:
            run(frame, branch, sites)
        return
    outer = frame.mask
    for branch, lanes in ((stmt.then_case, cond), (stmt.else_case, None)):
        if branch is None:
            continue
        if lanes is None:
            lanes = apply_broadcast(Op.EQ, [cond, ops.constant(False, cond.dtype)])
        frame.mask = lanes if outer is None else apply_broadcast(Op.AND, [outer, lanes])
        try:
            run(frame, branch, sites)
        finally:
            frame.mask = outer


def _store(frame: Frame, stmt: tirx.BufferStore, sites: SpanSites) -> None:
    buf = frame.buffer(stmt.buffer)
    value = evaluate(frame, stmt.value)
    if isinstance(buf, GlobalBuffer):
        indices = [evaluate(frame, i) for i in stmt.indices]
        buf.store(frame.launch, indices, value, frame.mask, guard=bool(frame.shape))
    else:
        write_local(frame, buf, list(stmt.indices), value)


def _evaluate(frame: Frame, stmt: tirx.Evaluate, sites: SpanSites) -> None:
    call = stmt.value
    if not isinstance(call, tirx.Call):
        return  # a bare expression statement: nothing observable
    name = call.op.name if hasattr(call.op, "name") else str(call.op)
    op = TILE_OPS.get(name)
    if op is not None:
        op(frame, call)
    elif name not in HINTS:
        frame.launch.unsupported(f"TileLang operation {name.removeprefix('tl.tileop.')}")


def _assert(frame: Frame, stmt: Any, sites: SpanSites) -> None:
    frame.launch.device_assert(evaluate(frame, stmt.condition), str(stmt.message))
    run(frame, stmt.body, sites)


_RULES: dict[type, Callable[[Frame, Any, SpanSites], None]] = {
    tirx.SeqStmt: _seq,
    tirx.SBlockRealize: _block_realize,
    tirx.SBlock: _block,
    tirx.Bind: _bind,
    tirx.AttrStmt: _attr,
    tirx.For: _for,
    tirx.IfThenElse: _if,
    tirx.BufferStore: _store,
    tirx.Evaluate: _evaluate,
    tirx.AssertStmt: _assert,
}


def grid(func: tirx.PrimFunc, size: Callable[[Any], int]) -> tuple[int, int, int]:
    """The launch grid ``T.Kernel`` declares: the extents of the loops bound to blockIdx.x/y/z
    (``size`` folds an extent to an int before the launch)."""
    dims = [1, 1, 1]
    stack = [func.body]
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, tirx.For) and stmt.thread_binding is not None:
            axis = _BLOCK_AXES.get(stmt.thread_binding.thread_tag)
            if axis is not None:
                dims[axis] = size(stmt.extent)
        for name in ("body", "block"):
            child = getattr(stmt, name, None)
            if isinstance(child, tirx.Stmt):
                stack.append(child)
        if isinstance(stmt, tirx.SeqStmt):
            stack.extend(stmt.seq)
    return dims[0], dims[1], dims[2]
