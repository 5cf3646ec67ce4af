"""Flash attention forward (online softmax), bf16 Q/K/V of layout (B, H, S, D), causal or not."""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from tilescope.bench.registry import CompileSpec, Launcher, register
from tilescope.bench.suite.common import randn, torch


@triton.jit
def attention_fwd_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    sm_scale,
    S,
    H,
    stride_b,
    stride_h,
    stride_s,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HEAD_D: tl.constexpr,
    CAUSAL: tl.constexpr,
):
    """One program per (query block, batch*head): softmax(Q K^T * sm_scale) V without storing scores."""
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    base = (bh // H).to(tl.int64) * stride_b + (bh % H).to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_D)
    q = tl.load(
        q_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], mask=offs_m[:, None] < S, other=0.0
    )
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_D), dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # work in base 2: exp(x) = exp2(x * log2(e))
    hi = S
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, S)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        kt = tl.load(
            k_ptr + base + cols[None, :] * stride_s + offs_d[:, None], mask=cols[None, :] < S, other=0.0
        )
        qk = tl.dot(q, kt) * qk_scale
        valid = cols[None, :] < S
        if CAUSAL:
            valid = valid & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(valid, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp2(qk - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(
            v_ptr + base + cols[:, None] * stride_s + offs_d[None, :], mask=cols[:, None] < S, other=0.0
        )
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(
        o_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :],
        out.to(o_ptr.dtype.element_ty),
        mask=offs_m[:, None] < S,
    )


CONFIG = {"BLOCK_M": 128, "BLOCK_N": 64}
OPTIONS = {"num_warps": 8, "num_stages": 3}


def _specs() -> list[CompileSpec]:
    sig = {
        "q_ptr": "*bf16",
        "k_ptr": "*bf16",
        "v_ptr": "*bf16",
        "o_ptr": "*bf16",
        "sm_scale": "fp32",
        "S": "i32",
        "H": "i32",
        "stride_b": "i32",
        "stride_h": "i32",
        "stride_s": "i32",
        "BLOCK_M": "constexpr",
        "BLOCK_N": "constexpr",
        "HEAD_D": "constexpr",
        "CAUSAL": "constexpr",
    }
    divisible = ("q_ptr", "k_ptr", "v_ptr", "o_ptr", "S", "H", "stride_b", "stride_h", "stride_s")
    return [
        CompileSpec(
            attention_fwd_kernel, sig, {**CONFIG, "HEAD_D": 128, "CAUSAL": causal}, divisible, OPTIONS
        )
        for causal in (False, True)
    ]


def _inputs(shape: dict[str, int], device: str, seed: int) -> dict[str, Any]:
    t = torch()
    dims = (shape["B"], shape["H"], shape["S"], shape["D"])
    return {
        "q": randn(dims, t.bfloat16, device, seed),
        "k": randn(dims, t.bfloat16, device, seed + 1),
        "v": randn(dims, t.bfloat16, device, seed + 2),
        "causal": bool(shape["CAUSAL"]),
        "out": t.empty(dims, device=device, dtype=t.bfloat16),
    }


def _reference(inp: dict[str, Any]) -> Any:
    t = torch()
    q, k, v = (inp[n].float() for n in "qkv")
    # One head batch at a time keeps the float32 score matrix to a few GB.
    outs = [
        t.nn.functional.scaled_dot_product_attention(
            q[b : b + 1], k[b : b + 1], v[b : b + 1], is_causal=inp["causal"]
        )
        for b in range(q.shape[0])
    ]
    return t.cat(outs, 0)


def _baseline(inp: dict[str, Any]) -> Any:
    return torch().nn.functional.scaled_dot_product_attention(
        inp["q"], inp["k"], inp["v"], is_causal=inp["causal"]
    )


def _flops(s: dict[str, int]) -> float:
    full = 4.0 * s["B"] * s["H"] * s["S"] * s["S"] * s["D"]
    return full / 2 if s["CAUSAL"] else full


@register(
    "attention_fwd",
    shapes=[
        {"B": 4, "H": 32, "S": 4096, "D": 128, "CAUSAL": 0},
        {"B": 4, "H": 32, "S": 4096, "D": 128, "CAUSAL": 1},
    ],
    small_shape={"B": 1, "H": 2, "S": 200, "D": 64, "CAUSAL": 1},
    inputs=_inputs,
    reference=_reference,
    baseline=_baseline,
    flops=_flops,
    bytes=lambda s: 2.0 * 4 * s["B"] * s["H"] * s["S"] * s["D"],
    compile_specs=_specs,
    scale_dim="H",
    tolerance=2e-2,
)
def attention_fwd(inp: dict[str, Any], launch: Launcher) -> Any:
    """Flash attention forward pass; returns O of the same layout as Q."""
    q, out = inp["q"], inp["out"]
    B, H, S, D = q.shape
    grid = (triton.cdiv(S, CONFIG["BLOCK_M"]), B * H)
    launch(
        attention_fwd_kernel,
        grid,
        q,
        inp["k"],
        inp["v"],
        out,
        D**-0.5,
        S,
        H,
        q.stride(0),
        q.stride(1),
        q.stride(2),
        **CONFIG,
        HEAD_D=D,
        CAUSAL=inp["causal"],
        **OPTIONS,
    )
    return out
