"""Clients on TileLang kernels unchanged: the tracer's records, the race detector, and ``tilescope run``
routing ``tilelang.compile`` / ``@tilelang.jit`` of an unmodified script."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

pytest.importorskip("tilelang")

import tilelang.language as T  # noqa: E402
import torch  # noqa: E402

import tilescope  # noqa: E402
from tests.frontends.markers import bug_line, sanitizer_run  # noqa: E402
from tests.frontends.tilelang import buggy  # noqa: E402
from tests.frontends.tilelang import kernels as tk  # noqa: E402


def test_tracer_records_the_tile_operations_at_their_lines(tmp_path):
    gen = torch.Generator().manual_seed(1)
    a, b = torch.randn(100, 64, generator=gen).half(), torch.randn(64, 96, generator=gen).half()
    launcher = tilescope.trace(tk.matmul(100, 96, 64), clients="tracer", trace_dir=tmp_path / "t", out_idx=-1)
    c = launcher(a, b)
    np.testing.assert_allclose(
        c.double().numpy(), torch.relu(a.double() @ b.double()).numpy(), rtol=2e-3, atol=2e-2
    )
    trace = tilescope.load_trace(tmp_path / "t")
    ops, sites = trace.ops, trace.sites.set_index("site")
    text = {
        kind: sorted(set(sites.expression[ops[ops.kind == kind].site])) for kind in ("load", "dot", "store")
    }
    assert text == {
        "load": [
            "T.copy(A[by * block_M, ko * block_K], A_shared)",
            "T.copy(B[ko * block_K, bx * block_N], B_shared)",
        ],
        "dot": ["T.gemm(A_shared, B_shared, C_local)"],
        "store": ["T.copy(C_local, C[by * block_M, bx * block_N])"],
    }
    assert set(sites.file) == {tk.__file__}
    dots = ops[ops.kind == "dot"]
    assert len(dots) == 2 * 2 * 2  # 2 x 2 blocks, 2 K steps each
    assert sorted(set(tuple(i) for i in dots.loop_iterations)) == [(0,), (1,)]


def overlapping_rows(M, N, block_M=16):
    """Each block copies its rows one row down: neighbouring blocks write the same row."""

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M + 1, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_shared((block_M + 1, N), "float32")
            T.copy(X[bx * block_M, 0], tile)
            T.copy(tile, Y[bx * block_M, 0])  # BUG race

    return main


def test_race_detector_finds_blocks_writing_one_row_and_passes_the_clean_kernel():
    x = torch.randn(64, 32)
    launcher = tilescope.trace(overlapping_rows(64, 32), clients="racecheck")
    launcher(x, torch.zeros(65, 32))
    (finding,) = launcher.reports[0].findings
    assert finding.line == bug_line(overlapping_rows, "race")
    clean = tilescope.trace(tk.transpose(64, 64), clients="racecheck", out_idx=-1)
    clean(torch.randn(64, 64))
    assert clean.reports[0].findings == []


SCRIPT = textwrap.dedent("""
    import torch
    import tilelang
    from tests.frontends.tilelang import buggy, kernels

    x = torch.randn(300, 200, device="cuda")
    y = tilelang.compile(kernels.softmax(300, 200), out_idx=-1)(x)
    torch.testing.assert_close(y, x.softmax(1))
    jitted = tilelang.jit(out_idx=[-1])(kernels.vector_add)
    a = torch.randn(1000, device="cuda")
    torch.testing.assert_close(jitted(1000)(a, a), 2 * a)
    smooth = tilelang.compile(buggy.smooth_without_halo(256))
    smooth(torch.randn(256, device="cuda"), torch.zeros(256, device="cuda"))
    print("script done")
""")


def test_tilescope_run_routes_an_unmodified_tilelang_script(tmp_path):
    script = tmp_path / "tilelang_script.py"
    script.write_text(SCRIPT)
    run, reports = sanitizer_run(script, timeout=300)
    assert "script done" in run.stderr, run.stderr
    (report,) = reports
    assert report["summary"]["launches"] == 3
    (finding,) = report["findings"]
    assert (finding["kind"], finding["line"]) == (
        "out-of-bounds load",
        bug_line(buggy.smooth_without_halo, "shared"),
    )


def test_a_kernel_compiled_by_tilelangs_own_cpu_backend_runs_on_the_engine_too():
    import tilelang

    native = tilelang.compile(tk.vector_add(1000), out_idx=-1, target="c")  # TileLang's own C backend
    a, b = torch.randn(1000), torch.randn(1000)
    torch.testing.assert_close(native(a, b), a + b)
    launcher = tilescope.trace(native, clients="sanitizer")
    launcher(a, b)
    assert launcher.reports[0].findings == []
    assert launcher.name == "main"


def test_profiler_reports_the_tile_copies_and_a_guard_only_where_tiles_are_partial():
    def copies(M):
        a, b = torch.randn(M, 64).half(), torch.randn(64, 128).half()
        launcher = tilescope.trace(tk.matmul(M, 128, 64), clients="profiler", out_idx=-1)
        launcher(a, b)
        (launch,) = launcher.reports[0].to_dict()["summary"]["launches"]
        return {(s["kind"], s["argument"]): s for s in launch["sites"] if s["kind"] in ("load", "store")}

    even = copies(128)
    assert sorted(even) == [("load", "A"), ("load", "B"), ("store", "C")]
    assert all(s["efficiency"] == 1.0 and not s["mask"]["present"] for s in even.values())
    assert even[("load", "A")]["source"] == "T.copy(A[by * block_M, ko * block_K], A_shared)"
    partial = copies(100)  # the second row block covers rows 64..127 of 100: guarded, 36 rows enabled
    assert partial[("load", "A")]["mask"]["present"]
    assert partial[("load", "A")]["active_lanes"] == (64 + 36) * 32 * 2 * 2
    assert not partial[("load", "B")]["mask"]["present"]


def test_tilelang_compile_is_routed_only_while_a_session_intercepts():
    import tilelang

    from tilescope.frontends.tilelang.kernel import Kernel
    from tilescope.session import current

    with current().intercept(clients="sanitizer"):
        routed = tilelang.compile(tk.vector_add(256), out_idx=-1)
        a = torch.randn(256)
        torch.testing.assert_close(routed(a, a), 2 * a)
    assert isinstance(routed, Kernel)
    own = tilelang.compile(tk.vector_add(256), out_idx=-1, target="c")
    assert type(own).__name__ == "JITKernel"
