"""The bounds policy: past a view but inside its storage is a warning that runs; past the storage, an error.

Kernel libraries gather along a dimension by handing the kernel ``inp.as_strided(index.shape,
(inp.stride(0), 0))``, a view with stride 0 along the gathered dimension, and adding ``index *
inp.stride(1)`` inside the kernel: a correct op whose addresses leave the view and stay inside the
input's storage. By default (``bounds="warn"``) that runs as on the GPU and the sanitizer calls it a
warning; ``bounds="view"`` makes it an error, ``bounds="storage"`` says nothing; leaving the storage
is an error under every policy.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

import tilescope
from tilescope.engine.errors import LaunchError
from tilescope.render import report_text

from .gather_op import GATHER_LINE, gather_dim1, gather_kernel, inputs

pytest_plugins = ["pytester"]
LIBRARY = (Path(__file__).parent / "gather_op.py").read_text(encoding="utf-8")


def test_a_gather_through_as_strided_runs_by_default():
    inp, index = inputs()
    out = gather_dim1(inp, index, tilescope.trace(gather_kernel))
    torch.testing.assert_close(out, torch.gather(inp, 1, index), rtol=0, atol=0)


def test_the_sanitizer_calls_it_a_warning_outside_the_view_inside_its_storage():
    inp, index = inputs()
    launcher = tilescope.trace(gather_kernel, clients="sanitizer", compute_outputs=True)
    out = gather_dim1(inp, index, launcher)
    torch.testing.assert_close(out, torch.gather(inp, 1, index), rtol=0, atol=0)
    (report,) = launcher.reports
    assert report.errors == []
    (finding,) = report.findings
    assert (finding.kind, finding.severity, finding.line) == ("load outside view", "warning", GATHER_LINE)
    assert "read outside the view `inp_ptr` (fp32[512, 64]), inside its storage" in finding.message
    assert finding.details["programs"] == 1  # only the last row leaves the view's extent
    text = report_text(report)
    assert "warning[load outside view]" in text
    assert "first element outside the view inp_ptr[511, " in text and "inside its storage" in text


def test_view_policy_makes_it_an_error_and_storage_policy_says_nothing():
    inp, index = inputs()
    with pytest.raises(tilescope.OutOfBoundsError, match=rf"gather_kernel.*:{GATHER_LINE}"):
        gather_dim1(inp, index, tilescope.trace(gather_kernel, bounds="view"))
    quiet = tilescope.trace(gather_kernel, clients="sanitizer", bounds="storage", compute_outputs=True)
    torch.testing.assert_close(gather_dim1(inp, index, quiet), torch.gather(inp, 1, index))
    assert quiet.reports[0].findings == []


@triton.jit
def gather_kernel_off_by_one(inp_ptr, index_ptr, out_ptr, n_cols, stride_row, stride_dim,
                             BLOCK: tl.constexpr):  # fmt: skip
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    idx = tl.load(index_ptr + row * n_cols + cols, mask=mask, other=0)
    x = tl.load(inp_ptr + row * stride_row + (idx + 1) * stride_dim, mask=mask)  # BUG: one past
    tl.store(out_ptr + row * n_cols + cols, x, mask=mask)


def test_past_the_storage_stays_an_error():
    inp, index = inputs()
    index[-1] = index[-1].clamp(max=298)
    index[-1, 5] = 299  # the last row's last column, plus one: past the input's storage
    launcher = tilescope.trace(gather_kernel_off_by_one, clients="sanitizer")
    gather_dim1(inp, index, launcher)
    by_kind = {f.kind: f for f in launcher.reports[0].findings}
    assert set(by_kind) == {"out-of-bounds load", "load outside view"}
    oob = by_kind["out-of-bounds load"]
    bug_line = gather_kernel_off_by_one.fn.__code__.co_firstlineno + 7
    assert (oob.severity, oob.line, oob.details["lanes"]) == ("error", bug_line, 1)
    with pytest.raises(tilescope.OutOfBoundsError, match="1 lane"):
        gather_dim1(inp, index, tilescope.trace(gather_kernel_off_by_one))


def test_the_environment_sets_the_policy(monkeypatch):
    inp, index = inputs()
    monkeypatch.setenv("TILESCOPE_BOUNDS", "view")
    with pytest.raises(tilescope.OutOfBoundsError):
        gather_dim1(inp, index, tilescope.trace(gather_kernel))
    monkeypatch.setenv("TILESCOPE_BOUNDS", "viwe")
    with pytest.raises(LaunchError, match="TILESCOPE_BOUNDS must be one of 'warn', 'view', 'storage'; got"):
        gather_dim1(inp, index, tilescope.trace(gather_kernel))


SCRIPT = textwrap.dedent("""
    import torch
    from gather_op import gather_dim1, inputs

    inp, index = inputs()
    assert torch.equal(gather_dim1(inp, index), torch.gather(inp, 1, index))
    print("gathered")
""")


def _run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "tilescope.cli", "run", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)  # fmt: skip


@pytest.mark.slow
def test_tilescope_run_bounds(tmp_path):
    (tmp_path / "gather.py").write_text(SCRIPT)
    (tmp_path / "gather_op.py").write_text(LIBRARY)
    warned = _run("-c", "sanitizer", "gather.py", cwd=tmp_path)
    assert warned.returncode == 0, warned.stderr
    assert "gathered" in warned.stdout and "warning[load outside view]" in warned.stderr
    strict = _run("-c", "sanitizer", "--bounds", "view", "gather.py", cwd=tmp_path)
    assert strict.returncode == 1 and "error[out-of-bounds load]" in strict.stderr
    bad = _run("--bounds", "viwe", "gather.py", cwd=tmp_path)
    assert bad.returncode == 2 and "invalid choice: 'viwe'" in bad.stderr


@pytest.mark.slow
def test_pytest_plugin_bounds(pytester):
    pytester.makepyfile(gather_op=LIBRARY)
    pytester.makepyfile(test_gather="""
        import torch
        from gather_op import gather_dim1, inputs

        def test_gather():
            inp, index = inputs()
            assert torch.equal(gather_dim1(inp, index), torch.gather(inp, 1, index))
    """)
    args = ("--tilescope=sanitizer", "-p", "no:cacheprovider", "test_gather.py")
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=1)
    pytester.runpytest_subprocess(*args, "--tilescope-bounds=view").assert_outcomes(failed=1)
