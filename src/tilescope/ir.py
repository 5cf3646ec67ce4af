"""The common IR: source sites, the expression graph, and the op records clients consume.

Every frontend lowers its DSL's operations to these records; every client reads only these.
Records are plain data. Arrays inside a record carry a leading program axis of length ``B`` (the
programs of the batch that produced the record, listed in ``program_ids``) or 1 (the same for
every program of the batch). The schema is documented in ``docs/ir.md``.
"""

from __future__ import annotations

import enum
import functools
import itertools
import linecache
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Site:
    """Where an operation is in the user's source: file, 1-based line and column, and the text."""

    file: str
    line: int
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    function: str = ""

    @property
    def source(self) -> str:
        """The source line, without its trailing newline."""
        return linecache.getline(self.file, self.line).rstrip("\n")

    @property
    def expression(self) -> str:
        """The source text of the expression this site spans (one line at most)."""
        text = self.source
        if not self.column:
            return text.strip()
        end = self.end_column if self.end_line == self.line and self.end_column else len(text) + 1
        return text[self.column - 1 : end - 1]

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Node:
    """One operation of the expression graph: what it was, where, and what it consumed."""

    op: str
    site: Site | None
    inputs: tuple[Node, ...] = ()
    wrapped: bool = False  # this int32 operation wrapped around in at least one lane

    def sites(self, limit: int = 32) -> list[Site]:
        """Distinct source sites of this node and its ancestors, nearest first."""
        seen: dict[Site, None] = {}
        stack = [self]
        visited = set()
        while stack and len(seen) < limit:
            node = stack.pop(0)
            if id(node) in visited:
                continue
            visited.add(id(node))
            if node.site is not None:
                seen.setdefault(node.site, None)
            stack.extend(node.inputs)
        return list(seen)


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


@dataclass
class Fault:
    """A memory or rule violation found while executing an op (before any byte moved)."""

    kind: str
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
    loops: tuple[tuple[Site, int], ...] = ()
    address_node: Node | None = None
    mask_node: Node | None = None
    attrs: dict = field(default_factory=dict)


class OpKind(str, enum.Enum):
    """Kinds of record in the op stream."""

    LOAD = "load"
    STORE = "store"
    ATOMIC = "atomic"
    DOT = "dot"
    REDUCE = "reduce"
    SCAN = "scan"
    DESCRIPTOR_LOAD = "descriptor_load"
    DESCRIPTOR_STORE = "descriptor_store"
    TRANSFER = "transfer"
    ASSERT = "assert"
    PRINT = "print"


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


@dataclass(frozen=True)
class LaunchInfo:
    """One launch of one kernel."""

    launch_id: int
    kernel: str
    file: str
    line: int
    grid: tuple[int, int, int]
    arguments: tuple[ArgumentInfo, ...] = ()
    meta: dict = field(default_factory=dict)


@dataclass
class OpRecord:
    """One operation executed by a batch of programs.

    ``address`` holds byte addresses (uint64) for memory ops (or, when the engine proved the access
    from its factored form, ``address`` is None and ``address_affine`` holds it: call
    ``addresses()`` for the array); ``coords`` descriptor coordinates;
    ``mask`` the enabled lanes; ``values`` the loaded/stored/computed values when a client asked
    for them (else None). ``address_node`` and ``mask_node`` are the expression graphs that
    produced the address and the mask.
    """

    kind: OpKind
    launch_id: int
    seq: int
    site: Site | None
    program_ids: np.ndarray  # (B, 3) int32
    dtype: str
    address: np.ndarray | None = None
    mask: np.ndarray | None = None
    values: np.ndarray | None = None
    argument: str | None = None
    coords: tuple[np.ndarray, ...] | None = None
    block_shape: tuple[int, ...] = ()
    address_node: Node | None = None
    mask_node: Node | None = None
    loops: tuple[tuple[Site, int], ...] = ()
    attrs: dict = field(default_factory=dict)
    address_affine: Any = None  # the address as per-program scalar + shared block, when the engine had it

    def addresses(self) -> np.ndarray | None:
        """Byte addresses (B, *block) as uint64, built from the factored form when only that was kept."""
        if self.address is None and self.address_affine is not None:
            self.address = self.address_affine.materialize(np.uint64)
        return self.address


_launch_ids = itertools.count(1)


def next_launch_id() -> int:
    """A process-wide unique, increasing launch id."""
    return next(_launch_ids)
