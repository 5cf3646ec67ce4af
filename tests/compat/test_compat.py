"""tilescope.compat against float64 references, both lowerings, on Triton 3.9's interpreter."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from tilescope.compat import descriptor_ok, descriptor_violations
from tilescope.migrate.runner import load_module
from tilescope.migrate.verify import compare, run_job

KERNELS = Path(__file__).with_name("compat_kernels.py")
MODULE = load_module(KERNELS)
CASES = MODULE.cases()


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Run every case once in one interpreter child process; return (case, result, inputs, outputs)."""
    work = tmp_path_factory.mktemp("compat")
    jobs = []
    for i, shape in enumerate(CASES):
        arrays = MODULE.make_inputs(np.random.default_rng(i), **shape)
        np.savez(work / f"{i}_in.npz", **arrays)
        jobs.append(
            {
                "module": str(KERNELS),
                "shape": shape,
                "inputs": str(work / f"{i}_in.npz"),
                "outputs": str(work / f"{i}_out.npz"),
            }
        )
    results = run_job(sys.executable, "interpreter", jobs, work / "job.json", timeout=600)
    return [(job, result) for job, result in zip(jobs, results, strict=True)]


@pytest.mark.parametrize(
    "index",
    range(len(CASES)),
    ids=[
        f"{c['kernel']}-{'desc' if c['desc'] else 'ptr'}-{c.get('check', '')}-{c.get('pad', '')}"
        for c in CASES
    ],
)
def test_lowering_matches_reference(outcomes, index):
    job, result = outcomes[index]
    assert result["ok"], result.get("trace", result["error"])
    with np.load(job["inputs"]) as x, np.load(job["outputs"]) as y:
        wide = {k: x[k].astype(np.float64) for k in x.files}
        for name, want in MODULE.reference(wide, **job["shape"]).items():
            if list(job["shape"].get("check", ())) == [1] and name == "y":
                # dimension 0 unchecked: only rows inside the tensor are defined for the pointer lowering
                rows = job["shape"]["M"]
                got, want = y[name][:rows], want[:rows]
            else:
                got = y[name]
            ok, worst, why = compare(name, got.astype(np.float64), np.asarray(want), "float32")
            assert ok, why


def test_descriptor_rules_on_host():
    x = torch.empty(64, 64, dtype=torch.float16)
    assert descriptor_ok(x, (64, 1), (32, 32))
    assert "last stride is 64, not 1" in descriptor_violations(x, (1, 64), (32, 32))
    assert any("not 16-byte aligned" in v for v in descriptor_violations(x[:, 1:], (64, 1), (32, 32)))
    assert any("multiple of 16 bytes" in v for v in descriptor_violations(x, (60, 1), (32, 32)))
    assert any("under 16" in v for v in descriptor_violations(x, (64, 1), (32, 4)))
    assert any("rank 6" in v for v in descriptor_violations(x, (1,) * 6, (1,) * 6))
    assert descriptor_ok(x, (64, 1), (32, 32), base_offset=8)
    assert not descriptor_ok(x, (64, 1), (32, 32), base_offset=3)
