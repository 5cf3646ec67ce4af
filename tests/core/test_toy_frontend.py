"""The engine serves a second DSL with no Triton in the process: a toy frontend of ~100 lines.

The test runs in a fresh interpreter where ``import triton`` fails, drives the engine through a
vector add, a masked reduction, an atomic histogram and an out-of-bounds store with the tracer and
the sanitizer attached, and checks outputs against NumPy references in float64 and the finding's
line against the toy kernel's source.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).parent

SCRIPT = textwrap.dedent(
    """
    import json, sys
    sys.modules["triton"] = None  # any `import triton` now raises ImportError
    import numpy as np
    import tilescope
    from tilescope import frontends
    import toy, toy_kernels as tk

    frontends.register(toy.FRONTEND)
    trace_dir = sys.argv[1]
    rng = np.random.default_rng(7)
    out = {"findings": {}, "launches": {}}

    def run(kernel, grid, *args):
        # sanitizer and tracer on every launch (the tracer makes the engine compute real outputs)
        name = kernel.fn.__name__
        launcher = tilescope.trace(kernel, clients=["sanitizer", "tracer"], trace_dir=f"{trace_dir}/{name}")
        launcher[grid](*args)
        sanitizer, tracer = launcher.reports
        out["findings"][name] = [
            dict(kind=f.kind, line=f.line, file=f.file, element=f.details["first_element"],
                 lanes=f.details["lanes"])
            for f in sanitizer.findings
        ]
        out["launches"][name] = len(tilescope.load_trace(f"{trace_dir}/{name}").launches)

    n = 1000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    z = np.zeros(n, np.float32)
    run(tk.vector_add, (16,), x, y, z, n)
    # an fp32 add is the float64 sum rounded once to fp32
    out["add_error"] = float(np.abs(z - (x.astype(np.float64) + y).astype(np.float32)).max())

    rows, cols = 5, 50
    m = rng.standard_normal((rows, cols)).astype(np.float32)
    sums = np.zeros(rows, np.float32)
    run(tk.masked_row_sum, (rows,), m, sums, cols)
    out["sum_error"] = float(np.abs(sums - m.astype(np.float64).sum(axis=1)).max())

    data = rng.integers(0, 10, 300).astype(np.int32)
    bins = np.zeros(10, np.int32)
    run(tk.histogram, (5,), data, bins, 300)
    out["histogram_ok"] = bool((bins == np.bincount(data, minlength=10)).all())

    src, dst = rng.standard_normal(128).astype(np.float32), np.zeros(128, np.float32)
    run(tk.shifted_store, (2,), src, dst, 128)
    out["shifted_ok"] = bool((dst[1:] == src[:-1]).all())
    out["triton_loaded"] = [m for m, v in sys.modules.items() if m.startswith("triton") and v is not None]
    print(json.dumps(out))
    """
)


def test_a_toy_frontend_runs_and_is_checked_without_triton(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "trace")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["triton_loaded"] == []
    assert out["add_error"] == 0.0
    assert out["sum_error"] < 1e-4  # fp32 accumulation of 50 values
    assert out["histogram_ok"] and out["shifted_ok"]  # in-bounds lanes behave as on a GPU
    assert out["launches"] == {"vector_add": 1, "masked_row_sum": 1, "histogram": 1, "shifted_store": 1}
    store_line = next(i for i, text in enumerate((HERE / "toy_kernels.py").read_text().splitlines(), 1)
                      if "off by one" in text)  # fmt: skip
    assert out["findings"] == {
        "vector_add": [],
        "masked_row_sum": [],
        "histogram": [],
        "shifted_store": [
            {"kind": "out-of-bounds store", "line": store_line, "file": str(HERE / "toy_kernels.py"),
             "element": [128], "lanes": 1}
        ],
    }  # fmt: skip
