"""Mask utilisation and provably redundant boundary checks.

A ``mask=`` is *redundant in a launch* when it enables every lane of every program that executed
the op, in every loop iteration, and it depends on no value read from memory. The engine executes
every program of a launch, so the first half is checked exhaustively (a proof for this launch
configuration: these grid, scalar arguments and constexprs), not sampled; the second half is read
off the mask's expression graph, so a mask that happens to hold for this run's data is never
called redundant.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...ir import LaunchInfo, Node, OpKind, OpRecord

#: node ops whose value came from memory
_MEMORY_OPS = frozenset(k.value for k in OpKind if k.is_memory)
#: nodes looked at in one mask graph before giving up (a loop-carried chain can grow with iterations)
GRAPH_LIMIT = 512


@dataclass
class MaskState:
    """What the records of one site showed about its ``mask=``."""

    present: bool = False  #: a mask was given (``mask=``)
    always_true: bool = True  #: every enabled-lane check came out true so far
    from_memory: bool = False  #: some record's mask depends on a loaded value (or could not be followed)
    arguments: set[str] = field(default_factory=set)  #: scalar kernel arguments the mask reads
    expression: str = ""  #: the mask's source text
    line: int = 0

    def add(self, record: OpRecord) -> None:
        """Take one record of the site into account."""
        if record.mask_node is None:
            return
        self.present = True
        if not self.expression and record.mask_node.site is not None:
            self.expression = record.mask_node.site.expression
            self.line = record.mask_node.site.line
        if record.mask is not None and self.always_true and not bool(np.all(record.mask)):
            self.always_true = False
        if self.always_true and not self.from_memory:
            names, from_memory = _leaves(record.mask_node)
            self.arguments |= names
            self.from_memory = from_memory
        elif not self.arguments:  # the bounds it compares with, for the notes (not a proof)
            self.arguments |= _leaves(record.mask_node)[0]

    @property
    def redundant(self) -> bool:
        """True when the mask is proven true for every lane of every program of the launch."""
        return self.present and self.always_true and not self.from_memory

    def bounds(self, launch: LaunchInfo) -> dict[str, int]:
        """The integer scalar arguments the mask compares with, and their values in this launch."""
        values = {a.name: a.value for a in launch.arguments if a.kind == "scalar"}
        return {name: values[name] for name in sorted(self.arguments) if type(values.get(name)) is int}

    def reason(self, launch: LaunchInfo) -> str:
        """Why the mask holds: the scalar arguments it compares with, and multiples of the constexprs."""
        values = {a.name: a.value for a in launch.arguments if a.kind == "scalar"}
        constexprs = {k: v for k, v in launch.meta.items() if type(v) is int and v > 1}
        parts = []
        for name in sorted(self.arguments):
            value = values.get(name)
            if type(value) is not int:
                continue
            multiples = [k for k, c in sorted(constexprs.items()) if value % c == 0]
            multiple = f", a multiple of {', '.join(multiples)}" if multiples else ""
            parts.append(f"{name} = {value}{multiple}")
        return "; ".join(parts)


def _leaves(node: Node) -> tuple[set[str], bool]:
    """(scalar arguments among the graph's leaves, whether any node is a memory read or the walk stopped)."""
    names: set[str] = set()
    seen: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if len(seen) > GRAPH_LIMIT or n.op in _MEMORY_OPS:
            return names, True
        if n.op.startswith("argument "):
            names.add(n.op.removeprefix("argument "))
        stack.extend(n.inputs)
    return names, False
