"""Gluon tutorial-style kernels on the engine: outputs against float64 references, and no findings.

Tolerances: copies and transposes are exact; one fp32 add is one rounding of the exact sum
(rtol ONE_ROUNDING = 2**-23, an ulp); softmax and layer norm compound exp, sqrt and row
reductions in fp32 (rtol 1e-5);
wgmma multiplies fp16 operands exactly into fp32 and accumulates K products in fp32, so its error
grows with sqrt(K) * eps32 * |a||b| (atol 1e-4 for K <= 128 with unit-normal operands).
"""

from __future__ import annotations

import pytest
import torch
from numpy.testing import assert_allclose

import tilescope
from tests.frontends.gluon.cases import SEED, cases


def traced(clients=()):
    return lambda kernel: tilescope.trace(kernel, clients=list(clients))


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(SEED)


NAMES = [c[0] for c in cases(torch.Generator().manual_seed(SEED))]


@pytest.mark.parametrize("name", NAMES)
def test_output_matches_the_float64_reference(gen, name):
    _, launch, expected, rtol, atol = next(c for c in cases(gen) if c[0] == name)
    assert_allclose(launch(traced()).double().numpy(), expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", NAMES)
def test_clean_kernels_have_no_findings(gen, name):
    _, launch, expected, rtol, atol = next(c for c in cases(gen) if c[0] == name)
    reports = []

    def run(kernel):
        launcher = tilescope.trace(kernel, clients=["sanitizer", "racecheck"])
        reports.append(launcher)
        return launcher

    out = launch(run)
    assert_allclose(out.double().numpy(), expected, rtol=rtol, atol=atol)
    (launcher,) = reports
    assert [f.message for r in launcher.reports for f in r.findings] == []


@pytest.mark.parametrize("mode", ["serial", "concurrent"])
@pytest.mark.parametrize(
    "name", ["transpose", "add_tma_pipelined[2]", "add_warp_specialized[2]", "blocked_mma"]
)
def test_every_execution_mode_gives_the_same_outputs(gen, name, mode):
    # race-free kernels: one program at a time, and programs interleaved op by op, agree with batches
    _, launch, expected, rtol, atol = next(c for c in cases(gen) if c[0] == name)
    out = launch(lambda kernel: tilescope.trace(kernel, mode=mode))
    assert_allclose(out.double().numpy(), expected, rtol=rtol, atol=atol)
