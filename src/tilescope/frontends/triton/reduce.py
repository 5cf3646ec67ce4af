"""``tl.reduce`` and ``tl.associative_scan`` on batched values.

Triton's combine functions are ``@triton.jit`` functions of scalars; since they are elementwise, we
call them on whole blocks: a reduction is a pairwise tree along the axis (log2(n) calls), a scan is
a Hillis-Steele sweep (log2(n) calls). Sums, products, max and min take NumPy fast paths.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import triton.language as tl

from ...engine import numerics as nx
from ...engine.values import Value, common_batch
from ...ir import Node, OpKind
from . import version


def _fast_reduce(combine_fn: Any) -> Callable | None:
    if combine_fn is version.standard_combine("sum"):
        return lambda a, axis: np.sum(a, axis=axis, dtype=a.dtype)
    if combine_fn is version.standard_combine("prod"):
        return lambda a, axis: np.prod(a, axis=axis, dtype=a.dtype)
    if combine_fn is version.standard_combine("max"):
        return lambda a, axis: (np.fmax if a.dtype.kind == "f" else np.maximum).reduce(a, axis=axis)
    if combine_fn is version.standard_combine("min"):
        return lambda a, axis: (np.fmin if a.dtype.kind == "f" else np.minimum).reduce(a, axis=axis)
    if combine_fn is version.standard_combine("xor"):
        return lambda a, axis: np.bitwise_xor.reduce(a, axis=axis)
    return None


def _fast_scan(combine_fn: Any) -> Callable | None:
    if combine_fn is version.standard_combine("sum"):
        return lambda a, axis: np.cumsum(a, axis=axis, dtype=a.dtype)
    if combine_fn is version.standard_combine("prod"):
        return lambda a, axis: np.cumprod(a, axis=axis, dtype=a.dtype)
    return None


class ReduceScan:
    """Implements the patched ``tl.reduce``/``tl.associative_scan`` for one launch."""

    def __init__(self, runtime: Any):
        self.runtime = runtime

    def _call(self, combine_fn, left: list[np.ndarray], right: list[np.ndarray], dtypes) -> list[np.ndarray]:
        """Apply a scalar combine function to whole blocks at once.

        The blocks are flattened and passed as *scalar* Triton values whose program axis is every
        element: the combine function is elementwise, and scalar types keep Triton's block-shape
        rules (powers of two) out of the way of odd partial lengths.
        """
        shape = np.broadcast_shapes(*(a.shape for a in (*left, *right)))
        size = int(np.prod(shape))

        def scalar(a, t):
            return tl.tensor(Value(np.broadcast_to(a, shape).reshape(size), t), t)

        args = [scalar(a, t) for a, t in zip(left, dtypes, strict=False)] + [
            scalar(b, t) for b, t in zip(right, dtypes, strict=False)
        ]
        out = self.runtime.call_jit(combine_fn, args, {})
        out = out if isinstance(out, tuple) else (out,)
        results = []
        for o in out:
            arr = o.handle.data if isinstance(o, tl.tensor) else np.asarray(o)
            results.append(np.broadcast_to(arr.reshape(-1), (size,)).reshape(shape))
        return results

    def _begin(self, kind: OpKind, input) -> tuple[bool, tuple, list, list, Node]:
        """(single, inputs, block shape, dtypes, node) of a reduce or scan, recorded for clients."""
        single = isinstance(input, tl.tensor)
        inputs = (input,) if single else tuple(input)
        launch = self.runtime.launch
        launch.emit_compute(kind, inputs[0].handle)
        node = Node(kind.value, launch.site(), tuple(t.handle.node for t in inputs if t.handle.node))
        return single, inputs, list(inputs[0].shape), [t.dtype for t in inputs], node

    def reduce(self, input, axis, combine_fn, keep_dims=False, **_):
        """Reduce ``input`` (a tensor or tuple) along ``axis`` with ``combine_fn``."""
        single, inputs, shape, dtypes, node = self._begin(OpKind.REDUCE, input)
        axis = version.unwrap(axis)
        keep_dims = bool(version.unwrap(keep_dims))
        if any(t.handle.is_skipped for t in inputs):
            skipped = frozenset().union(*(t.handle.skipped for t in inputs if t.handle.is_skipped))
            datas = None
        else:
            skipped = None
            datas = common_batch(*[t.handle.data for t in inputs])
        if axis is None:
            if datas is not None:
                datas = [d.reshape(d.shape[0], -1) for d in datas]
            red_axis, out_shape = 0, []
        else:
            red_axis = axis + len(shape) if axis < 0 else axis
            out_shape = shape[:red_axis] + shape[red_axis + 1 :]
        results: list[np.ndarray | None]
        if datas is None:
            results = [None] * len(inputs)
        else:
            fast = _fast_reduce(combine_fn) if len(inputs) == 1 else None
            if fast is not None:
                d = datas[0]
                if nx.is_low_float(dtypes[0]):
                    r = nx.from_float(fast(nx.to_float32(d, dtypes[0]), red_axis + 1), dtypes[0])
                else:
                    r = fast(d, red_axis + 1)
                results = [np.asarray(r)]
            else:
                results = self._tree(combine_fn, [np.moveaxis(d, red_axis + 1, -1) for d in datas], dtypes)
        outs = []
        for r, t in zip(results, dtypes, strict=False):
            final_shape = list(out_shape)
            if keep_dims:
                final_shape = list(shape)
                if axis is None:
                    final_shape = [1] * len(shape)
                else:
                    final_shape[red_axis] = 1
                if r is not None:
                    r = r.reshape(r.shape[0], *final_shape)
            ty = tl.block_type(t, final_shape) if final_shape else t
            handle = Value(r, t, node, skipped=skipped)
            outs.append(tl.tensor(handle, ty))
        return outs[0] if single else tuple(outs)

    def _tree(self, combine_fn, datas: list[np.ndarray], dtypes) -> list[np.ndarray]:
        """Pairwise tree reduction along the last axis."""
        while datas[0].shape[-1] > 1:
            n = datas[0].shape[-1]
            even = n - n % 2
            left = [d[..., 0:even:2] for d in datas]
            right = [d[..., 1:even:2] for d in datas]
            combined = self._call(combine_fn, left, right, dtypes)
            if n % 2:
                combined = [
                    np.concatenate([c, d[..., -1:]], axis=-1) for c, d in zip(combined, datas, strict=False)
                ]
            datas = combined
        return [d[..., 0] for d in datas]

    def scan(self, input, axis, combine_fn, reverse=False, **_):
        """Inclusive scan of ``input`` along ``axis`` with ``combine_fn``."""
        single, inputs, shape, dtypes, node = self._begin(OpKind.SCAN, input)
        axis = version.unwrap(axis)
        reverse = bool(version.unwrap(reverse))
        axis = axis + len(shape) if axis < 0 else axis
        if any(t.handle.is_skipped for t in inputs):
            skipped = frozenset().union(*(t.handle.skipped for t in inputs if t.handle.is_skipped))
            return self._pack([None] * len(inputs), inputs, node, skipped, single)
        datas = [np.moveaxis(d, axis + 1, -1) for d in common_batch(*[t.handle.data for t in inputs])]
        if reverse:
            datas = [d[..., ::-1] for d in datas]
        fast = _fast_scan(combine_fn) if len(inputs) == 1 else None
        if fast is not None:
            d = datas[0]
            if nx.is_low_float(dtypes[0]):
                results = [nx.from_float(fast(nx.to_float32(d, dtypes[0]), -1), dtypes[0])]
            else:
                results = [fast(d, -1)]
        else:
            results = self._sweep(combine_fn, datas, dtypes)
        if reverse:
            results = [r[..., ::-1] for r in results]
        results = [np.ascontiguousarray(np.moveaxis(r, -1, axis + 1)) for r in results]
        return self._pack(results, inputs, node, None, single)

    def _pack(self, results, inputs, node, skipped, single):
        outs = [
            tl.tensor(Value(r, t.dtype, node, skipped=skipped), t.type)
            for r, t in zip(results, inputs, strict=False)
        ]
        return outs[0] if single else tuple(outs)

    def _sweep(self, combine_fn, datas: list[np.ndarray], dtypes) -> list[np.ndarray]:
        """Hillis-Steele inclusive scan along the last axis (order of operands preserved)."""
        n = datas[0].shape[-1]
        step = 1
        while step < n:
            left = [d[..., : n - step] for d in datas]
            right = [d[..., step:] for d in datas]
            combined = self._call(combine_fn, left, right, dtypes)
            datas = [
                np.concatenate([d[..., :step], c], axis=-1) for d, c in zip(datas, combined, strict=False)
            ]
            step *= 2
        return datas
