"""The op stream's records: launches, arguments, op records, faults, loop events and client needs.

Every frontend's kernels produce these records through the engine; every client reads only these.
Records are plain data. Arrays inside a record carry a leading program axis of length ``B`` (the
programs of the batch that produced the record, listed in ``program_ids``) or 1 (the same for
every program of the batch). The contract is documented in ``docs/ir.md``.
"""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .sites import Node, Site

#: enclosing loops of an op, outermost first (innermost last): (loop site, 0-based iteration)
Loops = tuple[tuple[Site, int], ...]


class OpKind(str, enum.Enum):
    """Kinds of record in the op stream."""

    LOAD = "load"
    STORE = "store"
    ATOMIC = "atomic"
    DESCRIPTOR_LOAD = "descriptor_load"
    DESCRIPTOR_STORE = "descriptor_store"
    TRANSFER = "transfer"
    DOT = "dot"
    REDUCE = "reduce"
    SCAN = "scan"
    ELEMENTWISE = "elementwise"
    BARRIER = "barrier"
    ASSERT = "assert"
    PRINT = "print"

    __hash__ = str.__hash__  # hashes like its value, so ``"load" in {OpKind.LOAD}`` holds

    @property
    def is_memory(self) -> bool:
        """True for kinds that move data to or from global memory (they carry addresses)."""
        return self in _MEMORY_KINDS

    @property
    def writes(self) -> bool:
        """True for memory kinds that (may) write memory."""
        return self in (OpKind.STORE, OpKind.ATOMIC, OpKind.DESCRIPTOR_STORE)


_MEMORY_KINDS = frozenset(
    {
        OpKind.LOAD,
        OpKind.STORE,
        OpKind.ATOMIC,
        OpKind.DESCRIPTOR_LOAD,
        OpKind.DESCRIPTOR_STORE,
        OpKind.TRANSFER,
    }
)

#: ``attrs["op"]`` of atomic records
ATOMIC_OPS = ("add", "max", "min", "and", "or", "xor", "xchg", "cas", "load", "store")
#: ``attrs["sem"]`` and ``attrs["scope"]`` of atomic records
MEMORY_SEMANTICS = ("relaxed", "acquire", "release", "acq_rel")
MEMORY_SCOPES = ("cta", "gpu", "sys")


class FaultKind(str, enum.Enum):
    """What went wrong in a fault. A str enum: ``FaultKind.DEVICE_ASSERT == "device assert"``."""

    OUT_OF_BOUNDS_LOAD = "out-of-bounds load"
    OUT_OF_BOUNDS_STORE = "out-of-bounds store"
    OUT_OF_BOUNDS_ATOMIC = "out-of-bounds atomic"
    #: outside the argument's view but inside its storage (``bounds="warn"``): memory-safe, a warning
    LOAD_OUTSIDE_VIEW = "load outside view"
    STORE_OUTSIDE_VIEW = "store outside view"
    ATOMIC_OUTSIDE_VIEW = "atomic outside view"
    DESCRIPTOR_RULE = "descriptor rule"
    TILE_RULE = "tile rule"  # a DSL's hardware limit on an on-chip tile (NKI: partitions <= 128, PSUM size)
    INT32_OVERFLOW = "int32 overflow"
    DEVICE_ASSERT = "device assert"
    #: shared memory read while an asynchronous copy into it is not yet waited for (Gluon's mbarriers)
    SHARED_RACE = "shared memory race"

    __hash__ = str.__hash__  # hashes like its value, so ``"device assert" in {FaultKind.DEVICE_ASSERT}``

    @property
    def fatal(self) -> bool:
        """True when a fault of this kind stops the launch unless a client handles it.

        Wrapped int32 arithmetic is legal on the GPU, and an access outside its view but inside its
        storage touches real memory of the same allocation, so unhandled faults of those kinds are
        ignored.
        """
        return self is not FaultKind.INT32_OVERFLOW and not self.outside_view

    @property
    def outside_view(self) -> bool:
        """True for accesses outside their argument's view but inside its storage."""
        return self in (
            FaultKind.LOAD_OUTSIDE_VIEW,
            FaultKind.STORE_OUTSIDE_VIEW,
            FaultKind.ATOMIC_OUTSIDE_VIEW,
        )

    @property
    def is_memory(self) -> bool:
        """True for out-of-bounds accesses."""
        return self in (
            FaultKind.OUT_OF_BOUNDS_LOAD,
            FaultKind.OUT_OF_BOUNDS_STORE,
            FaultKind.OUT_OF_BOUNDS_ATOMIC,
        )

    def __str__(self) -> str:
        return self.value


