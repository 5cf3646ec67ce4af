"""Shared memory: a second memory space, private to each program, with its own allocation rules.

``gl.allocate_shared_memory(dtype, shape, layout)`` makes an :class:`Allocation`: its contents
are an engine value with the program axis in front (each program has its own shared memory, as
each CTA does), read and written whole through views (:class:`View`: ``.index(i)`` fixes the
leading dimension, ``.slice(start, length, dim)`` narrows one). Reads and writes are engine ops
(``Op.SLICE``, ``Op.INSERT``), so demand-driven runs and every client work unchanged.

Allocations are laid out one after another in the program's shared window, each aligned as its
layout needs (1024 bytes for a swizzled NVMMA layout, which TMA and wgmma need; 16 otherwise).
An access through a view that reaches past its allocation (an index past the buffer count of a
multi-buffered ring) is an out-of-bounds fault naming the allocation and the first bad element,
as for a global tensor; only the in-range elements move (the rest read as zero). More shared
memory than a program may use on the modelled GPU is a ``tile rule`` fault where the allocation
that passes the limit is made (the GPU compile fails there).
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from triton.experimental.gluon.language import _layouts as gll

from ...engine import ops
from ...engine.access import fault
from ...engine.dtypes import DType
from ...engine.ops import Op
from ...engine.values import Value
from ...ir import FaultKind, ViewInfo

_ASSIGNED = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=]")


@dataclass
class Allocation:
    """One shared-memory buffer of a program: where it lies, what it holds."""

    name: str
    element: DType
    shape: tuple[int, ...]
    layout: Any
    view: ViewInfo  # its place in the shared window, for findings
    contents: Value


@dataclass(frozen=True)
class View:
    """A shared-memory descriptor: a region of an allocation, possibly with its dimensions permuted.

    ``start`` has one coordinate per allocation dimension; the region spans ``shape`` along the
    allocation's trailing dimensions and one element along the leading ones it has indexed away.
    ``perm`` (``smem.permute(order)``) orders the region's dimensions as the view shows them.
    """

    allocation: Allocation
    start: tuple[int, ...]
    shape: tuple[int, ...]
    perm: tuple[int, ...] | None = None
    layout: Any = None  # the view's shared layout (None: the allocation's)

    @property
    def extents(self) -> tuple[int, ...]:
        """The region's extent along every allocation dimension."""
        lead = len(self.allocation.shape) - len(self.shape)
        return (1,) * lead + self.shape

    @property
    def dims(self) -> tuple[int, ...]:
        """The view's shape as the kernel sees it."""
        return self.shape if self.perm is None else tuple(self.shape[p] for p in self.perm)

    def _plain(self, what: str) -> None:
        if self.perm is not None:
            raise NotImplementedError(f"{what} of a permuted shared-memory view")

    def index(self, i: int) -> View:
        """The view one step down: element ``i`` of its first dimension."""
        self._plain("index")
        lead = len(self.allocation.shape) - len(self.shape)
        start = list(self.start)
        start[lead] += i
        return View(self.allocation, tuple(start), self.shape[1:], None, self.layout)

    def sliced(self, offsets: list[int], shape: list[int]) -> View:
        """The sub-view at ``offsets`` (per view dimension) of ``shape``."""
        self._plain("slice")
        lead = len(self.allocation.shape) - len(self.shape)
        start = list(self.start)
        for d, off in enumerate(offsets):
            start[lead + d] += int(off)
        return View(self.allocation, tuple(start), tuple(int(s) for s in shape), None, self.layout)

    def permuted(self, order: list[int]) -> View:
        """``smem.permute(order)``: the same region with its dimensions reordered (an NVMMA
        layout's ``transposed`` flag flips, as Gluon's compiler infers it)."""
        base = tuple(range(len(self.shape))) if self.perm is None else self.perm
        perm = tuple(base[o] for o in order)
        layout = self.layout if self.layout is not None else self.allocation.layout
        if isinstance(layout, gll.NVMMASharedLayout) and len(order) == 2 and tuple(order) == (1, 0):
            layout = dataclasses.replace(layout, transposed=not layout.transposed)
        identity = perm == tuple(range(len(perm)))
        return View(self.allocation, self.start, self.shape, None if identity else perm, layout)

    def region(self) -> tuple[list[tuple[int, int]], np.ndarray]:
        """Per allocation dimension the in-range interval ``[lo, hi)`` of the view, and which of
        the view's lanes lie outside the allocation (shape ``(1, *view shape)``)."""
        alloc = self.allocation.shape
        inside = np.ones(self.extents, dtype=bool)
        ranges = []
        for d, (s, n, size) in enumerate(zip(self.start, self.extents, alloc, strict=True)):
            coords = s + np.arange(n)
            along = [1] * len(alloc)
            along[d] = n
            inside = inside & ((coords >= 0) & (coords < size)).reshape(along)
            ranges.append((min(max(s, 0), size), min(max(s + n, 0), size)))
        return ranges, (~inside).reshape(1, *self.shape)

    def addresses(self) -> np.ndarray:
        """Byte addresses of the view's lanes in the shared window (``(1, *view shape)``)."""
        info = self.allocation.view
        linear = np.zeros(self.extents, dtype=np.int64)
        for d, (s, n, stride) in enumerate(zip(self.start, self.extents, info.strides, strict=True)):
            along = [1] * len(self.extents)
            along[d] = n
            linear = linear + ((s + np.arange(n)) * stride).reshape(along)
        return (info.address + linear * info.itemsize).astype(np.uint64).reshape(1, *self.shape)


