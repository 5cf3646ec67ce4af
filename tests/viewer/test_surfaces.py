"""The ways in: ``tilescope run`` storing reports beside the trace for ``tilescope view``, and the
notebook display."""

from __future__ import annotations

import html
import json
import subprocess
import sys
import textwrap

from tilescope.viewer import TraceModel, show

OFF_BY_ONE = textwrap.dedent("""
    import numpy as np
    import triton
    import triton.language as tl

    @triton.jit
    def add(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs <= n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=offs < n)

    x = np.zeros(100, np.float32)
    add[(2,)](x, np.zeros_like(x), 100, BLOCK=64)
""")


def test_tilescope_run_stores_findings_the_view_draws(tmp_path):
    (tmp_path / "bug.py").write_text(OFF_BY_ONE)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "tilescope.cli",
            "run",
            "-c",
            "tracer,sanitizer",
            "--trace-dir",
            "tr",
            "--no-fail",
            "bug.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    stored = json.loads((tmp_path / "tr" / "reports" / "sanitizer.json").read_text())
    assert stored["findings"][0]["details"]["first_element"] == [100]
    assert not (tmp_path / "tr" / "reports" / "tracer.json").exists()
    meta, _ = TraceModel(tmp_path / "tr").launch_container(1)
    (finding,) = meta["findings"]
    assert finding["client"] == "sanitizer" and finding["line"] == 10  # the tl.load line of the script
    assert finding["marks"][0]["element"] == [100]
    # the script was run by a relative name from tmp_path: its source is found beside the trace
    source = meta["source"]
    assert source["file"] == "bug.py" and source["verified"] and source["lines"][1].startswith("def add(")


def test_tracer_alone_writes_no_reports_folder(tmp_path):
    (tmp_path / "ok.py").write_text(OFF_BY_ONE.replace("offs <= n", "offs < n"))
    subprocess.run(
        [sys.executable, "-m", "tilescope.cli", "run", "-c", "tracer", "--trace-dir", "tr", "ok.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert not (tmp_path / "tr" / "reports").exists()


def test_notebook_display_is_the_self_contained_page_in_a_sandboxed_frame(traces):
    view = show(traces["oob"])
    frame = view._repr_html_()
    assert frame.startswith("<iframe srcdoc=") and 'sandbox="allow-scripts"' in frame
    assert "allow-same-origin" not in frame
    page = html.unescape(frame.split('srcdoc="', 1)[1].split('" sandbox=', 1)[0])
    assert page == view.html and "tilescope-launch-1" in page and "connect-src 'none'" in page


def test_reports_passed_in_memory_are_overlaid(traces, tmp_path):
    import shutil

    copy = tmp_path / "oob"
    shutil.copytree(traces["oob"], copy)
    shutil.rmtree(copy / "reports")
    reports = [r for r in traces["launchers"]["oob"].reports if r.client == "sanitizer"]
    meta, _ = TraceModel(copy, reports=reports).launch_container(1)
    assert [f["client"] for f in meta["findings"]] == ["sanitizer"]
