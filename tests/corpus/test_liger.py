"""Liger-Kernel's ops, unmodified, through tilescope's engine and sanitizer, against float64 torch (issue 18).

Each op is called through Liger's public functional API (``liger_kernel.transformers.functional``) as a model
calls it, forward and backward, on small random inputs; the ``sanitized`` fixture fails the test on any
sanitizer finding. docs/compatibility.md keeps the table of what passes and why the rest does not.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from .conftest import compare

pytestmark = pytest.mark.corpus
lf = pytest.importorskip("liger_kernel.transformers.functional", reason="install the corpus extra: "
                         "pip install -c constraints.txt -e '.[test,corpus]'")

ROWS, HIDDEN, VOCAB = 6, 96, 200


def _rms(x, w, eps=1e-6, offset=0.0):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (offset + w)


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rope_reference(q, k, cos, sin):
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin


def _rope_tables(seq, dim):
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    angles = torch.outer(torch.arange(seq, dtype=torch.float32), inv_freq)
    emb = torch.cat((angles, angles), dim=-1)[None]
    return emb.cos(), emb.sin()


def _jsd_reference(log_q, log_p, beta=0.5):
    p, q = log_p.exp(), log_q.exp()
    log_m = (beta * p + (1 - beta) * q).log()
    return (beta * (p * (log_p - log_m)).sum() + (1 - beta) * (q * (log_q - log_m)).sum()) / log_q.shape[0]


def _poly_reference(x, w, b, eps=1e-6):
    def norm(u):
        return u * torch.rsqrt(u.pow(2).mean(-1, keepdim=True) + eps)

    return w[0] * norm(x.pow(3)) + w[1] * norm(x.pow(2)) + w[2] * norm(x) + b


def _targets(n, vocab, ignored=1):
    target = torch.randint(0, vocab, (n,))
    target[:ignored] = -100
    return target


def test_rms_norm(sanitized):
    compare(lambda x, w: lf.liger_rms_norm(x, w, 1e-6), _rms,
            [torch.randn(ROWS, HIDDEN), torch.rand(HIDDEN) + 0.5], grad_of=(0, 1))


def test_rms_norm_gemma_offset(sanitized):
    compare(lambda x, w: lf.liger_rms_norm(x, w, 1e-6, offset=1.0, casting_mode="gemma"),
            lambda x, w: _rms(x, w, offset=1.0), [torch.randn(ROWS, HIDDEN), torch.randn(HIDDEN)],
            grad_of=(0, 1))


def test_fused_add_rms_norm(sanitized):
    def reference(x, r, w):
        residual = x + r
        return _rms(residual, w), residual

    compare(lambda x, r, w: lf.liger_fused_add_rms_norm(x, r, w, 1e-6), reference,
            [torch.randn(ROWS, HIDDEN), torch.randn(ROWS, HIDDEN), torch.rand(HIDDEN) + 0.5],
            grad_of=(0, 1, 2))


def test_layer_norm(sanitized):
    compare(lambda x, w, b: lf.liger_layer_norm(x, w, b, 1e-5),
            lambda x, w, b: F.layer_norm(x, (HIDDEN,), w, b, 1e-5),
            [torch.randn(ROWS, HIDDEN), torch.randn(HIDDEN), torch.randn(HIDDEN)], grad_of=(0, 1, 2))


def test_group_norm(sanitized):
    channels, groups = 8, 4
    compare(lambda x, w, b: lf.liger_group_norm(x, w, b, channels, groups, 1e-5),
            lambda x, w, b: F.group_norm(x, groups, w, b, 1e-5),
            [torch.randn(3, channels, 40), torch.randn(channels), torch.randn(channels)], grad_of=(0, 1, 2))


def test_poly_norm(sanitized):
    compare(lambda x, w, b: lf.liger_poly_norm(x, w, b), _poly_reference,
            [torch.randn(ROWS, HIDDEN), torch.randn(3), torch.tensor(0.3)], grad_of=(0, 1, 2),
            rtol=1e-4, atol=1e-4)


def test_dyt(sanitized):
    compare(lf.liger_dyt, lambda x, a, g, b: g * torch.tanh(a * x) + b,
            [torch.randn(ROWS, HIDDEN), torch.tensor([0.7]), torch.randn(HIDDEN), torch.randn(HIDDEN)],
            grad_of=(0, 1, 2, 3))


def test_swiglu(sanitized):
    compare(lf.liger_swiglu, lambda a, b: F.silu(a) * b,
            [torch.randn(ROWS, HIDDEN), torch.randn(ROWS, HIDDEN)], grad_of=(0, 1))


def test_geglu(sanitized):
    compare(lf.liger_geglu, lambda a, b: F.gelu(a, approximate="tanh") * b,
            [torch.randn(ROWS, HIDDEN), torch.randn(ROWS, HIDDEN)], grad_of=(0, 1))


def test_relu_squared(sanitized):
    compare(lf.liger_relu_squared, lambda x: F.relu(x).pow(2), [torch.randn(ROWS, HIDDEN)], grad_of=(0,))


def test_rope(sanitized):
    cos, sin = _rope_tables(10, 32)
    compare(lambda q, k, c, s: lf.liger_rope(q, k, c, s), _rope_reference,
            [torch.randn(2, 4, 10, 32), torch.randn(2, 2, 10, 32), cos, sin], grad_of=(0, 1))


def test_softmax(sanitized):
    compare(lf.liger_softmax, lambda x: torch.softmax(x, -1), [torch.randn(ROWS, 300)], grad_of=(0,))


def test_sparsemax(sanitized):
    def reference(x):
        z, _ = torch.sort(x, dim=-1, descending=True)
        k = torch.arange(1, x.shape[-1] + 1, dtype=x.dtype)
        support = 1 + k * z > z.cumsum(-1)
        size = support.sum(-1, keepdim=True)
        tau = (z.cumsum(-1).gather(-1, size - 1) - 1) / size
        return torch.clamp(x - tau, min=0)

    compare(lf.liger_sparsemax, reference, [torch.randn(ROWS, 50)], grad_of=(0,))


def test_cross_entropy(sanitized):
    compare(lambda x, t: lf.liger_cross_entropy(x, t), lambda x, t: F.cross_entropy(x, t),
            [torch.randn(ROWS, VOCAB), _targets(ROWS, VOCAB)], grad_of=(0,))


def test_cross_entropy_label_smoothing_sum(sanitized):
    compare(lambda x, t: lf.liger_cross_entropy(x, t, reduction="sum", label_smoothing=0.1),
            lambda x, t: F.cross_entropy(x, t, reduction="sum", label_smoothing=0.1),
            [torch.randn(ROWS, VOCAB), _targets(ROWS, VOCAB)], grad_of=(0,))


def test_fused_linear_cross_entropy(sanitized):
    compare(lambda x, w, t, b: lf.liger_fused_linear_cross_entropy(x, w, t, b),
            lambda x, w, t, b: F.cross_entropy(x @ w.T + b, t),
            [torch.randn(ROWS, HIDDEN), torch.randn(VOCAB, HIDDEN) / 10, _targets(ROWS, VOCAB),
             torch.randn(VOCAB)], grad_of=(0, 1, 3))


def test_kl_div(sanitized):
    compare(lambda q, p: lf.liger_kl_div(q, p, reduction="batchmean"),
            lambda q, p: F.kl_div(q, p, reduction="batchmean"),
            [torch.randn(ROWS, VOCAB).log_softmax(-1), torch.randn(ROWS, VOCAB).softmax(-1)], grad_of=(0,))


def test_jsd(sanitized):
    compare(lambda q, p: lf.liger_jsd(q, p), _jsd_reference,
            [torch.randn(ROWS, VOCAB).log_softmax(-1), torch.randn(ROWS, VOCAB).log_softmax(-1)],
            grad_of=(0,))


def test_tvd(sanitized):
    compare(lambda p, q: lf.liger_tvd(p, q, reduction="batchmean"),
            lambda p, q: 0.5 * (p - q).abs().sum() / p.shape[0],
            [torch.randn(ROWS, VOCAB).softmax(-1), torch.randn(ROWS, VOCAB).softmax(-1)], grad_of=(0,))


def _ce_reference(x, t, softcap=None, z_scale=0.0):
    logits = softcap * torch.tanh(x / softcap) if softcap else x
    kept = t != -100
    lse = torch.logsumexp(logits[kept], dim=-1)
    return F.cross_entropy(logits, t) + z_scale * (lse * lse).mean()


def test_cross_entropy_softcap_z_loss(sanitized):
    compare(lambda x, t: lf.liger_cross_entropy(x, t, softcap=30.0, lse_square_scale=1e-2),
            lambda x, t: _ce_reference(x, t, softcap=30.0, z_scale=1e-2),
            [3 * torch.randn(ROWS, VOCAB), _targets(ROWS, VOCAB)], grad_of=(0,))


def test_cross_entropy_class_weights(sanitized):
    weight = torch.rand(VOCAB) + 0.5
    compare(lambda x, t: lf.liger_cross_entropy(x, t, weight=weight.float()),
            lambda x, t: F.cross_entropy(x, t, weight=weight.double()),
            [torch.randn(ROWS, VOCAB), _targets(ROWS, VOCAB)], grad_of=(0,))


def test_fused_linear_cross_entropy_softcap(sanitized):
    compare(lambda x, w, t: lf.liger_fused_linear_cross_entropy(x, w, t, softcap=20.0),
            lambda x, w, t: _ce_reference(x @ w.T, t, softcap=20.0),
            [torch.randn(ROWS, HIDDEN), torch.randn(VOCAB, HIDDEN) / 5, _targets(ROWS, VOCAB)],
            grad_of=(0, 1))


def test_fused_linear_jsd(sanitized):
    temperature = 2.0
    compare(lambda xs, ws, xt, wt: lf.liger_fused_linear_jsd(xs, ws, xt, wt, temperature=temperature),
            lambda xs, ws, xt, wt: _jsd_reference((xs @ ws.T / temperature).log_softmax(-1),
                                                  (xt @ wt.T / temperature).log_softmax(-1)),
            [torch.randn(ROWS, HIDDEN), torch.randn(VOCAB, HIDDEN) / 5, torch.randn(ROWS, HIDDEN),
             torch.randn(VOCAB, HIDDEN) / 5], grad_of=(0, 1))


def test_group_norm_images(sanitized):
    compare(lambda x, w, b: lf.liger_group_norm(x, w, b, 6, 3, 1e-5),
            lambda x, w, b: F.group_norm(x, 3, w, b, 1e-5),
            [torch.randn(2, 6, 4, 5), torch.randn(6), torch.randn(6)], grad_of=(0, 1, 2))


@pytest.mark.parametrize("op,reference", [
    (lf.liger_swiglu, lambda a, b: F.silu(a) * b),
    (lf.liger_geglu, lambda a, b: F.gelu(a, approximate="tanh") * b),
], ids=["swiglu", "geglu"])
def test_gated_activations_in_bf16(sanitized, op, reference):
    # bf16 keeps 8 mantissa bits: each rounding of an input, the activation or the product is worth 2**-8
    compare(op, reference, [torch.randn(ROWS, HIDDEN).bfloat16(), torch.randn(ROWS, HIDDEN).bfloat16()],
            grad_of=(0, 1), rms=1e-2)


def test_layer_norm_bf16(sanitized):
    compare(lambda x, w, b: lf.liger_layer_norm(x, w, b, 1e-5),
            lambda x, w, b: F.layer_norm(x, (HIDDEN,), w, b, 1e-5),
            [t.bfloat16() for t in (torch.randn(ROWS, HIDDEN), torch.randn(HIDDEN), torch.randn(HIDDEN))],
            grad_of=(0, 1, 2), rms=1e-2)
