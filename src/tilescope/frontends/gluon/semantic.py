"""Gluon's own semantic on the engine: its type and layout rules, with layouts inferred here.

``GluonSemantic`` (Triton's ``triton.experimental.gluon.language._semantic``) checks everything a
Gluon kernel states about layouts (operands of one op share a layout, ``expand_dims`` needs a
slice along its axis, shapes and dtypes of shared-memory stores match) and asks its builder for
the layout of results the compiler infers. Here those layouts come from :mod:`.layouts`, computed
from the operand's layout before the op runs; layouts a kernel names are checked
against the compiler verifier's rules when a tensor of that layout is made.
"""

from __future__ import annotations

import contextlib
from typing import Any

from triton.experimental.gluon.language import _core as ttgl
from triton.experimental.gluon.language._semantic import GluonSemantic

from ...engine.errors import KernelError, UnsupportedOpError
from . import layouts
from .partitions import Partitions


class EngineGluonSemantic(GluonSemantic):
    """Gluon's semantic over the engine's Gluon builder."""

    def __init__(self, builder: Any):
        super().__init__(builder)
        self._result_layout: Any = None  # the layout the op being run gives its result

    @contextlib.contextmanager
    def _inferred(self, layout: Any):
        """Give ``layout`` to the result the op about to run wraps (Gluon asks its builder; the
        answer is kept here, so that replaying the op's builder calls needs no builder state)."""
        self._result_layout = layout
        try:
            yield
        finally:
            self._result_layout = None

    def _wrap_handle_infer_layout(self, handle, scalar_ty, shape):
        """A result tensor in the layout inferred for the op being run."""
        if shape == []:
            return self.tensor(handle, scalar_ty)
        if self._result_layout is None:
            launch = self.builder.launch
            raise UnsupportedOpError(
                "tilescope does not infer the layout Gluon's compiler gives this op's result yet",
                kernel=launch.kernel_name,
                site=launch.site(),
            )
        return self.tensor(handle, ttgl.distributed_type(scalar_ty, shape, self._result_layout))

    def _layout_of(self, value: Any) -> Any:
        return value.type.layout

    def _check_layout(self, layout: Any) -> None:
        """Refuse a layout the compiler's verifier rejects, at the kernel line that uses it."""
        found = layouts.problems(layout, self.builder.options.num_warps)
        if found:
            launch = self.builder.launch
            raise KernelError(
                f"layout {layouts.describe(layout)} is invalid: {'; '.join(found)}",
                kernel=launch.kernel_name,
                site=launch.site(),
            )

    # ------------------------------------------------------------------ results with a layout named

    def arange(self, start, end, layout):
        """``gl.arange`` in a layout (checked)."""
        if layout is not None:
            self._check_layout(layout)
        return super().arange(start, end, layout)

    def splat(self, value, shape, layout):
        """``gl.full`` and scalar broadcasts in a layout (checked)."""
        if layout is not None and len(shape):
            self._check_layout(layout)
        return super().splat(value, shape, layout)

    def convert_layout(self, value, layout, assert_trivial=False):
        """``gl.convert_layout`` (the target layout checked; the values stay the same)."""
        self._check_layout(layout)
        return super().convert_layout(value, layout, assert_trivial=False)

    def shared_load(self, mem_desc, layout):
        """``smem.load(layout)`` (the layout checked)."""
        self._check_layout(layout)
        return super().shared_load(mem_desc, layout)

    # ------------------------------------------------------------------ results whose layout is inferred

    def expand_dims(self, input, axis):
        """``gl.expand_dims``: the slice layout's parent."""
        norm = axis + len(input.shape) + 1 if axis < 0 else axis
        with self._inferred(layouts.expand_dims(self._layout_of(input), norm)):
            return super().expand_dims(input, axis)

    def permute(self, input, dims):
        """``gl.permute`` of a blocked layout."""
        layout = layouts.permuted(self._layout_of(input), tuple(int(d) for d in dims))
        if layout is None:
            self._not_inferred("permute", input)
        with self._inferred(layout):
            return super().permute(input, dims)

    def reduced_type(self, input_type: Any, shape: list[int], axis: int, keep_dims: bool) -> Any:
        """The type of a reduction's result: the input's slice layout along ``axis`` (its own with
        ``keep_dims``)."""
        if not shape:
            return input_type.scalar
        layout = input_type.layout if keep_dims else layouts.reduced(input_type.layout, axis)
        return ttgl.distributed_type(input_type.scalar, shape, layout)

    def reduction_layout(self, input_type: Any) -> Any:
        """The engine's form of the blocked layout a reduction's input states (None for a layout
        the compiler places, or one that is not blocked)."""
        return layouts.as_blocked(getattr(input_type, "layout", None))

    def reshape(self, input, dst_shape, can_reorder):
        """``gl.reshape``: kept only where the layout is the compiler's to choose."""
        if not isinstance(self._layout_of(input), layouts.DEFERRED):
            self._not_inferred("reshape", input)
        with self._inferred(self._layout_of(input)):
            return super().reshape(input, dst_shape, can_reorder)

    def join(self, a, b):
        """``gl.join``: not inferred yet."""
        self._not_inferred("join", a)

    def split(self, a):
        """``gl.split``: not inferred yet."""
        self._not_inferred("split", a)

    def _not_inferred(self, op: str, value: Any) -> None:
        launch = self.builder.launch
        raise UnsupportedOpError(
            f"`gl.{op}` of a tensor in {layouts.describe(self._layout_of(value))}: tilescope does not "
            "infer the layout Gluon's compiler gives its result yet; convert_layout the result "
            "explicitly or use a blocked layout",
            kernel=launch.kernel_name,
            site=launch.site(),
        )

    def num_warps(self, generator):
        """``gl.num_warps()``: the warps of the running partition (a worker's own count)."""
        return ttgl.constexpr(self.builder.options.num_warps)

    def warp_specialize(self, functions_and_args, worker_num_warps, worker_num_regs, generator):
        """``gl.warp_specialize``: the partitions take turns over the batch, the baton passing at
        mbarrier operations (:mod:`.partitions`); the default partition's result."""
        from ..triton.runtime import RUNTIME

        builder = self.builder
        launch = builder.launch
        if builder.barriers.partitions is not None:
            raise KernelError("gl.warp_specialize inside a warp-specialised partition (Gluon does not "
                              "support nesting)", kernel=launch.kernel_name, site=launch.site())  # fmt: skip
        warps = [builder.options.num_warps, *worker_num_warps]

        def body(fn, args, num_warps):
            def run():
                sub = launch.fork(launch.pids, None, -1)
                RUNTIME.install(sub, EngineGluonSemantic(builder.partition(sub, num_warps)))
                try:
                    return RUNTIME.call_jit(fn, list(args), {})
                finally:
                    RUNTIME.uninstall()

            return run

        builder.barriers.partitions = Partitions(len(functions_and_args))
        try:
            bodies = [body(fn, args, n) for (fn, args), n in zip(functions_and_args, warps, strict=True)]
            return builder.barriers.partitions.run(bodies)
        finally:
            builder.barriers.partitions = None
