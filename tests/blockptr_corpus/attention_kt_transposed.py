"""Attention forward with online softmax; K is read through a transposed block pointer (order=(0, 1))."""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def attn_fwd_kernel(
    Q,
    K,
    V,
    Out,
    sm_scale,
    N_CTX,
    stride_qz,
    stride_qm,
    stride_kz,
    stride_kn,
    stride_vz,
    stride_vn,
    stride_oz,
    stride_om,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_z = tl.program_id(1)
    Q_block_ptr = tl.make_block_ptr(
        base=Q + off_z * stride_qz,
        shape=(N_CTX, HEAD_DIM),
        strides=(stride_qm, 1),
        offsets=(start_m * BLOCK_M, 0),
        block_shape=(BLOCK_M, HEAD_DIM),
        order=(1, 0),
    )
    K_block_ptr = tl.make_block_ptr(
        base=K + off_z * stride_kz,
        shape=(HEAD_DIM, N_CTX),
        strides=(1, stride_kn),
        offsets=(0, 0),
        block_shape=(HEAD_DIM, BLOCK_N),
        order=(0, 1),
    )
    V_block_ptr = tl.make_block_ptr(
        base=V + off_z * stride_vz,
        shape=(N_CTX, HEAD_DIM),
        strides=(stride_vn, 1),
        offsets=(0, 0),
        block_shape=(BLOCK_N, HEAD_DIM),
        order=(1, 0),
    )
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    q = tl.load(Q_block_ptr, boundary_check=(0,))
    offs_n = tl.arange(0, BLOCK_N)
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K_block_ptr, boundary_check=(1,))
        qk = tl.dot(q, k) * sm_scale
        qk = tl.where((start_n + offs_n)[None, :] < N_CTX, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_ij[:, None])
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V_block_ptr, boundary_check=(0,))
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_ij
        V_block_ptr = tl.advance(V_block_ptr, (BLOCK_N, 0))
        K_block_ptr = tl.advance(K_block_ptr, (0, BLOCK_N))
    acc = acc / l_i[:, None]
    O_block_ptr = tl.make_block_ptr(
        base=Out + off_z * stride_oz,
        shape=(N_CTX, HEAD_DIM),
        strides=(stride_om, 1),
        offsets=(start_m * BLOCK_M, 0),
        block_shape=(BLOCK_M, HEAD_DIM),
        order=(1, 0),
    )
    tl.store(O_block_ptr, acc.to(Out.type.element_ty), boundary_check=(0,))


def cases():
    return [dict(Z=2, N=64, D=16), dict(Z=1, N=45, D=32), dict(Z=3, N=20, D=16)]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(Z=32, N=2048, D=64)


def make_inputs(rng, Z, N, D):
    return {name: rng.standard_normal((Z, N, D)).astype(np.float16) for name in ("q", "k", "v", "o")}


def launch(kernels, t, Z, N, D):
    q, k, v, o = t["q"], t["k"], t["v"], t["o"]
    grid = (triton.cdiv(N, 16), Z)
    kernels.attn_fwd_kernel[grid](
        q,
        k,
        v,
        o,
        D**-0.5,
        N,
        q.stride(0),
        q.stride(1),
        k.stride(0),
        k.stride(1),
        v.stride(0),
        v.stride(1),
        o.stride(0),
        o.stride(1),
        HEAD_DIM=D,
        BLOCK_M=16,
        BLOCK_N=16,
    )


def reference(x, Z, N, D):
    s = np.einsum("zmd,znd->zmn", x["q"], x["k"]) * D**-0.5
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return {"o": np.einsum("zmn,znd->zmd", p / p.sum(axis=-1, keepdims=True), x["v"])}
