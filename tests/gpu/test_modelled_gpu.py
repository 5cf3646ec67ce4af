"""GPU scripts unmodified on a CPU: the modelled GPU answers device queries as the real one does.

The H200's answers are checked against a recording made on an H200 (``h200_recorded.json``, written
by ``record_gpu.py`` through ``device``), including a compiled kernel's registers and shared memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

import tilescope
from tilescope.errors import TilescopeError
from tilescope.gpu import SPECS, modelled_gpu, resolve_gpu

RECORDED = json.loads((Path(__file__).parent / "h200_recorded.json").read_text())


def test_the_h200_row_is_what_an_h200_answers():
    spec = SPECS["h200"]
    for name, value in RECORDED["torch_props"].items():
        if name in ("gcnArchName", "name") or hasattr(spec, name):
            assert getattr(spec, name if name != "gcnArchName" else "name") == value, name
    assert spec.triton_properties() == RECORDED["triton_props"]
    assert spec.capability == tuple(RECORDED["capability"])
    assert {"backend": spec.backend, "arch": spec.arch, "warp_size": spec.warp_size} == RECORDED["target"]


def test_choosing_a_gpu():
    assert resolve_gpu("A100") is SPECS["a100"]
    assert resolve_gpu("off") is None
    with pytest.raises(TilescopeError, match="unknown GPU 'b300'.*h200, h100, a100, mi300x"):
        resolve_gpu("b300")


def test_torch_cuda_answers_as_the_gpu_and_cuda_tensors_live_on_the_host():
    with modelled_gpu(SPECS["a100"]):
        x = torch.randn(4, 5, device="cuda")
        assert x.device.type == "cpu"
        assert torch.zeros(3, device=torch.device("cuda", 0)).device.type == "cpu"
        assert x.cuda() is x
        assert x.to("cuda:0", torch.float16).dtype == torch.float16
        assert torch.cuda.is_available() and torch.cuda.device_count() == 1
        assert torch.cuda.get_device_name() == "NVIDIA A100-SXM4-80GB"
        assert torch.cuda.get_device_capability() == (8, 0)
        assert torch.cuda.get_device_properties("cuda").multi_processor_count == 108
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        end.record()
        assert end.elapsed_time(start) <= 0 <= start.elapsed_time(end)
    assert not torch.cuda.is_available()  # everything restored
    with pytest.raises((RuntimeError, AssertionError)):
        torch.empty(1, device="cuda")


def test_torch_dynamo_builds_its_trace_rules_under_the_model():
    """torch._dynamo (torch.compile, Inductor, Helion) maps torch objects to trace rules, one rule each."""
    from torch._dynamo import trace_rules

    with modelled_gpu(SPECS["h200"]):
        rules = trace_rules.get_torch_obj_rule_map.__wrapped__()  # uncached: with the stand-ins
        assert torch.cuda.synchronize in rules and torch.cuda.current_device in rules


def test_tritons_driver_answers_as_the_gpu():
    from triton.runtime import driver

    with modelled_gpu(SPECS["mi300x"]):
        assert driver.active.get_active_torch_device() == torch.device("cpu")
        target = driver.active.get_current_target()
        assert (target.backend, target.arch, target.warp_size) == ("hip", "gfx942", 64)
        props = driver.active.utils.get_device_properties(0)
        assert props["multiprocessor_count"] == 304 and props["warpSize"] == 64
        ms = triton.testing.do_bench(lambda: sum(range(1000)), quantiles=[0.5, 0.2, 0.8])
        assert len(ms) == 3 and all(t > 0 for t in ms)
        assert triton.testing.do_bench(lambda: None, return_mode="all")
    assert triton.testing.do_bench.__module__ == "triton.testing"


@triton.jit
def row_sum(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


def test_a_compiled_kernels_figures_are_the_gpus():
    """The handle a warmup returns compiles for the modelled target; the figures match an H200's."""
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        from record_gpu import softmax_kernel
    finally:
        sys.path.pop(0)
    x = torch.randn(1823, 781)
    y = torch.empty_like(x)
    with modelled_gpu(SPECS["h200"]), tilescope.session.current().intercept(None):
        kernel = softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), 1823, 781, BLOCK_SIZE=1024,
                                       num_stages=4, num_warps=8, grid=(1,))  # fmt: skip
        kernel._init_handles()
        assert (kernel.n_regs, kernel.n_spills) == (RECORDED["n_regs"], RECORDED["n_spills"])
        assert kernel.metadata.shared == int(RECORDED["metadata"]["shared"])
        assert kernel.metadata.num_warps == 8 and "ptx" in kernel.asm
        kernel[(4, 1, 1)](y, x, x.stride(0), y.stride(0), 1823, 781, 1024, 4)  # then launched on the engine
    torch.testing.assert_close(y.double(), torch.softmax(x.double(), -1), rtol=1e-5, atol=1e-6)
    assert not tilescope.session.current().intercepting