def alignment(layout: Any) -> int:
    """Bytes an allocation of ``layout`` is aligned to."""
    if isinstance(layout, gll.NVMMASharedLayout) and layout.swizzle_byte_width:
        return 1024
    return 16


def variable_name(source: str, default: str) -> str:
    """The name a line of kernel source assigns (``a_smem = gl.allocate_shared_memory(...)``)."""
    match = _ASSIGNED.match(source or "")
    return match.group(1) if match else default


class SharedMemory:
    """The shared window of the programs of one batch: allocations, views, reads, writes."""

    def __init__(self, launch: Any, limit: int):
        self.launch = launch
        self.limit = limit  # bytes a program may allocate
        self.used = 0
        self.allocations: list[Allocation] = []

    def for_launch(self, launch: Any) -> SharedMemory:
        """The same window and allocations, seen from ``launch`` (a partition's view of the batch)."""
        view = SharedMemory(launch, self.limit)
        view.used, view.allocations = self.used, self.allocations
        return view

    def allocate(self, element: DType, shape: list[int], layout: Any, initial: Value | None) -> View:
        """A new allocation (zero-filled unless ``initial`` is given) and the view of all of it."""
        launch = self.launch
        site = launch.site()
        shape_t = tuple(int(s) for s in shape)
        align = alignment(layout)
        offset = -(-self.used // align) * align
        nbytes = math.prod(shape_t) * element.itemsize
        self.used = offset + nbytes
        name = variable_name(site.source if site is not None else "", f"shared{len(self.allocations)}")
        strides = tuple(int(math.prod(shape_t[d + 1 :])) for d in range(len(shape_t)))
        info = ViewInfo(f"{name} (shared)", offset, shape_t, strides, element.itemsize, element.name)
        contents = initial if initial is not None else ops.apply(
            launch, Op.BROADCAST, ops.constant(0, element), shape=shape_t
        )  # fmt: skip
        alloc = Allocation(name, element, shape_t, layout, info, contents)
        self.allocations.append(alloc)
        if self.used > self.limit >= offset:  # the allocation that passes the limit, once
            self._over_limit(alloc)
        return View(alloc, (0,) * len(shape_t), shape_t)

    def _over_limit(self, alloc: Allocation) -> None:
        kib = self.used / 1024
        fault(
            self.launch,
            FaultKind.TILE_RULE,
            bad=np.ones((self.launch.pids.shape[0],), dtype=bool),
            message=f"shared memory: {kib:.1f} KiB allocated with `{alloc.name}`, more than the "
            f"{self.limit / 1024:.1f} KiB a program may use",
            attrs={
                "rule": f"shared memory per program <= {self.limit} bytes",
                "fix": "use smaller blocks or fewer buffers",
            },
        )

    def read(self, view: View) -> Value:
        """The view's elements (elements outside its allocation read as zero, after a fault)."""
        ranges, outside = self._checked(view, FaultKind.OUT_OF_BOUNDS_LOAD)
        alloc = view.allocation
        part = ops.apply(
            self.launch, Op.SLICE, alloc.contents, index=tuple(slice(lo, hi) for lo, hi in ranges)
        )
        if outside.any():
            zeros = ops.apply(self.launch, Op.BROADCAST, ops.constant(0, alloc.element), shape=view.extents)
            into = tuple(slice(lo - s, hi - s) for (lo, hi), s in zip(ranges, view.start, strict=True))
            part = ops.apply(self.launch, Op.INSERT, zeros, part, index=into)
        block = ops.apply(self.launch, Op.RESHAPE, part, shape=view.shape)
        return block if view.perm is None else ops.apply(self.launch, Op.PERMUTE, block, perm=view.perm)

    def write(self, view: View, value: Value) -> None:
        """Store ``value`` (the view's shape) into the view (elements outside its allocation are dropped)."""
        ranges, outside = self._checked(view, FaultKind.OUT_OF_BOUNDS_STORE)
        alloc = view.allocation
        if any(hi <= lo for lo, hi in ranges):
            return
        if view.perm is not None:
            value = ops.apply(
                self.launch, Op.PERMUTE, value, perm=tuple(int(i) for i in np.argsort(view.perm))
            )
        block = ops.apply(self.launch, Op.RESHAPE, value, shape=view.extents)
        if outside.any():
            part = tuple(slice(lo - s, hi - s) for (lo, hi), s in zip(ranges, view.start, strict=True))
            block = ops.apply(self.launch, Op.SLICE, block, index=part)
        region = tuple(slice(lo, hi) for lo, hi in ranges)
        alloc.contents = ops.apply(self.launch, Op.INSERT, alloc.contents, block, index=region)

    def _checked(self, view: View, kind: FaultKind) -> tuple[list[tuple[int, int]], np.ndarray]:
        """The view's in-range region; a fault of ``kind`` when some lanes lie outside."""
        ranges, outside = view.region()
        if outside.any():
            batch = self.launch.pids.shape[0]
            fault(
                self.launch,
                kind,
                bad=np.broadcast_to(outside, (batch, *view.shape)),
                address=np.broadcast_to(view.addresses(), (batch, *view.shape)),
                view=view.allocation.view,
            )
        return ranges, outside
