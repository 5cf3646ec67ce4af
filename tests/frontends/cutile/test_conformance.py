"""cuTile sample-style kernels on the engine: outputs against float64 references, and no findings.

Tolerances: fp32 elementwise results within a few ulp (rtol 1e-6; 1e-5 where exp, rsqrt and row
reductions compound); fp16-operand matmuls are exact products accumulated in fp32 (atol ~ K *
eps32 * |a||b|); tf32 operands keep 10 mantissa bits, so each product is off by up to 2^-10
relative (atol ~ sqrt(K) * 2^-10 * |a||b|); bf16 outputs round once (rtol 2^-8).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cuda.tile")

import ml_dtypes  # noqa: E402

import tilescope  # noqa: E402
from tests.frontends.cutile import kernels as ck  # noqa: E402


@pytest.fixture
def rng():
    return np.random.default_rng(20261202)


def normal(rng, *shape, dtype=np.float32):
    x = rng.standard_normal(shape)
    x[np.abs(x) < 1e-3] = 0.5  # non-zero: a lane never written must not pass for a zero result
    return x.astype(dtype)


def f64(x):
    return np.asarray(x, dtype=np.float64)


def softmax64(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def case_vector_add(rng):
    a, b, c = normal(rng, 1000), normal(rng, 1000), np.full(1000, np.nan, np.float32)
    return ck.vector_add, (4,), (a, b, c, 256), c, f64(a) + f64(b), 1e-6, 0.0


def case_softmax_rows(rng):
    x, out = normal(rng, 64, 200) * 3, np.full((64, 200), np.nan, np.float32)
    return ck.softmax_rows, (64,), (x, out, 256), out, softmax64(f64(x)), 1e-5, 1e-7


def case_matmul(rng):
    a, b = normal(rng, 128, 200, dtype=np.float16), normal(rng, 200, 96, dtype=np.float16)
    c = np.full((128, 96), np.nan, np.float32)
    return ck.matmul, (2, 3), (a, b, c, 64, 32, 64), c, f64(a) @ f64(b), 1e-5, 200 * 2e-7


def case_matmul_tf32(rng):
    a, b, c = normal(rng, 96, 160), normal(rng, 160, 64), np.full((96, 64), np.nan, np.float32)
    return ck.matmul_tf32, (3, 2), (a, b, c, 32, 32, 32), c, f64(a) @ f64(b), 0.0, np.sqrt(160) * 2**-10


def case_layer_norm(rng):
    x, w, bias = normal(rng, 48, 100) * 2 + 1, normal(rng, 100), normal(rng, 100)
    y = np.full_like(x, np.nan)
    mu = f64(x).mean(axis=1, keepdims=True)
    ref = (f64(x) - mu) / np.sqrt(((f64(x) - mu) ** 2).mean(axis=1, keepdims=True) + 1e-5) * w + bias
    return ck.layer_norm, (48,), (x, w, bias, y, 100, 128, 1e-5), y, ref, 1e-5, 1e-5


def case_transpose(rng):
    x, out = normal(rng, 96, 160), np.full((160, 96), np.nan, np.float32)
    return ck.transpose, (3, 5), (x, out, 32, 32), out, f64(x).T, 0.0, 0.0


def case_embedding(rng):
    table = normal(rng, 50, 64)
    ids = rng.integers(0, 50, 100).astype(np.int32)
    out = np.full((100, 64), np.nan, np.float32)
    return ck.embedding, (4,), (ids, table, out, 32, 64), out, f64(table)[ids], 0.0, 0.0


def case_swiglu(rng):
    gate, up = (normal(rng, 16, 300, dtype=ml_dtypes.bfloat16) for _ in range(2))
    out = np.zeros((16, 300), ml_dtypes.bfloat16)
    g = f64(gate)
    return ck.swiglu, (16,), (gate, up, out, 512), out, g / (1 + np.exp(-g)) * f64(up), 2**-8, 1e-6


def case_row_sums(rng):
    x, sums = normal(rng, 100, 300), np.full(100, np.nan, np.float32)
    return ck.row_sums, (4,), (x, sums, 32, 128), sums, f64(x).sum(axis=1), 1e-5, 1e-6


CASES = [case_vector_add, case_softmax_rows, case_matmul, case_matmul_tf32, case_layer_norm, case_transpose,
         case_embedding, case_swiglu, case_row_sums]  # fmt: skip
IDS = [c.__name__[5:] for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_kernel_matches_float64_reference(case, rng):
    kernel, grid, args, out, ref, rtol, atol = case(rng)
    tilescope.trace(kernel)[grid](*args)
    np.testing.assert_allclose(f64(out), ref, rtol=rtol, atol=atol * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_clean_kernel_has_no_findings(case, rng):
    kernel, grid, args, *_ = case(rng)
    launcher = tilescope.trace(kernel, clients="sanitizer")
    launcher[grid](*args)
    assert launcher.reports[0].findings == []
