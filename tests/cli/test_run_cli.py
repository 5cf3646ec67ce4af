"""The command line end to end: tilescope run / show / demo, in subprocesses as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np

import tilescope

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import triton
    from tilescope.examples.vector_add import add_kernel

    n = int(sys.argv[1])
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    out = np.empty_like(x)
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    assert np.array_equal(out, x + 1), "wrong result"
    print("script done")
    if len(sys.argv) > 2:
        raise RuntimeError(sys.argv[2])
""")

OOB = textwrap.dedent("""
    import numpy as np
    import triton
    import triton.language as tl

    @triton.jit
    def copy_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs))

    x = np.zeros(100, np.float32)
    copy_kernel[(1,)](x, np.zeros(100, np.float32), BLOCK=128)
""")


def tilescope_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "tilescope.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_bundled_example_traced_through_the_command_line(tmp_path):
    (tmp_path / "add.py").write_text(SCRIPT)
    run = tilescope_cli("run", "-c", "tracer", "--trace-dir", "tr", "--values", "all", "add.py", 5000,
                        cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "script done" in run.stdout
    trace = tilescope.load_trace(tmp_path / "tr")
    ops = trace.ops
    assert trace.launches.kernel.tolist() == ["add_kernel"]
    assert ops.groupby("kind").size().to_dict() == {"load": 10, "store": 5}
    stored = ops[ops.kind == "store"].sort_values("pid_x")
    np.testing.assert_array_equal(np.concatenate(list(stored["values"]))[:5000], np.arange(5000) + 1)
    show = tilescope_cli("show", "tr", "--json", cwd=tmp_path)
    summary = json.loads(show.stdout)
    assert summary["totals"] == {"launches": 1, "kernels": 1, "rows": 15, "bytes": 3 * 5000 * 4}
    assert {s["argument"] for s in summary["sites"]} == {"x_ptr", "y_ptr", "out_ptr"}
    text = tilescope_cli("show", "tr", cwd=tmp_path)
    assert "add_kernel" in text.stdout and text.returncode == 0
    again = tilescope_cli("run", "-c", "tracer", "--trace-dir", "tr", "add.py", 10, cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr and "--append" in again.stderr


def test_script_that_raises_shows_its_traceback_and_writes_reports(tmp_path):
    (tmp_path / "add.py").write_text(SCRIPT)
    run = tilescope_cli("run", "-c", "tracer", "--trace-dir", "tr", "--json", "add.py", 100, "boom",
                        cwd=tmp_path)
    assert run.returncode == 1
    assert 'add.py", line' in run.stderr and "RuntimeError: boom" in run.stderr
    assert "runpy" not in run.stderr
    payload = json.loads(run.stdout)
    assert payload["status"] == 1 and payload["reports"][0]["summary"]["rows"] == 3
    assert tilescope.load_trace(tmp_path / "tr").launches.status.tolist() == ["complete"]


def test_error_findings_set_the_exit_status(tmp_path):
    (tmp_path / "oob.py").write_text(OOB)
    run = tilescope_cli("run", "-c", "sanitizer", "oob.py", cwd=tmp_path)
    assert run.returncode == 1 and "out-of-bounds" in run.stderr
    assert tilescope_cli("run", "-c", "sanitizer", "--no-fail", "oob.py", cwd=tmp_path).returncode == 0


def test_unknown_client_lists_the_known_ones(tmp_path):
    (tmp_path / "add.py").write_text(SCRIPT)
    run = tilescope_cli("run", "-c", "tracer,nosuch", "add.py", 10, cwd=tmp_path)
    assert run.returncode == 2
    assert "nosuch" in run.stderr and "sanitizer" in run.stderr and "tracer" in run.stderr


def test_cuda_tensors_without_a_gpu_get_a_hint(tmp_path):
    (tmp_path / "gpu.py").write_text("import torch\nx = torch.rand(10, device='cuda')\n"
                                     "g = torch.Generator(device='cuda')\nprint(x.device, g.device)\n")
    run = tilescope_cli("run", "gpu.py", cwd=tmp_path)  # the modelled GPU answers
    assert run.returncode == 0 and "cpu cpu" in run.stdout, run.stderr
    run = tilescope_cli("run", "--gpu", "off", "gpu.py", cwd=tmp_path)
    assert run.returncode == 1
    assert "there is none here" in run.stderr and "--gpu off" in run.stderr


def test_show_names_a_corrupt_trace(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "trace.json").write_text("{")
    run = tilescope_cli("show", "t", cwd=tmp_path)
    assert run.returncode == 2 and "trace.json" in run.stderr


def test_demo_finds_the_bug_fixes_it_and_writes_a_trace_and_its_picture(tmp_path):
    run = tilescope_cli("demo", "--rows", 12, "--cols", 300, "--dir", tmp_path / "demo", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    # the finding: headline, the user's line (the mask of the file the demo wrote), the source chain
    assert "error[out-of-bounds load]: 1 of 512 lanes read past the end of `in_ptr` (fp32[12, 300])" in out
    assert "demo/softmax.py:19:9   program (11)" in out
    assert "first bad element in_ptr[12, 0]: row 12 >= 12 rows" in out
    assert "mask does not cover dim 0: cols <= n_cols   (line 18)" in out
    assert "error[out-of-bounds store]" in out
    assert "-    mask = cols <= n_cols\n+    mask = cols < n_cols" in out
    assert "fixed kernel: 0 findings" in out and "-> OK" in out
    trace = tilescope.load_trace(tmp_path / "demo" / "trace")
    assert trace.launches.kernel.tolist() == ["softmax_kernel"]
    assert trace.ops.groupby("kind").size().to_dict() == {"load": 12, "reduce": 24, "store": 12}
    html = (tmp_path / "demo" / "view.html").read_text()
    assert "softmax_kernel" in html and "out-of-bounds" in html
    assert f"tilescope view {tmp_path / 'demo' / 'trace'}" in out
