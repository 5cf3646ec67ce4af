"""``tl.reduce`` and ``tl.associative_scan`` on the engine's reductions.

Triton's standard combine functions (``tl.sum``'s, ``tl.max``'s, ...) become the engine's named
combines (NumPy fast paths); any other ``@triton.jit`` combine function is called on whole blocks:
its arguments are passed as *scalar* Triton values whose program axis is every element, since the
function is elementwise and scalar types keep Triton's block-shape rules (powers of two) out of the
way of odd partial lengths.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import triton.language as tl

from ... import methodcache
from ...engine.values import Value
from . import typemap, version

_STANDARD = ("sum", "prod", "max", "min", "xor")
_SCANS = ("sum", "prod")


def _engine_reduce() -> Any:
    """The engine's reductions and scans, imported on first use (its layouts come with it)."""
    return methodcache.import_module("tilescope.engine.reduce")


def _named(combine_fn: Any, allowed: tuple[str, ...]) -> str | None:
    for name in allowed:
        if combine_fn is version.standard_combine(name):
            return name
    return None


class ReduceScan:
    """Implements the patched ``tl.reduce``/``tl.associative_scan`` for the running launch."""

    def __init__(self, runtime: Any):
        self.runtime = runtime

    def _combine(self, combine_fn: Any, dtypes: list, allowed: tuple[str, ...], single: bool):
        name = _named(combine_fn, allowed) if single else None
        if name is not None:
            return name

        def call(left: list[np.ndarray], right: list[np.ndarray]) -> list[np.ndarray]:
            shape = np.broadcast_shapes(*(a.shape for a in (*left, *right)))
            size = int(np.prod(shape))

            def scalar(a, t):
                return tl.tensor(Value(np.broadcast_to(a, shape).reshape(size), typemap.to_engine(t)), t)

            args = [scalar(a, t) for a, t in zip(left, dtypes, strict=False)]
            args += [scalar(b, t) for b, t in zip(right, dtypes, strict=False)]
            out = self.runtime.call_jit(combine_fn, args, {})
            out = out if isinstance(out, tuple) else (out,)
            results = []
            for o in out:
                arr = o.handle.data if isinstance(o, tl.tensor) else np.asarray(o)
                results.append(np.broadcast_to(arr.reshape(-1), (size,)).reshape(shape))
            return results

        return call

    def reduce(self, input, axis, combine_fn, keep_dims=False, **_):
        """Reduce ``input`` (a tensor or tuple) along ``axis`` with ``combine_fn``."""
        single = isinstance(input, tl.tensor)
        inputs = (input,) if single else tuple(input)
        axis = version.unwrap(axis)
        keep_dims = bool(version.unwrap(keep_dims))
        dtypes = [t.dtype for t in inputs]
        combine = self._combine(combine_fn, dtypes, _STANDARD, len(inputs) == 1)
        launch = self.runtime.launch
        semantic = self.runtime.semantic
        layout = semantic.reduction_layout(inputs[0].type) if single else None
        handles = [t.handle for t in inputs]
        results = _engine_reduce().reduce(launch, handles, axis, combine, keep_dims, layout)
        outs = [tl.tensor(r, semantic.reduced_type(t.type, list(r.shape), axis, keep_dims))
                for r, t in zip(results, inputs, strict=True)]  # fmt: skip
        return outs[0] if single else tuple(outs)

    def scan(self, input, axis, combine_fn, reverse=False, **_):
        """Inclusive scan of ``input`` along ``axis`` with ``combine_fn``."""
        single = isinstance(input, tl.tensor)
        inputs = (input,) if single else tuple(input)
        axis = version.unwrap(axis)
        reverse = bool(version.unwrap(reverse))
        dtypes = [t.dtype for t in inputs]
        combine = self._combine(combine_fn, dtypes, _SCANS, len(inputs) == 1)
        launch = self.runtime.launch
        results = _engine_reduce().scan(launch, [t.handle for t in inputs], axis, combine, reverse)
        outs = [tl.tensor(r, t.type) for r, t in zip(results, inputs, strict=True)]
        return outs[0] if single else tuple(outs)
