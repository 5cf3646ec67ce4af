"""The common IR: source sites, the expression graph, and the records clients consume.

Every frontend's kernels produce these records through the engine; every client reads only these.
Nothing here imports the engine, a frontend or a client. The contract is ``docs/ir.md``.
"""

from .faults import FirstBad, bad_lanes, bounds_relation, describe_fault, element_text, first_bad
from .records import (
    ATOMIC_OPS,
    MEMORY_SCOPES,
    MEMORY_SEMANTICS,
    AffineAddress,
    ArgumentInfo,
    ComputeCount,
    Fault,
    FaultKind,
    LaunchInfo,
    LoopEvent,
    LoopEventKind,
    Loops,
    Need,
    OpKind,
    OpRecord,
    RowAddress,
    ViewInfo,
    itemsize,
)
from .sites import Node, Site

__all__ = [
    "ATOMIC_OPS",
    "MEMORY_SCOPES",
    "MEMORY_SEMANTICS",
    "AffineAddress",
    "ArgumentInfo",
    "ComputeCount",
    "Fault",
    "FaultKind",
    "FirstBad",
    "LaunchInfo",
    "LoopEvent",
    "LoopEventKind",
    "Loops",
    "Need",
    "Node",
    "OpKind",
    "OpRecord",
    "RowAddress",
    "Site",
    "ViewInfo",
    "bad_lanes",
    "bounds_relation",
    "describe_fault",
    "element_text",
    "first_bad",
    "itemsize",
]
