"""Reductions and scans on batched values, with standard combines or a frontend's combine function.

A combine is a name (``sum``, ``prod``, ``max``, ``min``, ``xor``: NumPy fast paths) or a callable
``combine(left, right) -> results`` over lists of equally shaped arrays (one per reduced operand),
elementwise, that a frontend builds from its DSL's combine function (Triton: a ``@triton.jit``
function of scalars, called on whole blocks). A reduction is then a pairwise tree along the axis
(log2(n) calls), a scan a Hillis-Steele sweep (log2(n) calls); both keep the operands' order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..ir import OpKind
from . import layout as layouts
from . import numerics as nx
from .dtypes import DType
from .ops import RULES, Op, node
from .values import Value, common_batch

Combine = str | Callable[[list[np.ndarray], list[np.ndarray]], list[np.ndarray]]

_REDUCE: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "sum": lambda a, axis: np.sum(a, axis=axis, dtype=a.dtype),
    "prod": lambda a, axis: np.prod(a, axis=axis, dtype=a.dtype),
    "max": lambda a, axis: (np.fmax if a.dtype.kind == "f" else np.maximum).reduce(a, axis=axis),
    "min": lambda a, axis: (np.fmin if a.dtype.kind == "f" else np.minimum).reduce(a, axis=axis),
    "xor": lambda a, axis: np.bitwise_xor.reduce(a, axis=axis),
}
_SCAN: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "sum": lambda a, axis: np.cumsum(a, axis=axis, dtype=a.dtype),
    "prod": lambda a, axis: np.cumprod(a, axis=axis, dtype=a.dtype),
}


def _in_float32(fn: Callable, data: np.ndarray, ty: DType, axis: int) -> np.ndarray:
    """A NumPy reduction or scan; low-precision floats accumulate in float32 and round once."""
    if ty.is_low_float:
        return nx.from_float(fn(nx.to_float32(data, ty), axis), ty)
    return np.asarray(fn(data, axis))


def _begin(launch: Any, kind: OpKind, inputs: Sequence[Value], out_shape: tuple, **attrs) -> Any:
    """The node of a reduce or scan; its compute record for clients that count work."""
    result = Value(None, inputs[0].dtype, None, shape=out_shape)
    if launch.records_compute:
        launch.emit_compute(kind, result, inputs, **attrs)
    return node(launch, kind.value, inputs)


def _skipped(inputs: Sequence[Value]) -> frozenset | None:
    if any(v.is_skipped for v in inputs):
        return frozenset().union(*(v.skipped for v in inputs if v.is_skipped))
    return None


def _gpu_sum(
    launch: Any, inputs: Sequence[Value], datas: list, axis: int, combine: Combine, layout: Any
) -> Any:
    """A float ``sum`` in its dtype and in the order of the GPU's compiled code ("gpu" numerics), the
    products of a multiply fused into it where the compiler fuses them; None otherwise. ``layout``:
    the input's layout where the kernel states it (a Blocked), else the compile's or the rule's."""
    ty = inputs[0].dtype
    if combine != "sum" or len(inputs) != 1 or not launch.numerics.gpu or not ty.is_float or ty.is_fp8:
        return None
    prod = inputs[0].product
    factors = None
    if prod is not None and launch.numerics.contracts("add", ty) and prod.dtype == ty:
        factors = tuple(np.broadcast_to(f, datas[0].shape) for f in common_batch(prod.a, prod.b))
        if axis is None or datas[0].ndim != inputs[0].data.ndim:
            factors = tuple(f.reshape(datas[0].shape) for f in factors)
    if layout is None and launch.numerics.reduce_layouts:
        layout = launch.numerics.reduce_layout(launch.site(), tuple(datas[0].shape[1:]), axis)
    return layouts.ordered_sum(datas[0], axis, ty, launch.numerics, factors, layout)


