"""TileLang expressions (TIR ``PrimExpr``) evaluated as engine values, one block per program.

Inside ``T.Parallel`` loops an expression is evaluated once for every element of the loop nest:
each parallel loop variable is an ``arange`` along its own axis of the nest (``Frame.lanes``), so
``A[by * 64 + i, j] * 2`` is one engine op per operator over the whole tile, as the GPU's threads
would do element by element. Outside them an expression is a scalar per program.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...engine import ops
from ...engine.ops import Op
from ...engine.values import Value
from ..values import apply_broadcast, cast
from .buffers import GlobalBuffer, LocalBuffer, engine_dtype
from .tir import tirx

#: a loop or thread variable that may not appear in values (threadIdx of ``T.Kernel(threads=)``)
THREAD = object()


@dataclass
class Frame:
    """What the interpreter knows while it runs a statement: the launch, variables, buffers, and the
    parallel loop nest (``lanes``: variable -> axis; ``shape``: the nest's extents) with the lanes
    enabled in it (``mask``; None: every lane)."""

    launch: Any
    env: dict = field(default_factory=dict)
    buffers: dict = field(default_factory=dict)
    lanes: dict = field(default_factory=dict)
    shape: tuple[int, ...] = ()
    mask: Value | None = None

    def buffer(self, buf: tirx.Buffer) -> GlobalBuffer | LocalBuffer:
        """The engine buffer behind a TIR buffer."""
        found = self.buffers.get(buf.data.__chandle__())
        if found is None:
            self.launch.unsupported(
                f"buffer {buf.name} (declared outside the kernel's arguments and allocations)"
            )
        return found


def key(var: tirx.Var) -> int:
    """A variable's identity (TIR variables compare by building expressions, so dicts key by handle)."""
    return var.__chandle__()


def static_int(frame: Frame, expr: Any) -> int:
    """An expression every program of the batch agrees on, as a Python int (divergence splits the batch)."""
    if isinstance(expr, int):
        return expr
    if isinstance(expr, tirx.IntImm):
        return int(expr.value)
    value = evaluate(frame, expr)
    return int(frame.launch.decide(value.data, frame.launch.site()))


def evaluate(frame: Frame, expr: Any) -> Value:
    """The engine value of ``expr`` for every program (and every lane of the parallel nest)."""
    rule = _RULES.get(type(expr))
    if rule is None:
        frame.launch.unsupported(f"TileLang expression {type(expr).__name__} ({expr})")
    return rule(frame, expr)


def _imm(frame: Frame, expr: Any) -> Value:
    return ops.constant(expr.value, engine_dtype(expr.dtype))


def _var(frame: Frame, expr: tirx.Var) -> Value:
    value = frame.env.get(key(expr))
    if value is THREAD:
        frame.launch.unsupported(
            f"thread index `{expr.name}` (tilescope runs TileLang's tile-level programs: "
            "T.Parallel loops and tile operations)"
        )
    if value is None:
        frame.launch.unsupported(f"variable `{expr.name}` with no value")
    return value


def _binary(op: Op) -> Callable[[Frame, Any], Value]:
    def rule(frame: Frame, expr: Any) -> Value:
        return apply_broadcast(op, [evaluate(frame, expr.a), evaluate(frame, expr.b)])

    return rule


def _not(frame: Frame, expr: Any) -> Value:
    value = evaluate(frame, expr.a)
    return apply_broadcast(Op.EQ, [value, ops.constant(False, value.dtype)])


def _cast(frame: Frame, expr: Any) -> Value:
    return cast(evaluate(frame, expr.value), engine_dtype(expr.dtype))


def _select(frame: Frame, condition: Any, true: Any, false: Any) -> Value:
    """``condition ? true : false``, each side evaluated with only its lanes enabled for memory."""
    cond = evaluate(frame, condition)
    outer = frame.mask
    frame.mask = cond if outer is None else apply_broadcast(Op.AND, [outer, cond])
    try:
        yes = evaluate(frame, true)
        frame.mask = _negate(cond) if outer is None else apply_broadcast(Op.AND, [outer, _negate(cond)])
        no = evaluate(frame, false)
    finally:
        frame.mask = outer
    return apply_broadcast(Op.SELECT, [cond, yes, cast(no, yes.dtype)])


def _negate(cond: Value) -> Value:
    return apply_broadcast(Op.EQ, [cond, ops.constant(False, cond.dtype)])


def _select_expr(frame: Frame, expr: Any) -> Value:
    return _select(frame, expr.condition, expr.true_value, expr.false_value)


def _let(frame: Frame, expr: Any) -> Value:
    frame.env[key(expr.var)] = evaluate(frame, expr.value)
    return evaluate(frame, expr.body)


def _load(frame: Frame, expr: tirx.BufferLoad) -> Value:
    buf = frame.buffer(expr.buffer)
    if isinstance(buf, GlobalBuffer):
        indices = [evaluate(frame, i) for i in expr.indices]
        return buf.load(frame.launch, indices, frame.mask, guard=bool(frame.shape))
    return read_local(frame, buf, list(expr.indices))


#: TIR math intrinsics with an engine op of the same meaning
_MATH = {
    "exp": Op.EXP, "exp2": Op.EXP2, "log": Op.LOG, "log2": Op.LOG2, "sqrt": Op.SQRT,
    "rsqrt": Op.RSQRT, "tanh": Op.TANH, "sin": Op.SIN, "cos": Op.COS, "fabs": Op.ABS,
    "floor": Op.FLOOR, "ceil": Op.CEIL, "trunc": Op.TRUNC, "round": Op.RINT, "nearbyint": Op.RINT,
    "erf": Op.ERF, "pow": Op.POW, "isnan": Op.ISNAN, "isinf": Op.ISINF, "bitwise_and": Op.AND,
    "bitwise_or": Op.OR, "bitwise_xor": Op.XOR, "shift_left": Op.SHL, "shift_right": Op.SHR,
}  # fmt: skip


def _call(frame: Frame, expr: tirx.Call) -> Value:
    full = expr.op.name if hasattr(expr.op, "name") else str(expr.op)
    name = full.split(".", 1)[1] if full.startswith(("tir.", "tirx.", "tl.")) else full
    op = _MATH.get(name)
    if op is not None:
        return apply_broadcast(op, [evaluate(frame, a) for a in expr.args])
    if name == "if_then_else":
        return _select(frame, *expr.args)
    if name == "clamp":
        x, lo, hi = (evaluate(frame, a) for a in expr.args)
        return apply_broadcast(Op.MIN, [apply_broadcast(Op.MAX, [x, cast(lo, x.dtype)]), cast(hi, x.dtype)])
    if name == "sigmoid":
        x = evaluate(frame, expr.args[0])
        one = ops.constant(1, x.dtype)
        exp = apply_broadcast(Op.EXP, [apply_broadcast(Op.NEG, [x])])
        return apply_broadcast(Op.DIV, [one, apply_broadcast(Op.ADD, [one, exp])])
    if name in ("infinity", "max_value", "min_value"):
        ty = engine_dtype(expr.dtype)
        info = np.finfo(ty.storage) if ty.is_float else np.iinfo(ty.storage)
        value = {"infinity": np.inf, "max_value": info.max, "min_value": info.min}[name]
        return ops.constant(value, ty)
    frame.launch.unsupported(f"TileLang call {full}")


_RULES: dict[type, Callable[[Frame, Any], Value]] = {
    tirx.IntImm: _imm,
    tirx.FloatImm: _imm,
    tirx.Var: _var,
    tirx.SizeVar: _var,
    tirx.Add: _binary(Op.ADD),
    tirx.Sub: _binary(Op.SUB),
    tirx.Mul: _binary(Op.MUL),
    tirx.Div: _binary(Op.DIV),
    tirx.Mod: _binary(Op.REM),
    tirx.FloorDiv: _binary(Op.DIV),
    tirx.FloorMod: _binary(Op.REM),
    tirx.Min: _binary(Op.MIN),
    tirx.Max: _binary(Op.MAX),
    tirx.EQ: _binary(Op.EQ),
    tirx.NE: _binary(Op.NE),
    tirx.LT: _binary(Op.LT),
    tirx.LE: _binary(Op.LE),
    tirx.GT: _binary(Op.GT),
    tirx.GE: _binary(Op.GE),
    tirx.And: _binary(Op.AND),
    tirx.Or: _binary(Op.OR),
    tirx.Not: _not,
    tirx.Cast: _cast,
    tirx.Select: _select_expr,
    tirx.Let: _let,
    tirx.BufferLoad: _load,
    tirx.Call: _call,
}


# ---------------------------------------------------------------- on-chip buffers, element-wise


def _lane_index(frame: Frame, expr: Any) -> tuple[int | None, int] | None:
    """``(axis, offset)`` for an index that is a parallel variable plus a constant, ``(None, c)`` for one
    every lane agrees on; None for any other index."""
    if isinstance(expr, tirx.Var) and key(expr) in frame.lanes:
        return frame.lanes[key(expr)], 0
    if isinstance(expr, tirx.Add):
        pairs = ((expr.a, expr.b, 1), (expr.b, expr.a, 1))
    elif isinstance(expr, tirx.Sub):
        pairs = ((expr.a, expr.b, -1),)
    else:
        pairs = ()
    for var, const, sign in pairs:
        if isinstance(var, tirx.Var) and key(var) in frame.lanes and isinstance(const, tirx.IntImm):
            return frame.lanes[key(var)], sign * int(const.value)
    value = evaluate(frame, expr)
    if int(np.prod(value.shape, dtype=np.int64)) == 1:
        return None, int(frame.launch.decide(value.data, frame.launch.site()))
    return None


def _lane_layout(frame: Frame, buf: LocalBuffer, indices: list) -> tuple[tuple[slice, ...], list[int]]:
    """The region of ``buf`` that element-wise ``indices`` cover, and the parallel axis of each of its
    dimensions (-1: a fixed index)."""
    region, axes = [], []
    for expr in indices:
        found = _lane_index(frame, expr)
        if found is None or (found[0] is not None and found[0] in axes):
            frame.launch.unsupported(
                f"index {expr} of {buf.scope} buffer `{buf.name}` (tilescope indexes on-chip buffers by a "
                "T.Parallel variable plus a constant, or by a value every element agrees on)"
            )
        axis, offset = found
        extent = 1 if axis is None else frame.shape[axis]
        region.append(slice(offset, offset + extent))
        axes.append(-1 if axis is None else axis)
    return tuple(region), axes


def read_local(frame: Frame, buf: LocalBuffer, indices: list) -> Value:
    """``buf[indices]`` for every lane of the parallel nest."""
    launch = frame.launch
    region, axes = _lane_layout(frame, buf, indices)
    value = buf.read(launch, region)
    kept = [(a, d) for d, a in enumerate(axes) if a >= 0]
    lane_shape = tuple(frame.shape[a] for a, _ in kept)
    if value.shape != lane_shape:
        value = ops.apply(launch, Op.RESHAPE, value, shape=lane_shape)
    order = sorted(range(len(kept)), key=lambda k: kept[k][0])
    if order != list(range(len(kept))):
        value = ops.apply(launch, Op.PERMUTE, value, perm=tuple(order))
    used = sorted(a for a, _ in kept)
    full = tuple(frame.shape[a] if a in used else 1 for a in range(len(frame.shape)))
    if value.shape != full:
        value = ops.apply(launch, Op.RESHAPE, value, shape=full)
    return value


def write_local(frame: Frame, buf: LocalBuffer, indices: list, value: Value) -> None:
    """``buf[indices] = value`` for every enabled lane of the parallel nest."""
    launch = frame.launch
    region, axes = _lane_layout(frame, buf, indices)
    unused = [a for a in range(len(frame.shape)) if a not in axes and frame.shape[a] != 1]
    if unused:
        launch.unsupported(
            f"a store to {buf.scope} buffer `{buf.name}` that every lane of a T.Parallel axis writes alike"
        )
    kept = sorted((a, d) for d, a in enumerate(axes) if a >= 0)
    dims = [d for _, d in kept]  # buffer dims in lane-axis order
    lane_shape = tuple(frame.shape[a] for a, _ in kept)

    def to_region(v: Value) -> Value:
        v = ops.apply(launch, Op.BROADCAST, v, shape=frame.shape) if v.shape != frame.shape else v
        if v.shape != lane_shape:
            v = ops.apply(launch, Op.RESHAPE, v, shape=lane_shape)
        inverse = sorted(range(len(dims)), key=lambda k: dims[k])
        if inverse != list(range(len(dims))):
            v = ops.apply(launch, Op.PERMUTE, v, perm=tuple(inverse))
        shape = tuple(s.stop - s.start for s in region)
        return v if v.shape == shape else ops.apply(launch, Op.RESHAPE, v, shape=shape)

    new = to_region(cast(value, buf.dtype))
    if frame.mask is not None:
        old = buf.read(launch, region)
        new = apply_broadcast(Op.SELECT, [to_region(frame.mask), new, old])
    buf.write(launch, region, new)
