"""flash-linear-attention's chunked and fused-recurrent ops, unmodified, on tilescope's engine and sanitizer.

Every op is a linear recurrence over time with a state ``S`` of shape ``[K, V]`` per head; the reference
runs that recurrence step by step in float64 (``_recurrence``), which is what FLA's chunked kernels compute
in blocks. Inputs use FLA's ``[B, T, H, K]`` layout. docs/compatibility.md keeps the table.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from .conftest import compare

pytestmark = pytest.mark.corpus
fla = pytest.importorskip("fla.ops", reason="install the corpus extra: "
                          "pip install -c constraints.txt -e '.[test,corpus]'")

B, T, H, K, V = 2, 40, 2, 32, 32  # T is not a multiple of FLA's 64-step chunks: the last chunk is partial


def _recurrence(q, k, v, *, g=None, gk=None, beta=None):
    """o_t = (q_t / sqrt(K)) S_t with S_t = decay_t * S_{t-1} + k_t u_t^T; u_t = v_t, or for the delta rule
    beta_t (v_t - S_{t-1}^T k_t). ``g`` is a per-head log decay, ``gk`` a per-key-channel one."""
    state = q.new_zeros(q.shape[0], q.shape[2], q.shape[3], v.shape[3])
    out = []
    for t in range(q.shape[1]):
        if g is not None:
            state = state * g[:, t].exp()[..., None, None]
        if gk is not None:
            state = state * gk[:, t].exp()[..., None]
        update = v[:, t]
        if beta is not None:
            update = beta[:, t, :, None] * (update - torch.einsum("bhk,bhkv->bhv", k[:, t], state))
        state = state + k[:, t, ..., None] * update[..., None, :]
        out.append(torch.einsum("bhk,bhkv->bhv", q[:, t] * q.shape[-1] ** -0.5, state))
    return torch.stack(out, dim=1)


def _qkv():
    return torch.randn(B, T, H, K), torch.randn(B, T, H, K), torch.randn(B, T, H, V)


def _log_decay(*shape):
    return F.logsigmoid(torch.randn(*shape) + 3)  # decays near 1, as trained models have


def _first(op):
    return lambda *args: op(*args)[0]


@pytest.fixture
def ieee_dots(monkeypatch):
    """fp32 ``tl.dot`` in full precision (Triton's TRITON_F32_DEFAULT): the chunked kernels multiply fp32
    blocks, which on an H200, and so on the engine, round their operands to tf32 by default
    (see test_tf32_default)."""
    monkeypatch.setenv("TRITON_F32_DEFAULT", "ieee")


@pytest.mark.parametrize("op", ["chunk_simple_gla", "fused_recurrent_simple_gla"])
def test_simple_gla(sanitized, ieee_dots, op):
    compare(_first(lambda q, k, v, g: getattr(fla, op)(q, k, v, g=g)),
            lambda q, k, v, g: _recurrence(q, k, v, g=g), [*_qkv(), _log_decay(B, T, H)],
            grad_of=(0, 1, 2, 3), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", ["chunk_gla", "fused_recurrent_gla"])
def test_gla(sanitized, ieee_dots, op):
    compare(_first(lambda q, k, v, g: getattr(fla, op)(q, k, v, g) if op == "chunk_gla"
                   else getattr(fla, op)(q, k, v, gk=g)),
            lambda q, k, v, g: _recurrence(q, k, v, gk=g), [*_qkv(), _log_decay(B, T, H, K)],
            grad_of=(0, 1, 2, 3), rtol=1e-4, atol=1e-4)


def test_chunk_linear_attn(sanitized, ieee_dots):
    compare(_first(lambda q, k, v: fla.chunk_linear_attn(q, k, v, normalize=False)), _recurrence, [*_qkv()],
            grad_of=(0, 1, 2), rtol=1e-4, atol=1e-4)


def test_chunk_retention(sanitized, ieee_dots):
    decay = torch.log1p(-torch.pow(2.0, -5.0 - torch.arange(H, dtype=torch.float64)))  # RetNet's, per head
    compare(_first(fla.chunk_retention),
            lambda q, k, v: _recurrence(q, k, v, g=decay.expand(q.shape[0], q.shape[1], H)), [*_qkv()],
            grad_of=(0, 1, 2), rtol=1e-4, atol=1e-4)


def test_fused_recurrent_delta_rule(sanitized):
    q, k, v = _qkv()
    compare(_first(fla.fused_recurrent_delta_rule), lambda q, k, v, beta: _recurrence(q, k, v, beta=beta),
            [q, F.normalize(k, dim=-1), v, torch.rand(B, T, H)], grad_of=(0, 1, 2, 3), rtol=1e-4, atol=1e-4)


def test_chunk_delta_rule_bf16(sanitized):
    # FLA refuses fp32 here ("does not support float32. Please use bfloat16"); bf16 keeps 8 mantissa bits, so
    # each rounding of an input or intermediate block is worth up to 2**-8 = 0.4% of its value
    q, k, v = _qkv()
    compare(_first(fla.chunk_delta_rule), lambda q, k, v, beta: _recurrence(q, k, v, beta=beta),
            [x.bfloat16() for x in (q, F.normalize(k, dim=-1), v, torch.rand(B, T, H))], grad_of=(0, 1, 2, 3),
            rms=2e-2)


def test_tf32_default(sanitized):
    # without ieee_dots the chunked kernel's fp32 dots round their operands to tf32 (10 of fp32's 23 mantissa
    # bits, up to 2**-11 = 0.05% each), as on an H200: the error is that size, not a wrong recurrence
    compare(_first(lambda q, k, v, g: fla.chunk_simple_gla(q, k, v, g=g)),
            lambda q, k, v, g: _recurrence(q, k, v, g=g), [*_qkv(), _log_decay(B, T, H)],
            grad_of=(0, 1, 2, 3), rms=2e-3)


def test_chunk_gated_delta_rule(sanitized, ieee_dots):
    q, k, v = _qkv()
    compare(_first(fla.chunk_gated_delta_rule), lambda q, k, v, g, beta: _recurrence(q, k, v, g=g, beta=beta),
            [q, F.normalize(k, dim=-1), v, _log_decay(B, T, H), torch.rand(B, T, H)], grad_of=(0, 1, 2, 3, 4),
            rtol=1e-4, atol=1e-4)


def test_fused_recurrent_hgrn(sanitized):
    def reference(x, g):
        h, out = torch.zeros_like(x[:, 0]), []
        for t in range(x.shape[1]):
            h = g[:, t].exp() * h + x[:, t]
            out.append(h)
        return torch.stack(out, dim=1)

    compare(_first(fla.fused_recurrent_hgrn), reference, [torch.randn(B, T, 64), _log_decay(B, T, 64)],
            grad_of=(0, 1))
