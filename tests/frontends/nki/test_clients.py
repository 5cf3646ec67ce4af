"""Every client on NKI kernels unchanged: the tracer's transfer records, the viewer, ``tilescope run``."""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from pathlib import Path

import numpy as np

import tilescope
from tests.frontends.markers import sanitizer_run
from tests.frontends.nki import buggy
from tests.frontends.nki import kernels as nk
from tests.frontends.nki.test_findings import bug_line
from tilescope.viewer.html import write_html
from tilescope.viewer.model import TraceModel

ROOT = Path(__file__).resolve().parents[3]


def test_tracer_records_dmas_as_transfers_between_hbm_and_sbuf(tmp_path):
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal((300, 64)).astype(np.float32) for _ in range(2))
    out = np.zeros_like(x)
    launcher = tilescope.trace(nk.scaled_add_ragged, clients="tracer", trace_dir=tmp_path / "t", values="all")
    launcher[1](x, y, out, 2.0)
    np.testing.assert_allclose(out, 2.0 * x.astype(np.float64) + y, rtol=1e-6)
    ops = tilescope.load_trace(tmp_path / "t").ops
    transfers = ops[ops.kind == "transfer"]
    # three 128-row tiles: two loads and a store each
    assert len(transfers) == 9
    directions = Counter((a["from"], a["to"], a["writes"]) for a in map(json.loads, transfers["attrs"]))
    assert directions == {("hbm", "sbuf", False): 6, ("sbuf", "hbm", True): 3}
    assert sorted(transfers.argument.unique()) == ["out", "x", "y"]
    # the last tile's masked-off rows 300..383 move nothing
    last_store = transfers[(transfers.argument == "out")].iloc[-1]
    assert int(last_store.active_lanes) == (300 - 256) * 64
    assert list(transfers.loop_iterations.iloc[-1]) == [2]


def test_viewer_page_of_a_traced_nki_bug(tmp_path):
    a = np.random.default_rng(5).standard_normal((300, 64)).astype(np.float32)
    clients = ["sanitizer", "tracer"]
    launcher = tilescope.trace(buggy.rmsnorm_unmasked, clients=clients, trace_dir=tmp_path / "t")
    launcher[1](a)
    sanitizer, _ = launcher.reports
    assert {f.kind for f in sanitizer.findings} == {"out-of-bounds load", "out-of-bounds store"}
    model = TraceModel(tmp_path / "t", reports=[sanitizer])
    (launch,) = model.index()["launches"]
    assert (launch["kernel"], launch["findings"]) == ("rmsnorm_unmasked", 2)
    page = write_html(model, tmp_path / "view.html")
    assert "rmsnorm_unmasked" in page.read_text()
    # the output the kernel allocated is drawn too: written by the store DMAs, never read
    meta, _ = model.launch_container(1)
    stats = {t["name"]: t["stats"] for t in meta["tensors"]}
    assert set(stats) == {"a_tensor", "out"}
    assert (stats["out"]["cells_written"], stats["out"]["cells_read"]) == (300 * 64, 0)
    assert (stats["a_tensor"]["cells_written"], stats["a_tensor"]["cells_read"]) == (0, 300 * 64)
    marks = {f["kind"]: [(m["argument"], m["element"]) for m in f["marks"]] for f in meta["findings"]}
    assert marks["out-of-bounds load"] == [("a_tensor", [300, 0])]
    assert marks["out-of-bounds store"] == [("out", [300, 0])] and len(marks) == 2
    assert meta["lines"][str(bug_line(buggy.rmsnorm_unmasked, "store"))]["findings"] == 1


SCRIPT = textwrap.dedent("""
    import numpy as np
    from tests.frontends.nki import buggy, kernels

    x = np.random.default_rng(0).standard_normal((256, 100)).astype(np.float32)
    y = kernels.softmax[2](x)
    assert np.allclose(y.sum(axis=1), 1.0, atol=1e-5), "softmax rows must sum to one"
    buggy.softmax_shifted[2](x)
    print("script done")
""")


def test_tilescope_run_checks_an_unmodified_nki_script(tmp_path):
    script = tmp_path / "nki_script.py"
    script.write_text(SCRIPT)
    run, reports = sanitizer_run(script, timeout=120)
    assert run.returncode == 1, run.stderr  # one error finding
    assert "script done" in run.stderr  # --json: the report owns stdout
    (report,) = reports
    assert report["summary"]["launches"] == 2
    (finding,) = report["findings"]
    assert (finding["kind"], finding["kernel"], finding["line"]) == (
        "out-of-bounds load", "softmax_shifted", bug_line(buggy.softmax_shifted, "load"),
    )  # fmt: skip
    assert finding["file"] == str(ROOT / "tests/frontends/nki/buggy.py")


NKI_SCRIPT = textwrap.dedent("""
    import numpy as np
    import neuronxcc.nki as nki
    import neuronxcc.nki.language as nl

    @nki.jit
    def nki_tensor_add_kernel_(a_input, b_input):
        c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
        ix = nl.program_id(0) * 128 + nl.arange(128)[:, None]
        iy = nl.arange(a_input.shape[1])[None, :]
        nl.store(c_output[ix, iy], value=nl.load(a_input[ix, iy]) + nl.load(b_input[ix, iy]))
        return c_output

    a = np.random.default_rng(1).standard_normal((384, 64)).astype(np.float32)
    b = np.random.default_rng(2).standard_normal((384, 64)).astype(np.float32)
    c = nki.simulate_kernel(nki_tensor_add_kernel_[4], a, b)  # one program too many
    assert np.array_equal(c, a + b), "wrong sum"
    print("script done")
""")


def test_tilescope_run_gives_an_unmodified_nki_script_its_nki_modules(tmp_path):
    script = tmp_path / "tutorial.py"
    script.write_text(NKI_SCRIPT)
    run, reports = sanitizer_run(script, timeout=120, in_repo=False)
    assert "script done" in run.stderr, run.stderr
    (report,) = reports
    kinds = sorted((f["kind"], f["line"], f["details"]["argument"]) for f in report["findings"])
    assert kinds == [("out-of-bounds load", 11, "a_input"), ("out-of-bounds load", 11, "b_input"),
                     ("out-of-bounds store", 11, "c_output")]  # fmt: skip
