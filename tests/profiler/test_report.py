"""The report: roofline figures, JSON schema and round trip, determinism, merging, the command line."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from conftest import profile, site
from kernels import column_kernel, matmul_2d_kernel

from tilescope.clients.base import Report, merge_by_client
from tilescope.clients.profiler import SCHEMA, ProfilerReport
from tilescope.gpu.specs import ROOFS
from tilescope.render import report_text


def _matmul(rng, dtype, m=128, n=128, k=64):
    a = torch.from_numpy(rng.standard_normal((m, k)).astype(dtype))
    b = torch.from_numpy(rng.standard_normal((k, n)).astype(dtype))
    c = torch.empty((m, n))
    launch, report = profile(matmul_2d_kernel, (m // 32, n // 32), a, b, c, m, n, k, *a.stride(), *b.stride(),
                             *c.stride(), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    np.testing.assert_allclose(c.numpy(), a.double().numpy() @ b.double().numpy(), rtol=2e-3, atol=2e-3)
    return launch, report


def test_roofline_of_a_matmul(rng):
    m, n, k = 128, 128, 64
    launch, _ = _matmul(rng, np.float32, m, n, k)
    roof = launch["roofline"]
    assert roof["flops_by_roof"] == {"fp32": 2 * m * n * k}  # ieee fp32 dots run on the fp32 units
    dram = (m * k + k * n) * 4 + m * n * 4  # A and B read, C written, each byte once
    assert roof["dram_bytes"] == dram
    assert roof["intensity"] == float(f"{2 * m * n * k / dram:.4g}")
    h200 = ROOFS["h200"]
    assert roof["ridge"] == float(f"{h200.peak('fp32') / h200.bandwidth:.4g}")
    # 2 * 128 * 128 * 64 FLOP over 128 KiB is 16 FLOP/B, above the fp32 ridge (51.1 TFLOP/s measured
    # over 4.25 TB/s = 12 FLOP/B): compute-bound on the fp32 units
    assert roof["intensity"] == 16.0
    assert roof["bound"] == "compute"
    assert roof["floor_us"]["compute"] > roof["floor_us"]["memory"]
    fp16_launch, _ = _matmul(rng, np.float16, m, n, k)
    assert fp16_launch["roofline"]["roof"] == "fp16"


def test_report_is_deterministic_and_round_trips(rng):
    x = torch.from_numpy(rng.standard_normal((512, 6)).astype(np.float32))
    runs = []
    for _ in range(2):
        out = torch.empty((6, 512))
        _, report = profile(column_kernel, (6,), x, out, 512, 6, BLOCK=512)
        runs.append(report)
    assert runs[0].to_json() == runs[1].to_json()
    data = json.loads(runs[0].to_json())
    assert data["client"] == "profiler" and data["summary"]["schema"] == SCHEMA
    back = Report.from_json(runs[0].to_json())
    assert isinstance(back, ProfilerReport) and back.launches == runs[0].launches
    merged = merge_by_client([runs[0], runs[1]])[0]
    assert len(merged.launches) == 1  # the same launch from two processes is one entry
    text = report_text(runs[0], width=200)
    assert "x_ptr + r * stride_row + col" in text and "strided 24 B" in text
    assert "warning[uncoalesced access]" in text
    assert str(runs[0]) == report_text(runs[0], width=130)  # print(report) shows the report, not its fields


@pytest.mark.slow  # a fresh interpreter and an offline compile: over 10 s on a shared machine
def test_tilescope_profile_runs_an_unmodified_gpu_script(tmp_path):
    script = tmp_path / "scale.py"
    script.write_text(textwrap.dedent("""
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)

        x = torch.randn(8192, device="cuda")
        out = torch.empty_like(x)
        scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
        torch.testing.assert_close(out, 2 * x)
    """))
    output = tmp_path / "profile.json"
    done = subprocess.run([sys.executable, "-m", "tilescope.cli", "profile", "-o", str(output), str(script)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "scale_kernel" in done.stderr and "redundant mask" in done.stderr
    (launch,) = json.loads(output.read_text())["summary"]["launches"]
    load = site(launch, "load", "x_ptr")
    assert load["efficiency"] == 1.0 and load["mask"]["redundant"]
    assert launch["roofline"]["flops"] == 8192
    assert launch["resources"]["target"] == "sm_90a"


def test_profiler_stacks_with_the_sanitizer(rng):
    from kernels import masked_copy_kernel

    import tilescope

    n = 1000
    src = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    dst = torch.zeros(n)
    launcher = tilescope.trace(masked_copy_kernel, clients="profiler,sanitizer", compute_outputs=True)
    launcher[(1,)](src, dst, n + 24, BLOCK=1024)  # a bound past the end: 24 lanes out of bounds
    profile, sanitized = launcher.reports
    assert {f.kind for f in sanitized.findings} == {"out-of-bounds load", "out-of-bounds store"}
    np.testing.assert_array_equal(dst.numpy(), src.numpy())  # the in-bounds lanes were copied
    load = site(profile.launches[0], "load", "src_ptr")
    assert load["active_lanes"] == n + 24  # enabled lanes, the out-of-bounds ones included
