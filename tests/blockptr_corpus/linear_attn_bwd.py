"""Chunked causal linear attention, backward: dq on a forward sweep, dk/dv on a reverse sweep.

With o_t = scale * sum_{s <= t} (q_t . k_s) v_s:
dq_t = scale * sum_{s <= t} (do_t . v_s) k_s,  dk_s = scale * sum_{t >= s} (do_t . v_s) q_t,
dv_s = scale * sum_{t >= s} (q_t . k_s) do_t.
"""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def chunk_linear_attn_bwd_kernel(
    q, k, v, do, dq, dk, dv, scale, T, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr
):
    i_bh = tl.program_id(0)
    NT = tl.cdiv(T, BT)
    o_i = tl.arange(0, BT)
    m_lower = o_i[:, None] >= o_i[None, :]
    m_upper = o_i[:, None] <= o_i[None, :]

    # forward sweep: dq, with state h = sum_s v_s^T k_s  [V, K]
    b_h = tl.zeros([V, K], dtype=tl.float32)
    p_k = tl.make_block_ptr(k + i_bh * T * K, (T, K), (K, 1), (0, 0), (BT, K), (1, 0))
    p_v = tl.make_block_ptr(v + i_bh * T * V, (V, T), (1, V), (0, 0), (V, BT), (0, 1))
    p_do = tl.make_block_ptr(do + i_bh * T * V, (T, V), (V, 1), (0, 0), (BT, V), (1, 0))
    p_dq = tl.make_block_ptr(dq + i_bh * T * K, (T, K), (K, 1), (0, 0), (BT, K), (1, 0))
    for _ in range(0, NT):
        b_k = tl.load(p_k, boundary_check=(0, 1))
        b_vt = tl.load(p_v, boundary_check=(0, 1))
        b_do = tl.load(p_do, boundary_check=(0, 1))
        b_ds = tl.where(m_lower, tl.dot(b_do, b_vt), 0)
        b_dq = tl.dot(b_do, b_h.to(b_do.dtype)) + tl.dot(b_ds.to(b_k.dtype), b_k)
        tl.store(p_dq, (b_dq * scale).to(p_dq.dtype.element_ty), boundary_check=(0, 1))
        b_h += tl.dot(b_vt, b_k)
        p_k = tl.advance(p_k, (BT, 0))
        p_v = tl.advance(p_v, (0, BT))
        p_do = tl.advance(p_do, (BT, 0))
        p_dq = tl.advance(p_dq, (BT, 0))

    # reverse sweep: dk, dv, with state dh = sum_t q_t^T do_t  [K, V]
    b_dh = tl.zeros([K, V], dtype=tl.float32)
    last = (NT - 1) * BT
    p_q = tl.make_block_ptr(q + i_bh * T * K, (T, K), (K, 1), (last, 0), (BT, K), (1, 0))
    p_k = tl.make_block_ptr(k + i_bh * T * K, (T, K), (K, 1), (last, 0), (BT, K), (1, 0))
    p_v = tl.make_block_ptr(v + i_bh * T * V, (T, V), (V, 1), (last, 0), (BT, V), (1, 0))
    p_do = tl.make_block_ptr(do + i_bh * T * V, (T, V), (V, 1), (last, 0), (BT, V), (1, 0))
    p_dk = tl.make_block_ptr(dk + i_bh * T * K, (T, K), (K, 1), (last, 0), (BT, K), (1, 0))
    p_dv = tl.make_block_ptr(dv + i_bh * T * V, (T, V), (V, 1), (last, 0), (BT, V), (1, 0))
    for _ in range(0, NT):
        b_q = tl.load(p_q, boundary_check=(0, 1))
        b_k = tl.load(p_k, boundary_check=(0, 1))
        b_v = tl.load(p_v, boundary_check=(0, 1))
        b_do = tl.load(p_do, boundary_check=(0, 1))
        b_a = tl.where(m_upper, tl.dot(b_v, tl.trans(b_do)), 0)  # [s, t] = v_s . do_t
        b_b = tl.where(m_upper, tl.dot(b_k, tl.trans(b_q)), 0)  # [s, t] = k_s . q_t
        b_dk = tl.dot(b_a.to(b_q.dtype), b_q) + tl.dot(b_v, tl.trans(b_dh.to(b_v.dtype)))
        b_dv = tl.dot(b_b.to(b_do.dtype), b_do) + tl.dot(b_k, b_dh.to(b_k.dtype))
        tl.store(p_dk, (b_dk * scale).to(p_dk.dtype.element_ty), boundary_check=(0, 1))
        tl.store(p_dv, (b_dv * scale).to(p_dv.dtype.element_ty), boundary_check=(0, 1))
        b_dh += tl.dot(tl.trans(b_q), b_do)
        p_q = tl.advance(p_q, (-BT, 0))
        p_k = tl.advance(p_k, (-BT, 0))
        p_v = tl.advance(p_v, (-BT, 0))
        p_do = tl.advance(p_do, (-BT, 0))
        p_dk = tl.advance(p_dk, (-BT, 0))
        p_dv = tl.advance(p_dv, (-BT, 0))


def cases():
    return [dict(BH=2, T=64, D=16), dict(BH=2, T=45, D=32), dict(BH=1, T=20, D=16)]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(BH=64, T=2048, D=64)


def make_inputs(rng, BH, T, D):
    names = ("q", "k", "v", "do", "dq", "dk", "dv")
    return {name: (rng.standard_normal((BH, T, D)) * 0.5).astype(np.float16) for name in names}


def launch(kernels, t, BH, T, D):
    kernels.chunk_linear_attn_bwd_kernel[(BH,)](
        t["q"], t["k"], t["v"], t["do"], t["dq"], t["dk"], t["dv"], D**-0.5, T, K=D, V=D, BT=16
    )


def reference(x, BH, T, D):
    mask = np.tril(np.ones((T, T)))
    scale = D**-0.5
    a = np.einsum("btv,bsv->bts", x["do"], x["v"]) * mask  # [t, s] = do_t . v_s, s <= t
    b = np.einsum("btk,bsk->bts", x["q"], x["k"]) * mask  # [t, s] = q_t . k_s
    return {
        "dq": np.einsum("bts,bsk->btk", a, x["k"]) * scale,
        "dk": np.einsum("bts,btk->bsk", a, x["q"]) * scale,
        "dv": np.einsum("bts,btv->bsv", b, x["do"]) * scale,
    }
