"""The client recipe of docs/extending.md works as written, and merged reports are order-free."""

from __future__ import annotations

import numpy as np

import tilescope
from tilescope import Client, Report
from tilescope.clients.base import Finding
from tilescope.examples.vector_add import add_kernel
from tilescope.ir import Need, OpKind


class ByteCount(Client):
    name = "bytecount"
    kinds = frozenset({OpKind.LOAD, OpKind.STORE})
    needs = frozenset({Need.ADDRESSES_ONLY})  # no values: the engine may skip the arithmetic

    def __init__(self):
        self.bytes = 0

    def on_op(self, record):
        in_bounds = record.in_bounds if record.in_bounds is not None else record.enabled()
        self.bytes += int(in_bounds.sum()) * record.itemsize

    def report(self):
        return Report(self.name, summary={"bytes": self.bytes})


def test_the_documented_client_counts_bytes_without_computing():
    n = 1000
    x, y, out = (np.random.default_rng(1).standard_normal(n).astype(np.float32) for _ in range(3))
    before = out.copy()
    counter = ByteCount()
    launcher = tilescope.trace(add_kernel, clients=[counter])
    assert launcher.compute_outputs is False
    launcher[(4,)](x, y, out, n, BLOCK=256)
    assert launcher.reports[0].summary == {"bytes": 3 * n * 4}  # two loads and one store of n floats
    np.testing.assert_array_equal(out, before)  # addresses only: nothing was written


def _finding(first, lanes, programs):
    return Finding("out-of-bounds load", "error", "m", "k", "f.py", 3, 5, [tuple(p) for p in programs],
                   {"argument": "x", "lanes": lanes, "programs": len(programs), "launches": 1,
                    "first_program": first, "first_lane": [0], "first_element": [first[0] * 10]})  # fmt: skip


def test_merged_reports_do_not_depend_on_order():
    parts = [
        Report("thing", [_finding([3, 0, 0], 2, [(3, 0, 0)])], {"launches": 1, "rows": [1]}),
        Report("thing", [_finding([1, 0, 0], 5, [(1, 0, 0), (4, 0, 0)])], {"launches": 2, "rows": [2]}),
        Report("thing", [], {"launches": 1}),
    ]
    a = Report.merge(parts)
    b = Report.merge(parts[::-1])
    assert a.findings == b.findings and a.summary["launches"] == b.summary["launches"] == 4
    (f,) = a.findings
    assert f.details["lanes"] == 7 and f.details["first_program"] == [1, 0, 0]
    assert f.program_ids == [(1, 0, 0), (3, 0, 0), (4, 0, 0)]
    assert Report.from_json(a.to_json()).findings == a.findings
