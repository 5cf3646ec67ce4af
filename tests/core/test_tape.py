"""Replaying Triton's language layer changes nothing: same outputs, same records, same findings.

Each ``tl`` call's builder calls are recorded once per argument types and constants and replayed
after that (``frontends/triton/tape.py``). A paged-attention decode loop (the same calls every
page) must give the same bits, op records and loop events as running the language layer every
time; calls that look alike but differ (``x + x`` and ``x + y``, ``0.0`` and ``-0.0``) must not
be confused.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl
from op_stream import Recorder
from test_op_stream import stream

import tilescope
from tilescope.frontends.triton.tape import Tape
from tilescope.ir import Need


@triton.jit
def paged_decode(q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, out_ptr, scale,
                 D: tl.constexpr, PAGE: tl.constexpr, MAX_PAGES: tl.constexpr):  # fmt: skip
    seq = tl.program_id(0)
    length = tl.load(lens_ptr + seq)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + seq * D + offs_d)
    m_i = -float("inf")
    l_i = 0.0
    acc = tl.zeros([D], dtype=tl.float32)
    for page in range(0, tl.cdiv(length, PAGE)):
        block = tl.load(table_ptr + seq * MAX_PAGES + page)
        offs = page * PAGE + tl.arange(0, PAGE)
        valid = offs < length
        rows = block * PAGE + tl.arange(0, PAGE)
        k = tl.load(k_ptr + rows[:, None] * D + offs_d[None, :], mask=valid[:, None], other=0.0)
        v = tl.load(v_ptr + rows[:, None] * D + offs_d[None, :], mask=valid[:, None], other=0.0)
        s = tl.where(valid, tl.sum(q[None, :] * k, axis=1) * scale, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        p = tl.exp(s - m_new)
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        m_i = m_new
    tl.store(out_ptr + seq * D + offs_d, acc / l_i)


def _paged(rng, seqs=12, d=16, page=8):
    lengths = rng.integers(1, 70, seqs).astype(np.int32)
    pages = -(-lengths // page)
    table = np.full((seqs, int(pages.max())), -1, np.int32)
    order = rng.permutation(int(pages.sum())).astype(np.int32)
    at = 0
    for s in range(seqs):
        table[s, : pages[s]] = order[at : at + pages[s]]
        at += pages[s]
    q = rng.standard_normal((seqs, d)).astype(np.float32)
    kc, vc = (rng.standard_normal((int(pages.sum()) * page, d)).astype(np.float32) for _ in range(2))
    ref = np.empty((seqs, d))
    for s in range(seqs):
        rows = (table[s, : pages[s], None] * page + np.arange(page)).reshape(-1)[: lengths[s]]
        scores = kc[rows].astype(np.float64) @ q[s] / np.sqrt(d)
        p = np.exp(scores - scores.max())
        ref[s] = p @ vc[rows] / p.sum()
    args = [torch.from_numpy(a) for a in (q, kc, vc, table, lengths)]
    return args, ref, dict(D=d, PAGE=page, MAX_PAGES=int(pages.max()))


def _run(args, meta):
    recorder = Recorder((Need.VALUES,))
    out = torch.zeros(args[0].shape)
    tilescope.trace(paged_decode, clients=[recorder])[(args[0].shape[0],)](
        *args, out, 1.0 / np.sqrt(meta["D"]), **meta
    )
    events = sorted((e.kind.value, e.iteration, e.program_ids.tolist()) for e in recorder.loops)
    return out, stream(recorder, values=True), events


def test_replayed_language_layer_changes_nothing(monkeypatch):
    args, ref, meta = _paged(np.random.default_rng(2))
    replayed = _run(args, meta)
    np.testing.assert_allclose(replayed[0].numpy(), ref, rtol=1e-5, atol=1e-6)

    def direct_call(self, member, a, k, semantic):
        return member(*a, **k, _semantic=semantic)

    monkeypatch.setattr(Tape, "call", direct_call)
    direct = _run(args, meta)
    assert torch.equal(replayed[0], direct[0])
    assert replayed[1] == direct[1] and replayed[2] == direct[2]


@triton.jit
def look_alike(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for i in range(3):
        x = tl.load(x_ptr + i * BLOCK + offs)
        y = tl.load(y_ptr + i * BLOCK + offs)
        tl.store(out_ptr + (4 * i) * BLOCK + offs, x + x)
        tl.store(out_ptr + (4 * i + 1) * BLOCK + offs, x + y)
        tl.store(out_ptr + (4 * i + 2) * BLOCK + offs, x * 0.0)
        tl.store(out_ptr + (4 * i + 3) * BLOCK + offs, x * -0.0)


def test_calls_that_look_alike_are_not_confused():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 16)).astype(np.float32)
    y = rng.standard_normal((3, 16)).astype(np.float32)
    out = torch.zeros(12 * 16)
    tilescope.trace(look_alike)[(1,)](torch.from_numpy(x), torch.from_numpy(y), out, BLOCK=16)
    got = out.numpy().reshape(3, 4, 16)
    np.testing.assert_array_equal(got[:, 0], x + x)
    np.testing.assert_array_equal(got[:, 1], x + y)
    np.testing.assert_array_equal(np.signbit(got[:, 2]), np.signbit(x * np.float32(0.0)))
    np.testing.assert_array_equal(np.signbit(got[:, 3]), np.signbit(x * np.float32(-0.0)))


@triton.jit
def square_dot(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    rows = tl.arange(0, N)
    a = tl.load(a_ptr + rows[:, None] * N + rows[None, :])
    b = tl.load(b_ptr + rows[:, None] * N + rows[None, :])
    tl.store(c_ptr + rows[:, None] * N + rows[None, :], tl.dot(a, b))  # precision: TRITON_F32_DEFAULT


def test_a_dot_recorded_as_tf32_does_not_replay_under_another_fp32_default(monkeypatch):
    """``tl.dot``'s default input precision comes from ``TRITON_F32_DEFAULT`` when it is called: a
    plan recorded under one setting must not replay under another in the same process."""
    rng = np.random.default_rng(6)
    a, b = (torch.from_numpy(rng.standard_normal((32, 32)).astype(np.float32)) for _ in range(2))
    want = a.double() @ b.double()

    def error():
        c = torch.empty(32, 32)
        tilescope.trace(square_dot)[(1,)](a, b, c, N=32)
        return (c.double() - want).abs().max().item()

    monkeypatch.delenv("TRITON_F32_DEFAULT", raising=False)
    assert error() > 1e-3  # tf32: 10 bits of mantissa
    monkeypatch.setenv("TRITON_F32_DEFAULT", "ieee")
    assert error() < 1e-4