class Need(str, enum.Enum):
    """What a client asks the core for (Valgrind's ``needs``); the core serves the union."""

    VALUES = "values"  # loaded, stored and computed values in op records
    ADDRESSES_ONLY = "addresses_only"  # addresses and masks suffice: the engine may skip arithmetic
    OVERFLOW_TAINT = "overflow_taint"  # track which lanes come from wrapped int32 arithmetic
    LOOP_EVENTS = "loop_events"  # on_loop(LoopEvent) for every loop enter, iteration and exit
    ARGUMENT_EVENTS = "argument_events"  # on_argument(ArgumentInfo) for tensors registered mid-launch
    MEMORY = "memory"  # on_memory(ArgumentInfo, elements) for every tensor argument as a launch ends
    COMPILED_RESOURCES = "compiled_resources"  # LaunchInfo.resources from an offline compile of the kernel
    COMPUTE_COUNTS = "compute_counts"  # on_compute(ComputeCount) per distinct compute op an attempt ran

    __hash__ = str.__hash__


@functools.cache  # called per op record on the clients' hot paths; few distinct names
def itemsize(dtype: str) -> int:
    """Bytes per element of an op-stream dtype name (``fp16`` -> 2, ``pointer<fp32>`` -> 8, ``int1`` -> 1)."""
    if dtype.startswith("pointer") or dtype.endswith("*"):
        return 8
    bits = re.search(r"\d+", dtype)
    return max(1, int(bits.group()) // 8) if bits else 1


@dataclass(frozen=True)
class ViewInfo:
    """A tensor argument's view of memory: where element 0 is, its shape and strides."""

    name: str
    address: int  # byte address of element [0, 0, ...]
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    itemsize: int
    dtype: str

    @functools.cached_property
    def lo(self) -> int:
        """Lowest byte address inside the view's extent."""
        neg = sum((n - 1) * s for n, s in zip(self.shape, self.strides, strict=False) if s < 0 and n > 0)
        return self.address + neg * self.itemsize

    @functools.cached_property
    def hi(self) -> int:
        """One past the highest byte address inside the view's extent (lo when the view is empty)."""
        if any(n == 0 for n in self.shape):
            return self.lo
        pos = sum((n - 1) * s for n, s in zip(self.shape, self.strides, strict=False) if s > 0)
        return self.address + (pos + 1) * self.itemsize

    def coordinates(self, address: int) -> tuple[int, ...]:
        """Element coordinates of a byte address, extending past the view where it lies outside.

        Dimensions are peeled from the largest stride down; the outermost absorbs any overflow,
        so one row past the end of a row-major matrix reads as ``[rows, 0]``.
        """
        offset = (int(address) - self.address) // self.itemsize
        if not self.shape:
            return (offset,)
        order = sorted(range(len(self.shape)), key=lambda d: -abs(self.strides[d]))
        coords = [0] * len(self.shape)
        rest = offset
        for d in order:
            coords[d], rest = divmod(rest, self.strides[d] or 1)
        return tuple(coords)

    def describe(self) -> str:
        """``name`` (dtype[shape]) for messages."""
        return f"`{self.name}` ({self.dtype}[{', '.join(map(str, self.shape))}])"


@dataclass(frozen=True)
class AffineAddress:
    """Byte addresses in factored form: lane ``j`` of program row ``p`` is at ``scalar[p] + block[j]``.

    ``scalar`` is int64 ``(B,)`` (or ``(1,)``), ``block`` int64 ``(1, *block_shape)``; both exact
    (the engine keeps this form only while no arithmetic on it wrapped).
    """

    scalar: np.ndarray
    block: np.ndarray
    #: ``(origin, steps)`` when the engine already knows that every lane of ``block`` is exactly
    #: ``origin + Σ index_d × steps[d]`` (int64, wrapping; a step is 0 along an axis of one lane);
    #: None when it does not know (a client works it out from ``block`` if it needs it)
    lanes: tuple[int, tuple[int, ...]] | None = None

    def materialize(self) -> np.ndarray:
        """The ``(B, *block_shape)`` uint64 byte addresses."""
        s = self.scalar.reshape(-1, *([1] * (self.block.ndim - 1)))
        return (s + self.block).view(np.uint64)


@dataclass
class RowAddress:
    """Byte addresses as per-row numbers from data plus a shared block (an embedding lookup's
    ``w + idx[:, None] * D + cols[None, :]``): lane ``j`` of program row ``p`` is at
    ``rows[p, j] + block[0, j]`` (broadcast). ``rows`` is int64 ``(B, *S)`` with the axes it does not
    vary on at length 1, ``block`` int64 ``(1, *S)`` likewise; a client can count rows, not lanes.
    """

    rows: np.ndarray
    block: np.ndarray

    def materialize(self) -> np.ndarray:
        """The ``(B, *block_shape)`` uint64 byte addresses."""
        return (self.rows + self.block).view(np.uint64)


@dataclass
class Fault:
    """A memory or rule violation found while executing an op (before any byte moved)."""

    kind: FaultKind
    launch_id: int
    kernel: str
    site: Site | None
    program_ids: np.ndarray  # (B, 3)
    bad: np.ndarray  # (B, *block) lanes at fault
    address: np.ndarray | None = None  # (B, *block) uint64
    view: ViewInfo | None = None
    misaligned: np.ndarray | None = None
    wrapped: np.ndarray | None = None  # lanes whose address came from wrapped int32 arithmetic
    message: str = ""
    loops: Loops = ()
    address_node: Node | None = None
    mask_node: Node | None = None
    attrs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ArgumentInfo:
    """A kernel argument as the engine sees it: a tensor's view of memory, or a scalar."""

    index: int
    name: str
    kind: str  # "tensor", "scalar", "constexpr", "descriptor"
    dtype: str = ""
    shape: tuple[int, ...] = ()
    strides: tuple[int, ...] = ()
    address: int = 0
    nbytes: int = 0
    value: Any = None
    offset: int = 0  #: tensors: bytes from the start of the tensor's allocation to its element 0

    def view_info(self) -> ViewInfo:
        """This tensor argument as a view of memory (to turn addresses into element coordinates)."""
        return ViewInfo(self.name, int(self.address), tuple(self.shape), tuple(self.strides),
                        itemsize(self.dtype), self.dtype)  # fmt: skip


@dataclass(frozen=True)
class LaunchInfo:
    """One launch of one kernel.

    ``options`` holds how it runs (``mode``, ``seed``, ``slots``, ``batch_size``, ``frontend``):
    a concurrent run with the same options and inputs replays the same interleaving. ``resources``
    holds what an offline compile for the modelled GPU says (registers, spills, shared memory, ...),
    when a client needs ``Need.COMPILED_RESOURCES`` and the frontend can compile (else empty).
    """

    launch_id: int
    kernel: str
    file: str
    line: int
    grid: tuple[int, int, int]
    arguments: tuple[ArgumentInfo, ...] = ()
    meta: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    resources: dict = field(default_factory=dict)


@dataclass
class OpRecord:
    """One operation executed by a batch of programs (the contract is ``docs/ir.md``).

    Memory records hold byte addresses: per lane in ``address`` (uint64), or, when the engine
    proved the access from its factored form, in ``address_affine`` (``addresses()`` builds the
    array either way). ``mask`` is the enabled lanes, ``in_bounds`` those of them that were inside
    the tensor (None: every enabled lane); ``values`` the loaded/stored/returned values when a
    client needs them. Compute records carry ``shape`` and ``operands`` (dtype and shape of each
    input) so work can be counted.
    """

    kind: OpKind
    launch_id: int
    seq: int
    site: Site | None
    program_ids: np.ndarray  # (B, 3) int32
    dtype: str
    itemsize: int = 0
    shape: tuple[int, ...] = ()
    address: np.ndarray | None = None
    address_affine: AffineAddress | None = None
    address_rows: RowAddress | None = None
    mask: np.ndarray | None = None
    in_bounds: np.ndarray | None = None
    values: np.ndarray | None = None
    argument: str | None = None
    coords: tuple[np.ndarray, ...] | None = None
    block_shape: tuple[int, ...] = ()
    address_node: Node | None = None
    mask_node: Node | None = None
    loops: Loops = ()
    attrs: dict = field(default_factory=dict)
    operands: tuple[tuple[str, tuple[int, ...]], ...] = ()
    attempt: int = 0
    step: int | None = None

    def addresses(self) -> np.ndarray | None:
        """Byte addresses (B, *block) as uint64, built from the factored or the row form when only
        that was kept."""
        if self.address is None and self.address_affine is not None:
            self.address = self.address_affine.materialize()
        elif self.address is None and self.address_rows is not None:
            self.address = self.address_rows.materialize()
        return self.address

    @property
    def writes(self) -> bool:
        """True when this record's op (may) write the memory its addresses name (a ``transfer`` says so
        in ``attrs["writes"]``)."""
        if self.kind is OpKind.TRANSFER:
            return bool(self.attrs.get("writes"))
        return self.kind.writes

    def enabled(self) -> np.ndarray | None:
        """Enabled lanes broadcast to (B, *shape) (None for records without lanes)."""
        if not self.kind.is_memory:
            return None
        full = (self.program_ids.shape[0], *self.shape)
        if self.mask is None:
            return np.ones(full, dtype=bool)
        return np.broadcast_to(self.mask, full)


@dataclass(frozen=True)
class ComputeCount:
    """How many programs ran one compute op (same kind, site, dtype, shapes and attributes) in a
    committed attempt: what the compute records of those runs would say, without a record per op.

    ``attrs`` are the records' ``attrs`` as sorted ``(name, value)`` pairs; ``programs`` adds up the
    programs (the rows of ``program_ids``) of every record it stands for.
    """

    kind: OpKind
    launch_id: int
    site: Site | None
    dtype: str
    shape: tuple[int, ...]
    operands: tuple[tuple[str, tuple[int, ...]], ...]
    attrs: tuple[tuple[str, Any], ...]
    programs: int


class LoopEventKind(str, enum.Enum):
    """What happened to a loop."""

    ENTER = "enter"
    ITERATE = "iterate"
    EXIT = "exit"


@dataclass(frozen=True)
class LoopEvent:
    """A loop of the kernel was entered, began an iteration, or was left by a batch of programs."""

    kind: LoopEventKind
    launch_id: int
    site: Site | None
    iteration: int
    program_ids: np.ndarray
    loops: Loops = ()
