"""Aggregation: one finding per (site, kind, argument), counted over programs, loops and batches."""

import numpy as np
import pytest
from sanitizer_kernels import copy_tail, matmul_rows_unmasked, wide_offsets

import tilescope
from tilescope.clients.sanitizer.programs import runs, summarize


def _sanitize(kernel, grid, *args, **kwargs):
    launcher = tilescope.trace(kernel, clients="sanitizer", **kwargs.pop("options", {}))
    launcher[grid](*args, **kwargs)
    return launcher.reports[0]


def test_runs_and_boxes():
    assert runs([3, 4, 5, 6, 7]) == "3..7"
    assert runs([0, 1, 2, 3, 8]) == "{0..3, 8}"
    assert summarize([(x, 0, 0) for x in range(3, 8)]) == "(3..7, 0, 0)"
    assert summarize([(x, y, 0) for x in range(4) for y in (1, 2)], rank=2) == "(0..3, 1..2)"
    assert summarize([(0, 0, 0), (5, 1, 0)], rank=2) == "(0, 0), (5, 1)"
    assert summarize([(x, x, 0) for x in range(9)], rank=2, limit=2) == "(0, 0), (1, 1) and 7 more"


def test_tail_finding_fields():
    n = 100
    report = _sanitize(copy_tail, (4,), np.zeros(n, np.float32), np.zeros(n, np.float32), n, BLOCK=32)
    load, store = report.findings
    assert (load.kind, store.kind) == ("out-of-bounds load", "out-of-bounds store")
    assert load.program_ids == [(3, 0, 0)]
    assert load.details["argument"] == "x_ptr"
    assert load.details["lanes"] == 1  # offs <= n lets exactly element n through
    assert load.details["first_element"] == (100,)
    assert load.details["relation"] == "index 100 >= 100"
    assert load.details["iteration"] is None
    assert load.line == store.line - 1


def test_matmul_over_programs_and_iterations():
    M, N, K = 70, 48, 64
    a, b, c = np.ones((M, K), np.float32), np.ones((K, N), np.float32), np.zeros((M, N), np.float32)
    report = _sanitize(matmul_rows_unmasked, (2, 2), a, b, c, M, N, K, BM=64, BN=32, BK=32)
    (f,) = report.findings
    assert f.program_ids == [(1, 0, 0), (1, 1, 0)]
    # rows 70..127 of the second row-block, 32 columns, 2 k-iterations, 2 column programs
    assert f.details["lanes"] == (128 - 70) * 32 * 2 * 2
    assert f.details["first_element"] == (70, 0)
    assert f.details["iteration"] == 0
    assert f.details["program_summary"] == "(1, 0..1)"
    assert f.details["loops"] == [{"line": f.line - 2, "variable": "k", "iteration": 0}]


@pytest.mark.parametrize("batch_size", [1, 3])
def test_batches_aggregate_like_one_pass(batch_size):
    M, N, K = 70, 48, 64
    args = (np.ones((M, K), np.float32), np.ones((K, N), np.float32), np.zeros((M, N), np.float32), M, N, K)
    whole = _sanitize(matmul_rows_unmasked, (2, 2), *args, BM=64, BN=32, BK=32)
    split = _sanitize(matmul_rows_unmasked, (2, 2), *args, BM=64, BN=32, BK=32,
                      options={"batch_size": batch_size})
    assert [f.to_dict() for f in split.findings] == [f.to_dict() for f in whole.findings]


def test_overflow_and_out_of_bounds_lanes_split():
    x = np.zeros(16, np.int32)
    report = _sanitize(wide_offsets, (3,), x, 2**30, BLOCK=4)
    kinds = {f.kind: f for f in report.findings}
    assert set(kinds) == {"int32 overflow", "out-of-bounds store"}
    assert kinds["int32 overflow"].program_ids == [(2, 0, 0)]  # 2 * 2**30 wraps
    assert kinds["out-of-bounds store"].program_ids == [(1, 0, 0)]  # 2**30 fits but is far out
    notes = kinds["int32 overflow"].details["notes"]
    wrapped_at = [n["line"] for n in notes if n["label"] == "wrapped here"]
    assert wrapped_at == [kinds["int32 overflow"].line - 1]
    assert not x.any()


def test_findings_accumulate_over_launches():
    launcher = tilescope.trace(copy_tail, clients="sanitizer")
    for n in (100, 90):
        launcher[(4,)](np.zeros(n, np.float32), np.zeros(n, np.float32), n, BLOCK=32)
    load = launcher.reports[0].findings[0]
    assert load.details["launches"] == 2
    assert load.details["lanes"] == 2
    # the first bad lane is the lowest program's over every launch (program 2 of the second launch,
    # not program 3 of the first), so reports of runs split across processes merge to the same finding
    assert load.details["first_element"] == (90,)
    assert load.details["first_program"] == [2, 0, 0]
    assert launcher.reports[0].summary["launches"] == 2


def test_descriptor_rules_of_one_call_make_one_finding():
    from sanitizer_kernels import narrow_descriptor

    x = np.zeros((8, 33), np.float32)  # rows of 132 bytes: not a multiple of 16
    report = _sanitize(narrow_descriptor, (2,), x, 8, 2, 33, BLOCK_M=4, BLOCK_N=2)
    (f,) = report.findings
    assert f.kind == "descriptor rule" and f.details["argument"] == "x_ptr"
    assert len(f.details["rules"]) == 2  # the row stride and the 8-byte block
    assert f.details["lanes"] == 2 and f.program_ids == [(0, 0, 0), (1, 0, 0)]
    assert f.details["first_element"] is None
    assert f.message.endswith("; made by 2 programs")


def test_reports_of_split_runs_merge_to_the_whole_run():
    from tilescope.clients.base import Report

    def run(sizes):
        launcher = tilescope.trace(copy_tail, clients="sanitizer")
        for n in sizes:
            launcher[(4,)](np.zeros(n, np.float32), np.zeros(n, np.float32), n, BLOCK=32)
        return launcher.reports[0]

    def plain(report):  # the byte address of the first bad lane is where this process's tensor was
        return [{**f.to_dict(), "details": {**f.details, "first_address": None}} for f in report.findings]

    whole = run([100, 90, 70])
    merged = Report.merge([run([70]), run([100]), run([90])])
    assert plain(merged) == plain(whole)
    assert merged.summary == whole.summary
    assert merged.to_text() == whole.to_text()
