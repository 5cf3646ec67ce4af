"""Gluon's IR-builder interface on the engine: Triton's builder plus shared memory, mbarriers, TMA.

Gluon's semantic (``GluonSemantic``) calls the same ``create_*`` methods as Triton's for
arithmetic, pointer loads and stores, and a few more of its own: shared-memory allocation, views,
loads and stores (:mod:`.shared`), mbarrier operations (:mod:`.barriers`), TMA copies between a
tensor descriptor and shared memory, and layout conversions. Types and layouts reach the builder
as Python objects (the launch maps ``to_ir`` to identity for them), so the builder sees Gluon's
own shared-memory types.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ...engine import descriptors, ops
from ...engine.ops import Op
from ...engine.values import DescriptorValue
from ..triton import typemap
from ..triton.builder import Builder, BuilderOptions
from .barriers import Barriers
from .shared import SharedMemory, View


@dataclass(frozen=True)
class GluonOptions(BuilderOptions):
    """The options Gluon's language layer reads from a builder, besides Triton's."""

    num_warps: int = 4
    num_ctas: int = 1
    warp_size: int = 32
    enable_iisan: bool = False  # Gluon's own alignment asserts for TMA coordinates (off, as by default)
    shared_limit: int = 232_448  # bytes of shared memory a program may use (sm_90's opt-in maximum)


class GluonBuilder(Builder):
    """Implements Gluon's builder methods over engine values (see the module docstring)."""

    def __init__(self, launch: Any, options: GluonOptions):
        super().__init__(launch, options)
        self.shared = SharedMemory(launch, options.shared_limit)
        self.barriers = Barriers(launch)

    def partition(self, launch: Any, num_warps: int) -> GluonBuilder:
        """A builder for one warp-specialised partition: its own launch view and warp count, this
        program's shared memory and barriers."""
        other = GluonBuilder(launch, dataclasses.replace(self.options, num_warps=num_warps))
        other.shared = self.shared.for_launch(launch)
        other.barriers = self.barriers.for_launch(launch)
        return other

    # ------------------------------------------------------------------ types and layouts

    def get_shared_mem_desc_ty(self, element_ty, shape, layout, alloc_shape):
        """Shared-memory types arrive as Gluon's own type objects (see the module docstring)."""
        return (element_ty, shape, layout, alloc_shape)

    def get_gluon_layout_from_memdesc(self, view: View):
        """The shared layout of a view (a permuted NVMMA view is transposed)."""
        return view.layout if view.layout is not None else view.allocation.layout

    # ------------------------------------------------------------------ shapes and layouts

    def create_broadcast(self, arg, shape):
        """Broadcast to a shape (Triton) or to a block type (Gluon passes the result type)."""
        return super().create_broadcast(arg, getattr(shape, "shape", shape))

    def create_convert_layout(self, ret_ty, value):
        """A layout conversion moves data between threads: the values stay the same."""
        return value

    def create_set_auto_layout(self, layout, value):
        """Fixing an automatic layout changes nothing the engine computes."""
        return value

    # ------------------------------------------------------------------ shared memory

    def create_local_alloc(self, ty, value=None):
        """``gl.allocate_shared_memory``: a new allocation of the program's shared window."""
        element, shape, layout, _ = ty
        return self.shared.allocate(typemap.to_engine(element), shape, layout, value)

    def create_local_load(self, ret_ty, view: View):
        """``smem.load(layout)``: the view's elements into registers (every copy into them waited for)."""
        self.barriers.check_read(view)
        return self.shared.read(view)

    def create_local_store(self, view: View, value):
        """``smem.store(value)``: registers into the view."""
        self.barriers.check_write(view)
        self.shared.write(view, value)

    def create_local_dealloc(self, view: View):
        """``smem._keep_alive()``: nothing to free on the CPU."""

    def create_memdesc_index(self, ty, view: View, index):
        """``smem.index(i)``: element ``i`` of the view's first dimension (the batch's common ``i``)."""
        i = int(self.launch.decide(index.data, self.launch.site()))
        return self._view_op(lambda: view.index(i))

    def create_memdesc_subslice(self, ty, view: View, offsets):
        """``smem.slice(start, length, dim)``: a static sub-view."""
        _, shape, _, _ = ty
        return self._view_op(lambda: view.sliced(list(offsets), list(shape)))

    def create_memdesc_trans(self, view: View, order):
        """``smem.permute(order)``: the same memory, dimensions reordered."""
        return view.permuted(list(order))

    def _view_op(self, make):
        try:
            return make()
        except NotImplementedError as exc:
            self.unsupported(str(exc))

    # ------------------------------------------------------------------ warpgroup MMA

    def create_warpgroup_mma(self, a, b: View, acc, use_acc, precision, max_num_imprecise_acc, is_async):
        """``warpgroup_mma``: ``a`` (registers or shared) times ``b`` (shared) plus ``acc`` unless
        ``use_acc`` is false; completes at once on the CPU."""
        lhs = self.shared.read(a) if isinstance(a, View) else a
        if isinstance(a, View):
            self.barriers.check_read(a)
        self.barriers.check_read(b)
        rhs = self.shared.read(b)
        if not self.launch.decide(use_acc.data, self.launch.site()):
            acc = ops.apply(self.launch, Op.BROADCAST, ops.constant(0, acc.dtype), shape=tuple(acc.shape))
        return self.create_dot(lhs, rhs, acc, precision, max_num_imprecise_acc)

    def create_warpgroup_mma_wait(self, deps, num_outstanding):
        """``warpgroup_mma_wait``: the MMAs are done; the dependencies pass through."""
        return list(deps)

    # ------------------------------------------------------------------ mbarriers

    def create_mbarrier_init(self, bar: View, count):
        """``mbarrier.init``: the barrier expects ``count`` arrivals per phase."""
        self.barriers.init(bar, int(count))

    def create_mbarrier_inval(self, bar: View):
        """``mbarrier.invalidate``: the barrier may be reused as memory."""
        self.barriers.invalidate(bar)

    def create_mbarrier_expect(self, bar: View, nbytes, pred, from_cta=None):
        """``mbarrier.expect``: one arrival that also expects ``nbytes`` of asynchronous copies."""
        if self._taken(pred):
            self.barriers.expect(bar, int(nbytes))

    def create_mbarrier_arrive(self, bar: View, count, pred, from_cta=None, multicast=0):
        """``mbarrier.arrive``: ``count`` arrivals."""
        if self._taken(pred):
            self.barriers.arrive(bar, int(count))

    def create_mbarrier_wait(self, bar: View, phase, pred, deps):
        """``mbarrier.wait``: wait until the phase of parity ``phase`` has completed."""
        if self._taken(pred):
            self.barriers.wait(bar, int(self.launch.decide(phase.data, self.launch.site())))

    def _taken(self, pred) -> bool:
        """Whether a scalar predicate holds (the batch's common value)."""
        return bool(self.launch.decide(pred.data, self.launch.site()))

    # ------------------------------------------------------------------ TMA and fences

    def create_make_tensor_descriptor(self, ty, base, shape, strides, padding):
        """A device-side tensor descriptor (Gluon passes the descriptor's type first)."""
        pad = "nan" if getattr(padding, "name", str(padding)).upper() in ("PAD_NAN", "NAN") else "zero"
        node = ops.node(self.launch, "make_tensor_descriptor", (base, *shape, *strides))
        desc = DescriptorValue(base, list(shape), list(strides), ty.block_type.shape, pad, node)
        descriptors.check(self.launch, desc)
        return desc

    def create_async_tma_copy_global_to_local(
        self, desc, coord, bar: View, result: View, pred, multicast, offsets, cache_policy
    ):
        """``tma.async_load``: a descriptor block into shared memory; its bytes arrive on ``bar``.

        Coordinates past the tensor read the padding, as TMA zero-fills them (not a fault); the
        copy completes at once on the CPU, and its data counts as in flight until a wait on
        ``bar`` sees the phase it completes (:mod:`.barriers`).
        """
        if offsets:
            self.unsupported("tma.async_load_im2col")
        if not self._taken(pred):
            return
        block = descriptors.load(self.launch, desc, list(coord))
        self.shared.write(result, block)
        self.barriers.transfer(bar, result, _nbytes(desc))

    def create_async_tma_copy_local_to_global(self, desc, coord, src: View, cache_policy):
        """``tma.async_store``: shared memory into a descriptor block; coordinates past the tensor
        are not written (TMA clips them)."""
        self.barriers.check_read(src)
        descriptors.store(self.launch, desc, self.shared.read(src), list(coord))

    def create_async_tma_reduce(self, kind, desc, coord, src: View):
        """``tma.async_atomic_add`` and friends: an atomic reduction of shared memory into a block."""
        self.barriers.check_read(src)
        descriptors.reduce(self.launch, kind.name.lower(), desc, self.shared.read(src), list(coord))

    def create_async_tma_store_wait(self, pendings, read_only=True):
        """``tma.store_wait``: TMA stores complete at once on the CPU."""

    def create_fence_async_shared(self, cluster=False):
        """``fence_async_shared``: orders proxies; copies are already ordered on the CPU."""


def _nbytes(desc: DescriptorValue) -> int:
    """Bytes of one block of ``desc`` (what a TMA copy counts against an mbarrier's expected bytes)."""
    size = desc.base.dtype.pointee.itemsize
    count = 1
    for b in desc.block_shape:
        count *= int(b)
    return count * size


__all__ = ["GluonBuilder", "GluonOptions"]
