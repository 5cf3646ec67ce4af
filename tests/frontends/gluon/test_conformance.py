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
from tests.frontends.gluon import kernels as gk

SEED = 20261202
ONE_ROUNDING = 2.0**-23


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(SEED)


def normal(gen, *shape, dtype=torch.float32):
    # non-zero inputs: a zero would hide a lane that was never written
    x = torch.randn(*shape, generator=gen)
    x[x.abs() < 1e-3] = 0.5
    return x.to(dtype)


def f64(t):
    return t.double().numpy()


def traced(clients=()):
    return lambda kernel: tilescope.trace(kernel, clients=list(clients))


def cases(gen):
    """(name, run the kernel with ``run``, float64 reference, rtol, atol) per conformance kernel."""
    x, y = normal(gen, 1000), normal(gen, 1000)
    s = normal(gen, 37, 100)
    ln_x, w, b = normal(gen, 30, 64), normal(gen, 64), normal(gen, 64)
    t = normal(gen, 70, 45)
    m = normal(gen, 500)  # 500 = 7 full TMA boxes of 64 and one the tensor clips
    pa, pb = normal(gen, 100, 200), normal(gen, 100, 200)  # partial boxes along both dimensions
    A, B, Bt = normal(gen, 100, 96, dtype=torch.float16), normal(gen, 96, 80, dtype=torch.float16), \
        normal(gen, 80, 96, dtype=torch.float16)  # fmt: skip
    e = torch.exp(s.double() - s.double().max(1, keepdim=True).values)
    mean, var = ln_x.double().mean(1, keepdim=True), ln_x.double().var(1, unbiased=False, keepdim=True)
    return [
        ("vector_add", lambda run: gk.vector_add(x, y, run), f64(x) + f64(y), ONE_ROUNDING, 0),
        ("softmax", lambda run: gk.softmax(s, run), (e / e.sum(1, keepdim=True)).numpy(), 1e-5, 1e-7),
        ("layer_norm", lambda run: gk.layer_norm(ln_x, w, b, run),
         ((ln_x.double() - mean) / torch.sqrt(var + 1e-5) * w.double() + b.double()).numpy(), 1e-5, 1e-5),
        ("transpose", lambda run: gk.transpose(t, run), f64(t).T, 0, 0),
        ("memcpy_1d_tma", lambda run: gk.memcpy_1d_tma(m, run), f64(m), 0, 0),
        *[(f"add_tma_pipelined[{n}]", lambda run, n=n: gk.add_tma_pipelined(pa, pb, run, num_buffers=n),
           f64(pa) + f64(pb), ONE_ROUNDING, 0) for n in (1, 2, 3)],
        ("blocked_mma", lambda run: gk.blocked_mma(A, B, run), f64(A) @ f64(B), 0, 1e-4),
        ("blocked_mma[TRANSPOSE_B]", lambda run: gk.blocked_mma(A, Bt, run, TRANSPOSE_B=True),
         f64(A) @ f64(Bt).T, 0, 1e-4),
    ]  # fmt: skip


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
