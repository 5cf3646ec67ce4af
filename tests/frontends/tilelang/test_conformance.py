"""TileLang kernels written like TileLang's examples, on the engine, against float64 references, and
clean under the sanitizer."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tilelang")

import torch  # noqa: E402

import tilescope  # noqa: E402
from tests.frontends.tilelang import kernels as tk  # noqa: E402
from tilescope.frontends.tilelang import compile  # noqa: E402


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(7)


def attention_reference(q, k, v, causal):
    q, k, v = (t.double() for t in (q, k, v))
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / q.shape[-1] ** 0.5
    if causal:
        n = q.shape[1]
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).tril().logical_not(), float("-inf"))
    return torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), v)


def cases(gen):
    """(name, PrimFunc, out_idx, inputs, float64 reference outputs, rtol, atol)."""
    r = lambda *shape, dtype=torch.float32: torch.randn(*shape, generator=gen).to(dtype)  # noqa: E731
    a, b = r(1000), r(1000)
    ma, mb = r(200, 96, dtype=torch.float16), r(96, 160, dtype=torch.float16)
    x = r(37, 300)
    ln_x, ln_w, ln_b = (
        r(30, 256, dtype=torch.bfloat16),
        r(256, dtype=torch.bfloat16),
        r(256, dtype=torch.bfloat16),
    )
    ln64 = ln_x.double()
    mean, var = ln64.mean(1), ln64.var(1, unbiased=False)
    q, k, v = (r(2, 96, 2, 32, dtype=torch.float16) for _ in range(3))
    t = r(96, 64)
    return [
        ("vector_add", tk.vector_add(1000), -1, (a, b), [a.double() + b.double()], 1e-6, 1e-6),
        # fp16 operands, fp32 accumulation, fp16 output: half-precision rounding of the result
        ("matmul", tk.matmul(200, 160, 96), -1, (ma, mb), [torch.relu(ma.double() @ mb.double())],
         2e-3, 2e-2),
        ("softmax", tk.softmax(37, 300), -1, (x,), [x.double().softmax(1)], 1e-5, 1e-7),
        # bf16 output: 8 bits of mantissa
        ("layer_norm", tk.layer_norm(30, 256), [-3, -2, -1], (ln_x, ln_w, ln_b),
         [torch.nn.functional.layer_norm(ln64, (256,), ln_w.double(), ln_b.double(), eps=1e-5), mean,
          (var + 1e-5).rsqrt()], 1e-2, 2e-2),
        ("flash_attention", tk.flash_attention(2, 2, 96, 32, False), [3], (q, k, v),
         [attention_reference(q, k, v, False)], 2e-3, 2e-3),
        ("flash_attention_causal", tk.flash_attention(2, 2, 96, 32, True), [3], (q, k, v),
         [attention_reference(q, k, v, True)], 2e-3, 2e-3),
        ("transpose", tk.transpose(96, 64), -1, (t,), [t.double().T], 0, 0),
    ]  # fmt: skip


CASE_NAMES = ["vector_add", "matmul", "softmax", "layer_norm", "flash_attention", "flash_attention_causal",
              "transpose"]  # fmt: skip


def _case(gen, name):
    return next(c for c in cases(gen) if c[0] == name)


def _outputs(result):
    return result if isinstance(result, list) else [result]


@pytest.mark.parametrize("name", CASE_NAMES)
def test_kernel_matches_float64_reference(gen, name):
    _, func, out_idx, inputs, refs, rtol, atol = _case(gen, name)
    outs = _outputs(compile(func, out_idx=out_idx)(*inputs))
    assert len(outs) == len(refs)
    for out, ref in zip(outs, refs, strict=True):
        np.testing.assert_allclose(out.double().numpy(), ref.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", CASE_NAMES)
def test_kernel_is_clean_under_the_sanitizer(gen, name):
    _, func, out_idx, inputs, _, _, _ = _case(gen, name)
    launcher = tilescope.trace(func, clients="sanitizer", out_idx=out_idx)
    launcher(*inputs)
    assert launcher.reports[0].findings == []


def test_atomic_column_sums_over_partial_blocks(gen):
    x = torch.randn(150, 200, generator=gen)
    out = torch.zeros(200)
    compile(tk.column_sums(150, 200))(x, out)
    np.testing.assert_allclose(out.double().numpy(), x.double().sum(0).numpy(), rtol=1e-5, atol=1e-5)
    launcher = tilescope.trace(tk.column_sums(150, 200), clients="sanitizer")
    launcher(x, torch.zeros(200))
    assert launcher.reports[0].findings == []


def test_numpy_inputs_give_numpy_outputs():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(700).astype(np.float32), rng.standard_normal(700).astype(np.float32)
    c = compile(tk.vector_add(700), out_idx=-1)(a, b)
    assert isinstance(c, np.ndarray)
    np.testing.assert_allclose(c, a.astype(np.float64) + b, rtol=1e-6)


def test_wrong_argument_shape_names_kernel_and_argument():
    func = tk.matmul(64, 64, 64)
    with pytest.raises(Exception, match=r"argument B: dimension 0 must be 64"):
        compile(func, out_idx=-1)(torch.zeros(64, 64).half(), torch.zeros(32, 64).half())


@pytest.mark.parametrize("rows", [50, 96])
def test_symbolic_sizes_come_from_the_inputs(gen, rows):
    x, s = torch.randn(rows, 64, generator=gen), torch.randn(rows, generator=gen)
    y = compile(tk.scale_rows_dynamic(), out_idx=-1)(x, s)
    assert y.shape == (rows, 64)
    np.testing.assert_allclose(y.double().numpy(), (x.double() * s.double()[:, None]).numpy(), rtol=1e-6)
