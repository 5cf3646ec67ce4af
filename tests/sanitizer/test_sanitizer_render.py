"""Diagnostics: headline, location, the caret under the access, notes; rich and plain agree."""

import io
import json

import numpy as np
from rich.console import Console
from sanitizer_kernels import copy_tail, matmul_rows_unmasked

import tilescope
from tilescope.clients.sanitizer.render import caret_label
from tilescope.clients.sanitizer.report import SanitizerReport
from tilescope.render import caret_span, lines


def _matmul_report():
    M, N, K = 70, 48, 64
    launcher = tilescope.trace(matmul_rows_unmasked, clients="sanitizer")
    launcher[(2, 2)](np.ones((M, K), np.float32), np.ones((K, N), np.float32), np.zeros((M, N), np.float32),
                     M, N, K, BM=64, BN=32, BK=32)
    return launcher.reports[0]


def test_caret_under_the_call():
    assert caret_span("    x = tl.load(p + o, mask=m)", 9) == (8, 7)
    assert caret_span("    tl.store(p, v)", 5) == (4, 8)


def test_diagnostic_layout():
    report = _matmul_report()
    (f,) = report.findings
    text = report.to_text().splitlines()
    assert text[0].startswith("error[out-of-bounds load]: 1856 of 2048 lanes read past the end of `a_ptr` "
                              "(fp32[70, 64])")
    assert text[1].endswith(f"sanitizer_kernels.py:{f.line}:{f.column}   program (1, 0), loop k: iteration 0")
    source, caret = text[3], text[4]
    gutter = len(f"{f.line} | ")
    assert source[gutter + f.column - 1:].startswith("tl.load(")
    assert caret.index("^") == gutter + f.column - 1
    assert caret.count("^") == len("tl.load")
    assert caret.endswith("first bad element a_ptr[70, 0]: row 70 >= 70 rows")
    notes = [line.split(":", 1)[0].strip() for line in text[5:] if line.strip().startswith("=")]
    assert notes == ["= programs", "= address", "= from", "= mask does not cover dim 0"]
    assert "kk = k + tl.arange(0, BK)   (line" in report.to_text()
    assert text[-1] == "sanitizer: 1 finding in 1 launch"


def test_rich_matches_plain():
    report = _matmul_report()
    out = io.StringIO()
    Console(file=out, width=300, color_system=None).print(report)
    assert out.getvalue().rstrip("\n") == report.to_text()


def test_json_round_trip_renders_the_same():
    n = 100
    launcher = tilescope.trace(copy_tail, clients="sanitizer")
    launcher[(4,)](np.zeros(n, np.float32), np.zeros(n, np.float32), n, BLOCK=32)
    report = launcher.reports[0]
    data = json.loads(report.to_json())
    assert data["client"] == "sanitizer" and len(data["findings"]) == 2
    from tilescope.clients.base import Finding

    again = [Finding(**{**d, "program_ids": [tuple(p) for p in d["program_ids"]]}) for d in data["findings"]]
    assert [lines(f, caret_label) for f in again][0][:5] == lines(report.findings[0], caret_label)[:5]
    assert SanitizerReport("sanitizer", again, data["summary"]).to_text() == report.to_text()
