"""Data movement inside tiles and through memory: RoPE with split/join, interleave, transposes and
permutes, broadcasting, and the embedding gather (indirect loads)."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ..case import Case, poison, register
from ._common import f64, normal, rnd


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, seq_len, HALF: tl.constexpr, BLOCK_S: tl.constexpr):
    """Rotary embedding on interleaved pairs (x[2i], x[2i+1]): reshape + split, rotate, join back."""
    pid = tl.program_id(0)
    rows = pid * BLOCK_S + tl.arange(0, BLOCK_S)
    cols = tl.arange(0, 2 * HALF)
    mask = rows[:, None] < seq_len
    x = tl.load(x_ptr + rows[:, None] * (2 * HALF) + cols[None, :], mask=mask, other=0.0)
    x_even, x_odd = tl.split(tl.reshape(x, (BLOCK_S, HALF, 2)))
    half = tl.arange(0, HALF)
    c = tl.load(cos_ptr + rows[:, None] * HALF + half[None, :], mask=mask, other=0.0)
    s = tl.load(sin_ptr + rows[:, None] * HALF + half[None, :], mask=mask, other=0.0)
    out_even = x_even * c - x_odd * s
    out_odd = x_even * s + x_odd * c
    out = tl.reshape(tl.join(out_even, out_odd), (BLOCK_S, 2 * HALF))
    tl.store(out_ptr + rows[:, None] * (2 * HALF) + cols[None, :], out, mask=mask)


def _rope_inputs(rng):
    seq, half = 45, 16
    theta = rng.uniform(0, 2 * np.pi, (seq, half))
    return {
        "x": normal(rng, (seq, 2 * half)),
        "cos": np.cos(theta).astype(np.float32),
        "sin": np.sin(theta).astype(np.float32),
        "out": poison((seq, 2 * half), np.float32),
        "seq": seq,
    }


def _rope_reference(i):
    x = f64(i["x"])
    xe, xo = x[:, 0::2], x[:, 1::2]
    c, s = f64(i["cos"]), f64(i["sin"])
    out = np.empty_like(x)
    out[:, 0::2] = xe * c - xo * s
    out[:, 1::2] = xe * s + xo * c
    return {"out": out}


register(
    Case(
        name="rope_split_join",
        make_inputs=_rope_inputs,
        launch=lambda wrap, t: wrap(rope_kernel)[(triton.cdiv(t["seq"], 16),)](
            t["x"], t["cos"], t["sin"], t["out"], t["seq"], HALF=16, BLOCK_S=16
        ),
        reference=_rope_reference,
        outputs=("out",),
        # Two fp32 products and a sum (maybe an fma): an ulp or two of |x| <~ 4.
        tolerance={"out": (1e-6, 1e-6)},
    )
)


@triton.jit
def interleave_kernel(re_ptr, im_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Packs separate real / imaginary planes into interleaved complex64 storage."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    re = tl.load(re_ptr + offs, mask=mask, other=0.0)
    im = tl.load(im_ptr + offs, mask=mask, other=0.0)
    out_offs = tl.program_id(0) * 2 * BLOCK + tl.arange(0, 2 * BLOCK)
    tl.store(out_ptr + out_offs, tl.interleave(re, im), mask=out_offs < 2 * n)


def _interleave_reference(i):
    out = np.empty(2 * i["n"])
    out[0::2], out[1::2] = f64(i["re"]), f64(i["im"])
    return {"out": out}


register(
    Case(
        name="interleave_complex",
        make_inputs=lambda rng: {
            "re": normal(rng, 300),
            "im": normal(rng, 300),
            "out": poison(600, np.float32),
            "n": 300,
        },
        launch=lambda wrap, t: wrap(interleave_kernel)[(triton.cdiv(t["n"], 128),)](
            t["re"], t["im"], t["out"], t["n"], BLOCK=128
        ),
        reference=_interleave_reference,
        outputs=("out",),
        tolerance={"out": (0.0, 0.0)},
        tags=frozenset({"exact"}),
    )
)


@triton.jit
def layout_kernel(
    x_ptr, v_ptr, t_ptr, p_ptr, outer_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    """One program per tile: transpose (tl.trans and .T), a 3-D permute, and an outer product
    through expand_dims and broadcast_to."""
    pid = tl.program_id(0)
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + pid * BM * BN + rm[:, None] * BN + rn[None, :])
    xt = (tl.trans(x) + x.T) * 0.5  # both spellings; equal halves add back exactly
    tl.store(t_ptr + pid * BM * BN + rn[:, None] * BM + rm[None, :], xt)
    # (BM, BN) -> (2, BM // 2, BN) -> permute to (BN, 2, BM // 2)
    x3 = tl.reshape(x, (2, BM // 2, BN))
    xp = tl.permute(x3, (2, 0, 1))
    flat = tl.reshape(xp, (BN * BM,))
    tl.store(p_ptr + pid * BM * BN + tl.arange(0, BM * BN), flat)
    v = tl.load(v_ptr + pid * BK + tl.arange(0, BK))
    col = tl.expand_dims(v, 1)  # (BK, 1)
    row = tl.expand_dims(v, 0)  # (1, BK)
    outer = tl.broadcast_to(col, (BK, BK)) * tl.broadcast_to(row, (BK, BK))
    rk = tl.arange(0, BK)
    tl.store(outer_ptr + pid * BK * BK + rk[:, None] * BK + rk[None, :], outer)


def _layout_inputs(rng):
    p, bm, bn, bk = 3, 16, 8, 16
    return {
        "x": normal(rng, (p, bm, bn)),
        "v": normal(rng, (p, bk)),
        "t": poison((p, bn, bm), np.float32),
        "perm": poison((p, bn, 2, bm // 2), np.float32),
        "outer": poison((p, bk, bk), np.float32),
    }


def _layout_reference(i):
    x, v = f64(i["x"]), f64(i["v"])
    p, bm, bn = x.shape
    return {
        "t": np.swapaxes(x, 1, 2),
        "perm": x.reshape(p, 2, bm // 2, bn).transpose(0, 3, 1, 2),
        "outer": rnd(v[:, :, None] * v[:, None, :], np.float32),
    }


register(
    Case(
        name="trans_permute_broadcast",
        make_inputs=_layout_inputs,
        launch=lambda wrap, t: wrap(layout_kernel)[(3,)](
            t["x"], t["v"], t["t"], t["perm"], t["outer"], BM=16, BN=8, BK=16
        ),
        reference=_layout_reference,
        outputs=("t", "perm", "outer"),
        # Pure data movement and one correctly rounded product: bit-exact.
        tolerance={"t": (0.0, 0.0), "perm": (0.0, 0.0), "outer": (0.0, 0.0)},
        tags=frozenset({"exact"}),
    )
)


@triton.jit
def embedding_kernel(
    ids_ptr,
    weight_ptr,
    out_ptr,
    n_tokens,
    vocab,
    dim,
    padding_idx,
    BLOCK_T: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    """Embedding lookup: token ids (int64) index rows of the table; padding tokens give zeros."""
    pid_t = tl.program_id(0)
    pid_d = tl.program_id(1)
    toks = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    tmask = toks < n_tokens
    ids = tl.load(ids_ptr + toks, mask=tmask, other=padding_idx)
    keep = (ids != padding_idx) & (ids >= 0) & (ids < vocab)
    mask = tmask[:, None] & (cols[None, :] < dim)
    rows = tl.load(weight_ptr + ids[:, None] * dim + cols[None, :], mask=mask & keep[:, None], other=0.0)
    tl.store(out_ptr + toks[:, None] * dim + cols[None, :], rows, mask=mask)


def _emb_inputs(rng):
    n, vocab, dim = 100, 500, 48
    ids = rng.integers(0, vocab, n).astype(np.int64)
    ids[rng.random(n) < 0.1] = 0  # padding tokens
    return {
        "ids": ids,
        "weight": normal(rng, (vocab, dim), "bfloat16"),
        "out": poison((n, dim), "bfloat16"),
        "n": n,
        "vocab": vocab,
        "dim": dim,
    }


register(
    Case(
        name="embedding_gather",
        make_inputs=_emb_inputs,
        launch=lambda wrap, t: wrap(embedding_kernel)[(triton.cdiv(t["n"], 16), triton.cdiv(t["dim"], 32))](
            t["ids"], t["weight"], t["out"], t["n"], t["vocab"], t["dim"], 0, BLOCK_T=16, BLOCK_D=32
        ),
        reference=lambda i: {"out": np.where((i["ids"] == 0)[:, None], 0.0, f64(i["weight"])[i["ids"]])},
        outputs=("out",),
        tolerance={"out": (0.0, 0.0)},  # bf16 rows copied, never converted
        tags=frozenset({"exact", "bf16"}),
    )
)
