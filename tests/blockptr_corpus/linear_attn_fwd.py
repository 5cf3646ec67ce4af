"""Chunked causal linear attention, forward (in the style of flash-linear-attention's chunk kernels).

o_t = scale * sum_{s <= t} (q_t . k_s) v_s, computed chunk by chunk with a running state h = sum k_s^T v_s.
"""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def chunk_linear_attn_fwd_kernel(q, k, v, o, scale, T, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr):
    i_bh = tl.program_id(0)
    b_h = tl.zeros([K, V], dtype=tl.float32)
    # q, v and o are row-major [T, K] / [T, V]; k is read transposed ([K, T], column-major)
    p_q = tl.make_block_ptr(q + i_bh * T * K, (T, K), (K, 1), (0, 0), (BT, K), (1, 0))
    p_k = tl.make_block_ptr(k + i_bh * T * K, (K, T), (1, K), (0, 0), (K, BT), (0, 1))
    p_v = tl.make_block_ptr(v + i_bh * T * V, (T, V), (V, 1), (0, 0), (BT, V), (1, 0))
    o_i = tl.arange(0, BT)
    m_s = o_i[:, None] >= o_i[None, :]
    for i_t in range(0, tl.cdiv(T, BT)):
        b_q = tl.load(p_q, boundary_check=(0, 1))
        b_k = tl.load(p_k, boundary_check=(0, 1))
        b_v = tl.load(p_v, boundary_check=(0, 1))
        b_s = tl.dot(b_q, b_k)
        b_s = tl.where(m_s, b_s, 0)
        b_o = tl.dot(b_q, b_h.to(b_q.dtype)) + tl.dot(b_s.to(b_q.dtype), b_v)
        p_o = tl.make_block_ptr(o + i_bh * T * V, (T, V), (V, 1), (i_t * BT, 0), (BT, V), (1, 0))
        tl.store(p_o, (b_o * scale).to(p_o.dtype.element_ty), boundary_check=(0, 1))
        b_h += tl.dot(b_k, b_v)
        p_q = tl.advance(p_q, (BT, 0))
        p_k = tl.advance(p_k, (0, BT))
        p_v = tl.advance(p_v, (BT, 0))


def cases():
    return [dict(BH=2, T=64, D=16), dict(BH=3, T=50, D=32), dict(BH=1, T=17, D=16)]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(BH=64, T=2048, D=64)


def make_inputs(rng, BH, T, D):
    return {name: (rng.standard_normal((BH, T, D)) * 0.5).astype(np.float16) for name in ("q", "k", "v", "o")}


def launch(kernels, t, BH, T, D):
    kernels.chunk_linear_attn_fwd_kernel[(BH,)](t["q"], t["k"], t["v"], t["o"], D**-0.5, T, K=D, V=D, BT=16)


def reference(x, BH, T, D):
    s = np.einsum("btk,bsk->bts", x["q"], x["k"]) * np.tril(np.ones((T, T)))
    return {"o": np.einsum("bts,bsv->btv", s, x["v"]) * D**-0.5}
