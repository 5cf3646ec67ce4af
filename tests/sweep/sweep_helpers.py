"""What the sweep tests share: a spec over this folder's case modules, and a report's mode-free essence."""

from __future__ import annotations

import textwrap
from pathlib import Path

HERE = Path(__file__).parent

#: a small matrix with one cell of each ending: clean, a planted bug (a finding and a wrong result),
#: a kernel that never stops, a native crash
MIXED = textwrap.dedent("""
    [sweep]
    name = "mixed"
    timeout = 12
    path = ["{here}"]

    [[kernel]]
    name = "softmax"
    case = "softmax_cases:case"
    shapes = [[3, 100], [3, 5000]]
    dtypes = ["float32"]

    [[kernel]]
    name = "sums"
    case = "faulty_cases:sums_case"
    shapes = [[2, 64], [2, 3]]
    constexprs = {{ splits = [4] }}

    [[kernel]]
    name = "native"
    case = "faulty_cases:native_case"
    shapes = [[2, 8], [2, 0]]
""")

#: how each cell of MIXED ends
MIXED_STATUSES = {
    "softmax[shape=3x100, dtype=float32]": "ok",
    "softmax[shape=3x5000, dtype=float32]": "failed",
    "sums[shape=2x64, splits=4]": "ok",
    "sums[shape=2x3, splits=4]": "timeout",
    "native[shape=2x8]": "ok",
    "native[shape=2x0]": "crashed",
}

#: the line of the planted bug in softmax_cases.py
BUG_LINE = next(i for i, line in enumerate((HERE / "softmax_cases.py").read_text().splitlines(), 1)
                if "planted bug" in line and "tl.store" in line)


def mixed_spec(tmp_path: Path) -> Path:
    """MIXED written to a file in ``tmp_path``."""
    path = tmp_path / "mixed.toml"
    path.write_text(MIXED.format(here=HERE))
    return path


def essence(report: dict) -> dict:
    """What must not depend on how a sweep ran (a merged report as JSON): each cell's status and
    finding count, and every merged finding but the ``first_*`` of one process's timing."""
    cells = {c["id"]: (c["status"], c["findings"]) for c in report["cells"]}
    findings = [(r["client"], f["kind"], f["file"], f["line"], f["details"].get("argument"), f["message"],
                 [tuple(p) for p in f["program_ids"]], f["details"]["cells"])
                for r in report["reports"] for f in r["findings"]]
    return {"cells": cells, "findings": findings}