GPU_SCRIPT = textwrap.dedent("""
    import sys
    import torch
    import triton
    import triton.language as tl

    DEVICE = triton.runtime.driver.active.get_active_torch_device()

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
        offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)

    assert torch.cuda.is_available(), "needs a GPU"
    sms = torch.cuda.get_device_properties("cuda").multi_processor_count
    x, y = torch.rand(5000, device="cuda"), torch.rand(5000, device=DEVICE)
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(5000, 1024),)](x, y, out, 5000, BLOCK_SIZE=1024)
    torch.cuda.synchronize()
    assert torch.equal(out, x + y), "wrong result"
    ms = triton.testing.do_bench(lambda: add_kernel[(5,)](x, y, out, 5000, BLOCK_SIZE=1024))
    print(f"ok {torch.cuda.get_device_name()} {sms} SMs, {ms > 0}")
""")


def _run(tmp_path, *args, script=GPU_SCRIPT, env=None):
    (tmp_path / "gpu_script.py").write_text(script)
    command = [sys.executable, "-m", "tilescope.cli", "run", *args, "gpu_script.py"]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})  # fmt: skip


def test_tilescope_run_answers_for_a_gpu_and_says_do_bench_times_the_cpu(tmp_path):
    done = _run(tmp_path, "-c", "sanitizer")
    assert done.returncode == 0, done.stderr
    assert "ok NVIDIA H200 132 SMs, True" in done.stdout
    assert "do_bench times tilescope's CPU engine" in done.stderr
    assert "0 findings" in done.stderr
    done = _run(tmp_path, "--gpu", "h100")
    assert "ok NVIDIA H100 80GB HBM3 132 SMs" in done.stdout, done.stderr


def test_the_model_is_switchable_and_checked(tmp_path):
    off = _run(tmp_path, "--gpu", "off")
    assert off.returncode == 1 and "asks for a CUDA device" in off.stderr and "--gpu off" in off.stderr
    off = _run(tmp_path, env={"TILESCOPE_GPU": "off"})
    assert off.returncode == 1 and "--gpu off" in off.stderr
    bad = _run(tmp_path, "--gpu", "v100")
    assert bad.returncode == 2 and "unknown GPU 'v100'" in bad.stderr


def test_a_script_without_torch_does_not_import_it(tmp_path):
    script = "import sys\nimport triton\nprint('torch' in sys.modules)\n"
    done = _run(tmp_path, script=script)
    assert done.returncode == 0 and done.stdout.strip() == "False", done.stderr


def test_the_pytest_plugin_models_a_gpu(tmp_path):
    (tmp_path / "test_gpu_code.py").write_text(textwrap.dedent("""
        import torch

        def test_device():
            assert torch.cuda.get_device_name() == "AMD Instinct MI300X"
            assert torch.ones(2, device="cuda").sum().item() == 2
    """))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tilescope=sanitizer",
               "--tilescope-gpu=mi300x", "test_gpu_code.py"]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_benchmark_sweeps_can_be_cut_to_their_first_points(monkeypatch, capsys):
    seen = []

    @triton.testing.perf_report(triton.testing.Benchmark(
        x_names=["size"], x_vals=[2**i for i in range(10, 15)], line_arg="provider", line_vals=["engine"],
        line_names=["Engine"], ylabel="ms", plot_name="sweep", args={}))  # fmt: skip
    def sweep(size, provider):
        seen.append(size)
        return triton.testing.do_bench(lambda: torch.ones(size).sum())

    monkeypatch.setenv("TILESCOPE_BENCH_POINTS", "2")
    with modelled_gpu(SPECS["h200"]):
        sweep.run(print_data=False, show_plots=False)
    assert seen == [1024, 2048]
    assert "measuring the first 2 of 5 points" in capsys.readouterr().err
    monkeypatch.setenv("TILESCOPE_BENCH_POINTS", "zero")
    with pytest.raises(TilescopeError, match="TILESCOPE_BENCH_POINTS must be a positive number"):
        with modelled_gpu(SPECS["h200"]):
            pass
