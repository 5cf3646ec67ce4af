"""A sweep over a real kernel's support matrix finds the one shape where its planted bug appears."""

from __future__ import annotations

import pytest
from sweep_helpers import BUG_LINE, HERE

from tilescope.sweep import load, local_backend, sweep


@pytest.mark.slow  # 153 cells
def test_the_softmax_matrix_finds_the_one_shape_with_the_planted_bug(tmp_path):
    spec = load(HERE / "softmax_matrix.toml")
    cells = spec.cells()
    assert len(cells) == (4 * 12 + 3) * 3
    report = sweep(spec, tmp_path / "out", local_backend())

    buggy = [f"softmax[shape=3x5000, dtype={d}]" for d in ("float32", "float16", "bfloat16")]
    [sanitizer] = report.reports
    [finding] = sanitizer.findings
    assert (finding.kind, finding.line, finding.details["argument"]) == \
        ("out-of-bounds store", BUG_LINE, "out_ptr")
    assert finding.details["cells"] == buggy
    # the wrong results of the same shape: the earlier rows' unmasked chunks overwrite the next rows
    assert {c.cell.id for c in report.cells if c.status != "ok"} == set(buggy)
    assert all(c.status == "failed" and "Not equal to tolerance" in c.message for c in report.cells
               if c.cell.id in buggy)
    assert sum(c.findings for c in report.cells) == 3
