"""Traces of real kernel runs (tracer + sanitizer) for the viewer's tests, built once per session."""

from __future__ import annotations

import numpy as np
import pytest

import tilescope
from tilescope.viewer import write_reports
from tilescope.viewer.examples import grouped_matmul_trace, out_of_bounds_trace, vector_add_trace

from .kernels_misc import (
    batched_scale_kernel,
    column_kernel,
    descriptor_copy_kernel,
    gather_kernel,
    histogram_kernel,
)


@pytest.fixture(scope="session")
def traces(tmp_path_factory):
    """``{"add": dir, "matmul": dir, "oob": dir}`` and the launchers that made them."""
    root = tmp_path_factory.mktemp("viewer-traces")
    made = {
        "add": vector_add_trace(root / "add", n=1000, block=128, values="all"),
        "matmul": grouped_matmul_trace(root / "matmul", values="sample"),
        "oob": out_of_bounds_trace(root / "oob"),
    }
    return {name: root / name for name in made} | {"launchers": made}


@pytest.fixture(scope="session")
def mixed(tmp_path_factory):
    """One trace, five launches of five kernels."""
    root = tmp_path_factory.mktemp("mixed") / "t"
    rng = np.random.default_rng(0)

    def run(kernel, grid, *args, **meta):
        launcher = tilescope.trace(
            kernel, clients=["tracer", "sanitizer"], trace_dir=root, append=True, values="sample"
        )
        launcher[grid](*args, **meta)
        write_reports(root, [r for r in launcher.reports if r.client != "tracer"])

    x = rng.random(256, dtype=np.float32)
    idx = rng.permutation(256).astype(np.int32)
    run(gather_kernel, (4,), x, idx, np.empty_like(x), BLOCK=64)
    run(
        histogram_kernel, (4,), rng.integers(0, 8, 200).astype(np.int32), np.zeros(8, np.int32), 200, BLOCK=64
    )
    cube = rng.random((3, 8, 16), dtype=np.float32)
    run(batched_scale_kernel, (3,), cube, np.empty_like(cube), 128, 16, M=8, N=16)
    src = rng.random((32, 64), dtype=np.float32)
    run(descriptor_copy_kernel, (2, 2), src, np.empty_like(src), 32, 64, BLOCK_M=16, BLOCK_N=32)
    square = rng.random((16, 16), dtype=np.float32)
    run(column_kernel, (16,), square.T, np.empty(256, np.float32), 16, BLOCK=16)
    return root


@pytest.fixture(scope="session")
def clients_trace(tmp_path_factory):
    """The trace and reports of ``tilescope run -c tracer,racecheck,profiler`` over
    ``clients_script.py`` (an in-place stencil that races, a column gather, the tutorial softmax)."""
    import subprocess
    import sys
    from pathlib import Path

    root = tmp_path_factory.mktemp("clients")
    script = Path(__file__).with_name("clients_script.py")
    command = [sys.executable, "-m", "tilescope.cli", "run", "-c", "tracer,racecheck,profiler"]
    run = subprocess.run(
        [*command, "--trace-dir", "tr", "--no-fail", str(script)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "results match the float64 references" in run.stdout
    return root / "tr"
