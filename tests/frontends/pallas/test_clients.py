"""Every client on Pallas kernels unchanged: the tracer's block loads per grid step, the profiler, the
viewer on a traced bug, and ``tilescope run`` on an unmodified JAX script."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

import tilescope  # noqa: E402
from tests.frontends.markers import bug_line, sanitizer_run  # noqa: E402
from tests.frontends.pallas import buggy  # noqa: E402
from tests.frontends.pallas import kernels as pk  # noqa: E402
from tilescope.viewer.html import write_html  # noqa: E402
from tilescope.viewer.model import TraceModel  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def test_tracer_records_each_k_step_of_a_blocked_matmul(tmp_path):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((64, 96)).astype(np.float32), rng.standard_normal((96, 64)).astype(np.float32)
    launcher = tilescope.trace(pk.matmul_acc, clients="tracer", trace_dir=tmp_path / "t")
    z = np.asarray(launcher(jnp.asarray(x), jnp.asarray(y)))
    np.testing.assert_allclose(z, x.astype(np.float64) @ y, rtol=1e-4, atol=1e-4)
    ops = tilescope.load_trace(tmp_path / "t").ops
    loads = ops[ops.kind == "load"]
    # one row per program: the k axis is sequential, so each of the 2 x 2 programs loads its x, y and
    # z blocks at each of the three k steps, the grid loop's iterations
    assert sorted(loads.argument.value_counts().to_dict().items()) == [
        ("x_ref", 12),
        ("y_ref", 12),
        ("z_ref", 12),
    ]
    assert sorted({tuple(i)[-1] for i in loads.loop_iterations}) == [0, 1, 2]
    assert set(loads.active_lanes.astype(int)) == {32 * 32}
    assert len(ops[ops.kind == "store"]) == 4 * (1 + 3)  # the zero fill at k == 0, then one per step
    assert len(ops[ops.kind == "dot"]) == 4 * 3


def test_profiler_counts_the_block_traffic_of_a_vector_add():
    rng = np.random.default_rng(4)
    x = jnp.asarray(rng.standard_normal(1024).astype(np.float32))
    launcher = tilescope.trace(pk.add_vectors, clients="profiler")
    launcher(x, x)
    (report,) = launcher.reports
    (launch,) = report.to_dict()["summary"]["launches"]
    assert launch["kernel"] == "add_vectors_kernel"
    assert launch["roofline"]["dram_bytes"] == 3 * 1024 * 4  # x and y read once, o written once
    assert launch["roofline"]["flops"] == 1024
    assert {s["pattern"] for s in launch["sites"]} == {"contiguous"}


def test_viewer_page_of_a_traced_pallas_bug(tmp_path):
    x = np.random.default_rng(5).standard_normal(1024).astype(np.float32)
    launcher = tilescope.trace(buggy.shifted_copy, clients=["sanitizer", "tracer"], trace_dir=tmp_path / "t")
    launcher(jnp.asarray(x))
    sanitizer, _ = launcher.reports
    assert [f.kind for f in sanitizer.findings] == ["out-of-bounds load"]
    model = TraceModel(tmp_path / "t", reports=[sanitizer])
    (launch,) = model.index()["launches"]
    assert (launch["kernel"], launch["findings"]) == ("shifted_copy_kernel", 1)
    assert "shifted_copy_kernel" in write_html(model, tmp_path / "view.html").read_text()


SCRIPT = textwrap.dedent("""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from tests.frontends.pallas import buggy, kernels

    x = jnp.asarray(np.random.default_rng(0).standard_normal(1000).astype(np.float32))
    out = jax.jit(kernels.add_vectors)(x, x)
    assert np.array_equal(np.asarray(out), 2 * np.asarray(x)), "add_vectors"
    buggy.unmasked_add(x, x)
    print("script done")
""")


def test_tilescope_run_checks_an_unmodified_pallas_script(tmp_path):
    script = tmp_path / "pallas_script.py"
    script.write_text(SCRIPT)
    run, reports = sanitizer_run(script, timeout=300)
    assert "script done" in run.stderr, run.stderr
    (report,) = reports
    assert report["summary"]["launches"] == 2
    (finding,) = report["findings"]
    assert (finding["kind"], finding["kernel"], finding["line"]) == (
        "out-of-bounds load", "unmasked_add_kernel", bug_line(buggy.unmasked_add_kernel, "load"),
    )  # fmt: skip


PLUGIN_TESTS = textwrap.dedent("""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from tests.frontends.pallas import buggy, kernels

    def test_clean():
        x = jnp.asarray(np.random.default_rng(0).standard_normal(1000).astype(np.float32))
        assert np.array_equal(np.asarray(jax.jit(kernels.add_vectors)(x, x)), 2 * np.asarray(x))

    def test_buggy():
        x = jnp.asarray(np.random.default_rng(0).standard_normal(1000).astype(np.float32))
        buggy.unmasked_add(x, x)
""")


def test_pytest_plugin_fails_the_test_whose_pallas_kernel_reads_out_of_bounds(tmp_path):
    (tmp_path / "test_pallas_suite.py").write_text(PLUGIN_TESTS)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tilescope=sanitizer", tmp_path],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert "1 failed, 1 passed" in run.stdout, run.stdout[-2000:]
    assert (
        "test_buggy" in run.stdout and f"buggy.py:{bug_line(buggy.unmasked_add_kernel, 'load')}" in run.stdout
    )
