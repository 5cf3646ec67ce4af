"""Races in a program's shared memory, reported by a frontend, as findings.

A frontend that knows a DSL's asynchronous copies and on-chip synchronisation (Gluon's TMA loads
and mbarriers, its warp-specialised partitions) reports a ``shared memory race`` fault for a read
of a copy's destination before any wait observed the copy, or for accesses of two partitions to
the same elements that no arrive-wait chain orders. This module turns such a fault into a finding
at the access's line; the fault's message names the other side and its ``fix`` what orders them.
"""

from __future__ import annotations

import numpy as np

from ...ir import Fault
from ..base import Finding
from ..sanitizer.programs import grid_rank, summarize

KIND = "shared memory race"


def finding(fault: Fault, grid: tuple[int, int, int]) -> Finding:
    """The finding of one ``shared memory race`` fault of a launch over ``grid``."""
    bad = np.asarray(fault.bad, dtype=bool).reshape(fault.program_ids.shape[0], -1).any(axis=1)
    pids = [tuple(int(i) for i in p) for p in fault.program_ids[bad]]
    rank = grid_rank(grid)
    site = fault.site
    details = {"race": "unordered shared-memory access", "programs": len(pids), "grid_rank": rank,
               "program_summary": summarize(pids, rank), "fix": fault.attrs.get("fix"),
               "rule": fault.attrs.get("rule")}  # fmt: skip
    return Finding(
        kind=KIND, severity="error", message=fault.message, kernel=fault.kernel,
        file=site.file if site else "", line=site.line if site else 0,
        column=site.column if site else 0, program_ids=pids, details=details,
    )  # fmt: skip
