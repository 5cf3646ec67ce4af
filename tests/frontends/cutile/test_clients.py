"""Clients on cuTile kernels unchanged: the tracer, and ``tilescope run`` intercepting ``ct.launch``."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

pytest.importorskip("cuda.tile")

import tilescope  # noqa: E402
from tests.frontends.cutile import buggy  # noqa: E402
from tests.frontends.cutile import kernels as ck  # noqa: E402
from tests.frontends.markers import bug_line, sanitizer_run  # noqa: E402


def test_tracer_records_tile_loads_and_stores(tmp_path):
    rng = np.random.default_rng(2)
    x, sums = rng.standard_normal((64, 300)).astype(np.float32), np.zeros(64, np.float32)
    launcher = tilescope.trace(ck.row_sums, clients="tracer", trace_dir=tmp_path / "t", values="all")
    launcher[(2,)](x, sums, 32, 128)
    np.testing.assert_allclose(sums, x.astype(np.float64).sum(axis=1), rtol=1e-5)
    ops = tilescope.load_trace(tmp_path / "t").ops
    loads = ops[ops.kind == "load"]
    assert len(loads) == 2 * 3  # two blocks, three column tiles each (the last partial)
    assert sorted(tuple(i) for i in loads.loop_iterations) == [(0,), (0,), (1,), (1,), (2,), (2,)]
    # the partial last tile: 300 - 256 = 44 of 128 columns per row are inside
    last = loads[loads.loop_iterations.map(lambda i: list(i) == [2])]
    assert set(last.active_lanes.astype(int)) == {32 * 44}


SCRIPT = textwrap.dedent("""
    import numpy as np
    import cuda.tile as ct
    from tests.frontends.cutile import buggy, kernels

    a = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    c = np.zeros_like(a)
    ct.launch(None, (ct.cdiv(1000, 256),), kernels.vector_add, (a, a, c, 256))
    assert np.array_equal(c, 2 * a), "vector_add"
    ct.launch(None, (4,), buggy.scale_unchecked, (a, c, 256))
    print("script done")
""")


def test_tilescope_run_intercepts_ct_launch_in_an_unmodified_script(tmp_path):
    script = tmp_path / "cutile_script.py"
    script.write_text(SCRIPT)
    run, reports = sanitizer_run(script, timeout=120)
    assert "script done" in run.stderr, run.stderr
    (report,) = reports
    assert report["summary"]["launches"] == 2
    (finding,) = report["findings"]
    assert (finding["kind"], finding["kernel"], finding["line"]) == (
        "out-of-bounds load", "scale_unchecked", bug_line(buggy.scale_unchecked._pyfunc, "load"),
    )  # fmt: skip
