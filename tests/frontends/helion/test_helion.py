"""Helion kernels on the engine through their generated Triton code, with sites at the Helion lines.

Tolerances: fp32 results against float64 references; one rounding for elementwise work (rtol 1e-6),
exp/rsqrt/tanh and row reductions compound a few ulp (1e-5). The matmul's generated ``tl.dot`` takes
Triton's default fp32 input precision, tf32, as on the GPU: each product keeps 10 mantissa bits, so
atol ~ sqrt(K) * 2^-10 * |a||b| for K = 96.
"""

from __future__ import annotations

import linecache
import textwrap

import numpy as np
import pytest

helion = pytest.importorskip("helion")

import torch  # noqa: E402

import tilescope  # noqa: E402
from tests.frontends.helion import buggy  # noqa: E402
from tests.frontends.helion import kernels as hk  # noqa: E402
from tests.frontends.markers import bug_line, sanitizer_run  # noqa: E402


def randn(*shape):
    x = torch.randn(*shape, dtype=torch.float64)
    x[x.abs() < 1e-3] = 0.5  # non-zero inputs
    return x.to(torch.float32)


def f64(t):
    return t.detach().to(torch.float64).numpy()


def softmax64(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def case_add():
    x, y = randn(1000), randn(1000)
    return hk.add, (x, y), f64(x) + f64(y), 1e-6, 0.0


def case_softmax():
    x = randn(100, 64) * 3
    return hk.softmax, (x,), softmax64(f64(x)), 1e-5, 1e-7


def case_matmul():
    a, b = randn(64, 96), randn(96, 80)
    return hk.matmul, (a, b), f64(a) @ f64(b), 0.0, np.sqrt(96) * 2**-10


def case_rms_norm():
    x, w = randn(50, 64), randn(64)
    ref = f64(x) / np.sqrt((f64(x) ** 2).mean(axis=1, keepdims=True) + 1e-5) * f64(w)
    return hk.rms_norm, (x, w), ref, 1e-5, 1e-6


def case_layer_norm():
    x, w, b = randn(50, 64) * 2 + 1, randn(64), randn(64)
    mu = f64(x).mean(axis=1, keepdims=True)
    var = ((f64(x) - mu) ** 2).mean(axis=1, keepdims=True)
    return hk.layer_norm, (x, w, b), (f64(x) - mu) / np.sqrt(var + 1e-5) * f64(w) + f64(b), 1e-5, 1e-6


def case_row_sum():
    x = randn(100, 70)
    return hk.row_sum, (x,), f64(x).sum(axis=1), 1e-5, 1e-6


def case_gelu_tanh():
    x = randn(1000) * 2
    v = f64(x)
    return hk.gelu_tanh, (x,), 0.5 * v * (1 + np.tanh(0.7978845608028654 * (v + 0.044715 * v**3))), 1e-5, 1e-6


def case_transpose_scale():
    x = randn(40, 64)
    return hk.transpose_scale, (x, 2.0), 2.0 * f64(x).T, 1e-6, 0.0


CASES = [case_add, case_softmax, case_matmul, case_rms_norm, case_layer_norm, case_row_sum, case_gelu_tanh,
         case_transpose_scale]  # fmt: skip
IDS = [c.__name__[5:] for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_kernel_matches_float64_reference(case):
    torch.manual_seed(15)
    kernel, args, ref, rtol, atol = case()
    out = tilescope.trace(kernel)(*args)
    np.testing.assert_allclose(f64(out), ref, rtol=rtol, atol=atol * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_clean_kernel_has_no_findings(case):
    torch.manual_seed(16)
    kernel, args, *_ = case()
    launcher = tilescope.trace(kernel, clients="sanitizer")
    launcher(*args)
    assert launcher.reports[0].findings == []


def sanitize(kernel, *args):
    launcher = tilescope.trace(kernel, clients="sanitizer")
    launcher(*args)
    return launcher.reports[0].findings


def test_out_of_bounds_load_is_reported_at_the_helion_line_not_the_generated_one():
    (finding,) = sanitize(buggy.shifted_add_one, randn(1000))
    assert finding.kind == "out-of-bounds load"
    assert (finding.file, finding.line) == (buggy.__file__, bug_line(buggy.shifted_add_one.fn, "load"))
    assert finding.details["argument"] == "x"
    assert finding.details["first_element"] == (1000,)
    # the address chain names Helion lines too
    assert all(note["text"].strip() for note in finding.details["notes"])


def test_out_of_bounds_store_into_a_short_output():
    (finding,) = sanitize(buggy.row_sums_short_output, randn(100, 30))
    assert finding.kind == "out-of-bounds store"
    assert finding.line == bug_line(buggy.row_sums_short_output.fn, "store")
    assert finding.details["argument"] == "out"
    assert finding.details["first_element"] == (99,)


def test_out_of_bounds_gather_with_a_bad_id():
    ids = torch.tensor([1, 5, 70, 3] * 8, dtype=torch.int64)  # id 70 of a 50-row table
    (finding,) = sanitize(buggy.embedding, ids, randn(50, 16))
    assert (finding.kind, finding.line) == ("out-of-bounds load", bug_line(buggy.embedding.fn, "gather"))
    assert finding.details["argument"] == "table"
    assert finding.details["first_element"] == (70, 0)


def test_config_option_replaces_the_declared_config(tmp_path):
    x, y = randn(1000), randn(1000)
    config = {"block_sizes": [512]}
    launcher = tilescope.trace(hk.add, clients="tracer", trace_dir=tmp_path / "t", config=config)
    np.testing.assert_allclose(f64(launcher(x, y)), f64(x) + f64(y), rtol=1e-6)
    launches = tilescope.load_trace(tmp_path / "t").launches
    assert launches.grid.map(list).tolist() == [[2, 1, 1]]  # 1000 elements in blocks of 512, not 256


SCRIPT = textwrap.dedent("""
    import torch
    from tests.frontends.helion import buggy
    assert torch.cuda.is_available()  # the modelled GPU answers
    out = buggy.shifted_add_one(torch.randn(1000, device="cuda"))
    torch.cuda.synchronize()
    print("script done")
""")


@pytest.mark.slow  # a fresh interpreter importing torch's compiler stack (about 40 s on 2 cores)
def test_tilescope_run_maps_a_helion_script_s_findings_to_its_lines_on_the_modelled_gpu(tmp_path):
    script = tmp_path / "helion_script.py"
    script.write_text(SCRIPT)
    # the default modelled GPU: its torch.cuda stand-ins must not upset torch._dynamo, which Helion imports
    run, reports = sanitizer_run(script, timeout=300)
    assert "script done" in run.stderr, run.stderr
    (report,) = reports
    (finding,) = report["findings"]
    assert (finding["file"], finding["line"]) == (buggy.__file__, bug_line(buggy.shifted_add_one.fn, "load"))


def race_findings(kernel, *args):
    launcher = tilescope.trace(kernel, clients="racecheck")
    launcher(*args)
    return launcher.reports[0].findings


def test_row_tiles_writing_the_whole_output_race():
    (finding,) = race_findings(buggy.column_sums_racy, randn(128, 16))
    assert (finding.kind, finding.details["race"]) == ("data race", "write-after-write")
    assert (finding.file, finding.line) == (buggy.__file__, bug_line(buggy.column_sums_racy.fn, "race"))
    statement = linecache.getline(finding.file, finding.line)
    assert finding.column == len(statement) - len(statement.lstrip()) + 1  # the statement, not column 0
    assert finding.details["argument"] == "out"
    assert finding.details["programs"] == 4


def test_an_in_place_shift_reads_what_the_next_tile_overwrites():
    (finding,) = race_findings(buggy.shift_left_in_place, randn(256))
    assert (finding.kind, finding.details["race"]) == ("data race", "write-after-read")
    assert finding.line == bug_line(buggy.shift_left_in_place.fn, "race")
    assert finding.details["argument"] == "x"


def test_the_view_of_a_helion_race_shows_the_helion_source_and_both_sides(tmp_path):
    from tilescope.viewer import TraceModel, write_reports

    x = randn(256)
    before = x.clone()
    launcher = tilescope.trace(buggy.shift_left_in_place, clients=["tracer", "racecheck"], trace_dir=tmp_path)
    launcher(x)
    np.testing.assert_array_equal(x[:255].numpy(), before[1:].numpy())  # every load ran before any store
    write_reports(tmp_path, [r for r in launcher.reports if r.client == "racecheck"])
    meta, _ = TraceModel(tmp_path).launch_container(1)
    line = bug_line(buggy.shift_left_in_place.fn, "race")
    source = meta["source"]  # the user's Helion function, not the generated Triton module
    assert source["file"] == buggy.__file__ and source["verified"]
    assert source["lines"][line - source["first_line"]].strip() == "x[tile] = x[tile + 1]  # BUG race"
    (race,) = meta["findings"]
    # tile 0 reads x[64] (its last lane's x[tile + 1]), which tile 1 overwrites
    sides = [(m["argument"], m["element"], m["program"]) for m in race["marks"]]
    assert sides == [("x", [64], 0), ("x", [64], 1)]
    assert race["lines"] == [line] and meta["lines"][str(line)]["findings"] == 1


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_clean_kernel_has_no_race_findings(case):
    torch.manual_seed(17)
    kernel, args, *_ = case()
    assert race_findings(kernel, *args) == []
