"""Merging the reports of many origins (a sweep's cells, a session's tests) into one, and the sweep's
merged report built on it."""

from __future__ import annotations

import copy
import itertools

from tilescope.clients.base import Finding, Report, merge_by_origin
from tilescope.sweep import CellResult, SweepReport
from tilescope.sweep.spec import Cell


def finding(argument: str, lanes: int, program: int) -> Finding:
    return Finding("out-of-bounds load", "error", f"{lanes} lanes read past `{argument}`", "copy_kernel",
                   "/src/kernels/copy.py", 12, 9, [(program, 0, 0)],
                   {"argument": argument, "lanes": lanes, "programs": 1, "launches": 1})


def origins() -> list[tuple[str, list[Report]]]:
    return [
        ("copy[n=100]", [Report("demo", [finding("x", 4, 3)], {"launches": 1})]),
        ("copy[n=128]", [Report("demo", [], {"launches": 1})]),
        ("copy[n=130]", [Report("demo", [finding("x", 2, 4), finding("y", 2, 4)], {"launches": 2})]),
        ("copy[n=7]", [Report("demo", [finding("x", 1, 0)], {"launches": 1})]),
    ]


def test_merged_findings_name_their_origins_in_order_and_add_up():
    given = origins()
    before = copy.deepcopy(given)
    [report] = merge_by_origin(given, "cells")
    assert given == before  # the reports given are not changed
    x, y = report.findings
    assert x.details["cells"] == ["copy[n=100]", "copy[n=130]", "copy[n=7]"]
    assert (x.details["lanes"], x.details["launches"]) == (7, 3)
    assert x.program_ids == [(0, 0, 0), (3, 0, 0), (4, 0, 0)]
    assert y.details["cells"] == ["copy[n=130]"]
    assert report.summary == {"launches": 5}


def test_the_merge_does_not_depend_on_the_order_of_the_origins_beyond_their_listing():
    want = merge_by_origin(origins(), "cells")[0]
    for order in itertools.permutations(origins()):
        got = merge_by_origin(list(order), "cells")[0]
        labels = [label for label, _ in order]
        for a, b in zip(got.findings, want.findings, strict=True):
            assert a.details["cells"] == sorted(b.details["cells"], key=labels.index)
            assert {**a.details, "cells": None} == {**b.details, "cells": None}
            assert (a.key, a.program_ids, a.message) == (b.key, b.program_ids, b.message)


def test_reports_merged_in_parts_merge_again_to_the_whole():
    # as pytest-xdist workers do: each merges its own tests, the controller merges the workers'
    parts = origins()
    halves = [merge_by_origin(parts[:2], "tests"), merge_by_origin(parts[2:], "tests")]
    [again] = merge_by_origin([(None, half) for half in halves], "tests")
    [whole] = merge_by_origin(parts, "tests")
    assert [f.to_dict() for f in again.findings] == [
        {**f.to_dict(), "details": {**f.details, "tests": sorted(f.details["tests"])}}
        for f in whole.findings]


def test_a_sweep_report_counts_its_cells_and_names_each_findings_cells():
    ends = [("failed", "AssertionError:\n\nNot equal"), ("ok", ""), ("ok", ""), ("timeout", "ran past")]
    results = [CellResult(Cell("copy", "kernels.copy:case", {"n": int(label[7:-1])}), status, 0.5, reports,
                          message)
               for (label, reports), (status, message) in zip(origins(), ends, strict=True)]
    report = SweepReport.build("copies", results)
    assert report.headline() == "sweep copies: 4 cells (2 ok, 1 failed, 1 timeout), 2 findings"
    assert report.errors == 2 + 2  # two error findings, two cells not ok
    d = report.to_dict()
    assert d["counts"] == {"ok": 2, "failed": 1, "timeout": 1, "memory": 0, "crashed": 0}
    assert [c["id"] for c in d["cells"]] == ["copy[n=100]", "copy[n=128]", "copy[n=130]", "copy[n=7]"]
    assert [c["findings"] for c in d["cells"]] == [1, 0, 2, 1]
    assert d["reports"][0]["findings"][0]["details"]["cells"] == ["copy[n=100]", "copy[n=130]", "copy[n=7]"]
    notes = report.to_sarif()["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["properties"] for n in notes] == [{"cell": "copy[n=100]", "status": "failed"},
                                                {"cell": "copy[n=7]", "status": "timeout"}]
    again = [CellResult.from_dict(c.to_dict()) for c in results]
    assert SweepReport.build("copies", again).to_dict() == d