def reduce(
    launch: Any,
    inputs: Sequence[Value],
    axis: int | None,
    combine: Combine,
    keep_dims: bool = False,
    layout: Any = None,
) -> list[Value]:
    """Reduce each input along block ``axis`` (None: every axis) with ``combine``; one result each.
    ``layout``: the input's :class:`~tilescope.engine.layout.Blocked` layout where the kernel states
    it (Gluon), which orders a "gpu" float sum."""
    shape = list(inputs[0].shape)
    if axis is None:
        red_axis, out_shape = 0, [1] * len(shape) if keep_dims else []
    else:
        red_axis = axis + len(shape) if axis < 0 else axis
        out_shape = list(shape)
        if keep_dims:
            out_shape[red_axis] = 1
        else:
            del out_shape[red_axis]
    name = combine if isinstance(combine, str) else "custom"
    graph = _begin(launch, OpKind.REDUCE, inputs, tuple(out_shape), axis=axis, combine=name)
    skipped = _skipped(inputs)
    if skipped is not None:
        return [Value(None, v.dtype, graph, skipped=skipped, shape=tuple(out_shape)) for v in inputs]
    datas = common_batch(*[v.data for v in inputs])
    if axis is None:
        datas = [d.reshape(d.shape[0], -1) for d in datas]
    ordered = _gpu_sum(launch, inputs, datas, red_axis, combine, layout if axis is not None else None)
    if ordered is not None:
        results = [ordered]
    elif isinstance(combine, str) and len(inputs) == 1:
        results = [_in_float32(_REDUCE[combine], datas[0], inputs[0].dtype, red_axis + 1)]
    else:
        combine_fn = _callable(combine, [v.dtype for v in inputs])
        results = _tree(combine_fn, [np.moveaxis(d, red_axis + 1, -1) for d in datas])
    outs = []
    for r, v in zip(results, inputs, strict=True):
        r = r.reshape(r.shape[0], *out_shape)
        launch.budget(r)
        outs.append(Value(r, v.dtype, graph))
    return outs


def scan(
    launch: Any, inputs: Sequence[Value], axis: int, combine: Combine, reverse: bool = False
) -> list[Value]:
    """Inclusive scan of each input along block ``axis`` with ``combine`` (``reverse``: from the end)."""
    shape = inputs[0].shape
    axis = axis + len(shape) if axis < 0 else axis
    name = combine if isinstance(combine, str) else "custom"
    graph = _begin(launch, OpKind.SCAN, inputs, tuple(shape), axis=axis, combine=name, reverse=reverse)
    skipped = _skipped(inputs)
    if skipped is not None:
        return [Value(None, v.dtype, graph, skipped=skipped, shape=tuple(shape)) for v in inputs]
    datas = [np.moveaxis(d, axis + 1, -1) for d in common_batch(*[v.data for v in inputs])]
    if reverse:
        datas = [d[..., ::-1] for d in datas]
    if isinstance(combine, str) and combine in _SCAN and len(inputs) == 1:
        results = [_in_float32(_SCAN[combine], datas[0], inputs[0].dtype, -1)]
    else:
        results = _sweep(_callable(combine, [v.dtype for v in inputs]), datas)
    if reverse:
        results = [r[..., ::-1] for r in results]
    results = [np.ascontiguousarray(np.moveaxis(r, -1, axis + 1)) for r in results]
    return [Value(r, v.dtype, graph) for r, v in zip(results, inputs, strict=True)]


_STANDARD = {"sum": Op.ADD, "prod": Op.MUL, "max": Op.MAX, "min": Op.MIN, "xor": Op.XOR}


def _callable(
    combine: Combine, types: list[DType]
) -> Callable[[list[np.ndarray], list[np.ndarray]], list[np.ndarray]]:
    """A standard combine as the elementwise op it names (each operand in its own type), or the callable."""
    if not isinstance(combine, str):
        return combine
    fn = RULES[_STANDARD[combine]].value
    return lambda left, right: [fn((t, t), t, a, b) for a, b, t in zip(left, right, types, strict=True)]


def _tree(combine: Callable, datas: list[np.ndarray]) -> list[np.ndarray]:
    """Pairwise tree reduction along the last axis."""
    while datas[0].shape[-1] > 1:
        n = datas[0].shape[-1]
        even = n - n % 2
        left = [d[..., 0:even:2] for d in datas]
        right = [d[..., 1:even:2] for d in datas]
        combined = combine(left, right)
        if n % 2:
            combined = [
                np.concatenate([c, d[..., -1:]], axis=-1) for c, d in zip(combined, datas, strict=False)
            ]
        datas = combined
    return [d[..., 0] for d in datas]


def _sweep(combine: Callable, datas: list[np.ndarray]) -> list[np.ndarray]:
    """Hillis-Steele inclusive scan along the last axis (order of operands preserved)."""
    n = datas[0].shape[-1]
    step = 1
    while step < n:
        left = [d[..., : n - step] for d in datas]
        right = [d[..., step:] for d in datas]
        combined = combine(left, right)
        datas = [np.concatenate([d[..., :step], c], axis=-1) for d, c in zip(datas, combined, strict=False)]
        step *= 2
    return datas
