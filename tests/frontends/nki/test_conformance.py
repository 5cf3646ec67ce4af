"""NKI tutorial-style kernels on the engine: outputs against float64 references, and no findings.

Tolerances: fp32 elementwise work is within a few ulp of the float64 result (rtol 1e-6 where one
rounding happens, 1e-5 where exp, rsqrt and reductions over a row compound); matmuls accumulate
K products in fp32, so their error grows with sqrt(K) * eps32 * |a||b| (atol scaled by K).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tilescope
from tests.frontends.nki import kernels as nk

RNG_SEED = 20261202


@pytest.fixture
def rng():
    return np.random.default_rng(RNG_SEED)


def normal(rng, *shape):
    # non-zero inputs: a zero would hide a lane that was never written
    x = rng.standard_normal(shape)
    x[np.abs(x) < 1e-3] = 0.5
    return x.astype(np.float32)


def f64(x):
    return np.asarray(x, dtype=np.float64)


def softmax64(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def gelu64(h):
    return 0.5 * h * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h**3)))


def case_tensor_add(rng):
    a, b = normal(rng, 256, 1024), normal(rng, 256, 1024)
    return nk.tensor_add, (2, 2), (a, b), f64(a) + f64(b), 1e-6, 0.0


def case_scaled_add_ragged(rng):
    x, y = normal(rng, 300, 64), normal(rng, 300, 64)
    out = np.full_like(x, np.nan)
    return nk.scaled_add_ragged, (1,), (x, y, out, 1.5), 1.5 * f64(x) + f64(y), 1e-6, 1e-6


def case_softmax(rng):
    x = normal(rng, 384, 200) * 4
    return nk.softmax, (3,), (x,), softmax64(f64(x)), 1e-5, 1e-7


def case_matmul_tiled(rng):
    lhsT, rhs = normal(rng, 256, 256), normal(rng, 256, 1024)
    return nk.matmul_tiled, (1,), (lhsT, rhs), f64(lhsT).T @ f64(rhs), 1e-5, 256 * 2e-7


def case_matmul_spmd(rng):
    a, b = normal(rng, 256, 384), normal(rng, 384, 1024)
    return nk.matmul_spmd, (2, 2), (a, b), f64(a) @ f64(b), 1e-5, 384 * 2e-7


def case_rmsnorm(rng):
    a, g = normal(rng, 300, 96), normal(rng, 96)
    ref = f64(a) / np.sqrt((f64(a) ** 2).mean(axis=1, keepdims=True)) * f64(g)
    return nk.rmsnorm, (1,), (a, g), ref, 1e-5, 1e-6


def case_layernorm(rng):
    x, gamma, beta = normal(rng, 256, 160) * 3 + 1, normal(rng, 160), normal(rng, 160)
    mu = f64(x).mean(axis=1, keepdims=True)
    var = ((f64(x) - mu) ** 2).mean(axis=1, keepdims=True)
    ref = (f64(x) - mu) / np.sqrt(var + 1e-5) * f64(gamma) + f64(beta)
    return nk.layernorm, (2,), (x, gamma, beta, 1e-5), ref, 1e-5, 1e-5


def case_transpose_2d(rng):
    x = normal(rng, 256, 384)
    return nk.transpose_2d, (2, 3), (x,), f64(x).T, 0.0, 0.0


def case_attention(rng):
    d, seq = 64, 512
    q, k, v = normal(rng, d, seq), normal(rng, d, seq), normal(rng, seq, d)
    p = softmax64(f64(q).T @ f64(k) / math.sqrt(d))
    return nk.attention, (seq // 128,), (q, k, v), p @ f64(v), 1e-4, 1e-5


def case_bias_gelu_stats(rng):
    x, bias = normal(rng, 256, 128), normal(rng, 128)
    out, sums = np.full_like(x, np.nan), np.full((256, 1), np.nan, np.float32)
    ref = gelu64(f64(x) + f64(bias))
    return nk.bias_gelu_stats, (2,), (x, bias, out, sums), (ref, ref.sum(axis=1, keepdims=True)), 1e-5, 1e-5


CASES = [case_tensor_add, case_scaled_add_ragged, case_softmax, case_matmul_tiled, case_matmul_spmd,
         case_rmsnorm, case_layernorm, case_transpose_2d, case_attention, case_bias_gelu_stats]  # fmt: skip


def outputs(kernel, args, returned):
    """What a kernel produced: its return value, or the arrays it wrote into (no scalars)."""
    if returned is not None:
        return [returned]
    written = [a for a in args[2:] if isinstance(a, np.ndarray)]
    return written


@pytest.mark.parametrize("case", CASES, ids=[c.__name__[5:] for c in CASES])
def test_kernel_matches_float64_reference(case, rng):
    kernel, grid, args, ref, rtol, atol = case(rng)
    got = outputs(kernel, args, kernel[grid](*args))
    refs = list(ref) if isinstance(ref, tuple) else [ref]
    assert len(got) == len(refs)
    for g, r in zip(got, refs, strict=True):
        assert g.shape == r.shape
        np.testing.assert_allclose(f64(g), r, rtol=rtol, atol=atol * max(1.0, np.abs(r).max()))


@pytest.mark.parametrize("case", CASES, ids=[c.__name__[5:] for c in CASES])
def test_clean_kernel_has_no_findings(case, rng):
    kernel, grid, args, *_ = case(rng)
    launcher = tilescope.trace(kernel, clients="sanitizer")
    launcher[grid](*args)
    (report,) = launcher.reports
    assert report.findings == []
