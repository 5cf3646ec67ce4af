"""Mixture-of-experts kernels: top-k routing and the grouped GEMM over the experts' tokens."""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from tilescope.bench.registry import CompileSpec, Launcher, register
from tilescope.bench.suite.common import next_pow2, randn, torch


@triton.jit
def topk_routing_kernel(
    logits_ptr,
    weights_ptr,
    idx_ptr,
    T,
    E,
    stride_t,
    TOPK: tl.constexpr,
    BLOCK_T: tl.constexpr,
    BLOCK_E: tl.constexpr,
):
    """Per token: the TOPK largest logits' expert ids and their softmax weights (renormalised over TOPK)."""
    rows = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, BLOCK_E)
    row_ok = rows < T
    mask = row_ok[:, None] & (cols[None, :] < E)
    x = tl.load(logits_ptr + rows[:, None] * stride_t + cols[None, :], mask=mask, other=float("-inf"))
    top = tl.max(x, 1)
    # First pass: the softmax denominator over the chosen experts only.
    rest = x
    total = tl.zeros((BLOCK_T,), dtype=tl.float32)
    for _ in tl.static_range(TOPK):
        best = tl.max(rest, 1)
        total += tl.exp(best - top)
        j = tl.min(tl.where(rest == best[:, None], cols[None, :], BLOCK_E), 1)
        rest = tl.where(cols[None, :] == j[:, None], float("-inf"), rest)
    # Second pass: the same choices in the same order, written out with their weights.
    rest = x
    for i in tl.static_range(TOPK):
        best = tl.max(rest, 1)
        j = tl.min(tl.where(rest == best[:, None], cols[None, :], BLOCK_E), 1)
        tl.store(weights_ptr + rows * TOPK + i, tl.exp(best - top) / total, mask=row_ok)
        tl.store(idx_ptr + rows * TOPK + i, j, mask=row_ok)
        rest = tl.where(cols[None, :] == j[:, None], float("-inf"), rest)


ROUTING_BLOCK_T = 32


def _routing_config(E: int, topk: int) -> dict[str, int]:
    return {"TOPK": topk, "BLOCK_T": ROUTING_BLOCK_T, "BLOCK_E": next_pow2(E)}


def _routing_specs() -> list[CompileSpec]:
    sig = {
        "logits_ptr": "*fp32",
        "weights_ptr": "*fp32",
        "idx_ptr": "*i32",
        "T": "i32",
        "E": "i32",
        "stride_t": "i32",
        "TOPK": "constexpr",
        "BLOCK_T": "constexpr",
        "BLOCK_E": "constexpr",
    }
    divisible = ("logits_ptr", "weights_ptr", "idx_ptr", "T", "E", "stride_t")
    return [CompileSpec(topk_routing_kernel, sig, _routing_config(128, 8), divisible, {"num_warps": 4})]


def _routing_inputs(shape: dict[str, int], device: str, seed: int) -> dict[str, Any]:
    t = torch()
    T, E, k = shape["T"], shape["E"], shape["TOPK"]
    return {
        "logits": randn((T, E), t.float32, device, seed),
        "out_weights": t.empty((T, k), device=device, dtype=t.float32),
        "out_idx": t.empty((T, k), device=device, dtype=t.int32),
    }


def _routing_reference(inp: dict[str, Any]) -> Any:
    t = torch()
    k = inp["out_idx"].shape[1]
    vals, idx = t.topk(inp["logits"].double(), k, dim=1)
    return t.softmax(vals, dim=1), idx.int()


def _routing_baseline(inp: dict[str, Any]) -> Any:
    t = torch()
    vals, idx = t.topk(inp["logits"], inp["out_idx"].shape[1], dim=1)
    return t.softmax(vals, dim=1), idx


@register(
    "topk_routing",
    shapes=[{"T": 131072, "E": 128, "TOPK": 8}],
    small_shape={"T": 70, "E": 40, "TOPK": 4},
    inputs=_routing_inputs,
    reference=_routing_reference,
    baseline=_routing_baseline,
    flops=lambda s: 3.0 * s["T"] * s["E"] * s["TOPK"],
    bytes=lambda s: 4.0 * s["T"] * s["E"] + 8.0 * s["T"] * s["TOPK"],
    compile_specs=_routing_specs,
    scale_dim="T",
    tolerance=1e-5,
)
def topk_routing(inp: dict[str, Any], launch: Launcher) -> Any:
    """Top-k expert choice per token: returns (weights, expert ids), both (T, TOPK)."""
    logits, w, idx = inp["logits"], inp["out_weights"], inp["out_idx"]
    T, E = logits.shape
    cfg = _routing_config(E, idx.shape[1])
    launch(
        topk_routing_kernel,
        (triton.cdiv(T, ROUTING_BLOCK_T),),
        logits,
        w,
        idx,
        T,
        E,
        logits.stride(0),
        **cfg,
        num_warps=4,
    )
    return w, idx


@triton.jit
def grouped_gemm_kernel(
    x_ptr,
    w_ptr,
    out_ptr,
    tile_expert_ptr,
    tile_row_ptr,
    offsets_ptr,
    N,
    K,
    stride_xm,
    stride_we,
    stride_wk,
    stride_om,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """out[rows of expert e] = x[rows of e] @ w[e]; one program per (row tile of one expert, column tile)."""
    tile = tl.program_id(0)
    pid_n = tl.program_id(1)
    e = tl.load(tile_expert_ptr + tile)
    row0 = tl.load(tile_row_ptr + tile)
    row_end = tl.load(offsets_ptr + e + 1)
    offs_m = row0 + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < row_end
    mask_n = offs_n < N
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + e.to(tl.int64) * stride_we + offs_k[:, None] * stride_wk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_ok = offs_k < K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=mask_m[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(w_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * stride_wk
    o_ptrs = out_ptr + offs_m[:, None].to(tl.int64) * stride_om + offs_n[None, :]
    tl.store(o_ptrs, acc.to(out_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


GEMM_CONFIG = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}
GEMM_OPTIONS = {"num_warps": 8, "num_stages": 3}


def _gemm_specs() -> list[CompileSpec]:
    sig = {
        "x_ptr": "*bf16",
        "w_ptr": "*bf16",
        "out_ptr": "*bf16",
        "tile_expert_ptr": "*i32",
        "tile_row_ptr": "*i32",
        "offsets_ptr": "*i32",
        "N": "i32",
        "K": "i32",
        "stride_xm": "i32",
        "stride_we": "i32",
        "stride_wk": "i32",
        "stride_om": "i32",
        **{k: "constexpr" for k in GEMM_CONFIG},
    }
    divisible = (
        "x_ptr",
        "w_ptr",
        "out_ptr",
        "tile_expert_ptr",
        "tile_row_ptr",
        "offsets_ptr",
        "N",
        "K",
        "stride_xm",
        "stride_we",
        "stride_wk",
        "stride_om",
    )
    return [CompileSpec(grouped_gemm_kernel, sig, GEMM_CONFIG, divisible, GEMM_OPTIONS)]


def _gemm_inputs(shape: dict[str, int], device: str, seed: int) -> dict[str, Any]:
    t = torch()
    T, E, K, N = shape["T"], shape["E"], shape["K"], shape["N"]
    gen = t.Generator(device="cpu").manual_seed(seed)
    # Uneven expert loads, as a learned router gives: counts drawn from a multinomial over skewed weights.
    probs = t.rand(E, generator=gen) + 0.25
    counts = t.bincount(t.multinomial(probs, T, replacement=True, generator=gen), minlength=E)
    offsets = t.zeros(E + 1, dtype=t.int32)
    offsets[1:] = t.cumsum(counts, 0)
    bm = GEMM_CONFIG["BLOCK_M"]
    tile_expert = [e for e in range(E) for _ in range(triton.cdiv(int(counts[e]), bm))]
    tile_row = [int(offsets[e]) + j * bm for e in range(E) for j in range(triton.cdiv(int(counts[e]), bm))]
    return {
        "x": randn((T, K), t.bfloat16, device, seed + 1, scale=0.5),
        "w": randn((E, K, N), t.bfloat16, device, seed + 2, scale=0.05),
        "offsets": offsets.to(device),
        "offsets_host": offsets.tolist(),
        "tile_expert": t.tensor(tile_expert, dtype=t.int32, device=device),
        "tile_row": t.tensor(tile_row, dtype=t.int32, device=device),
        "out": t.empty((T, N), device=device, dtype=t.bfloat16),
    }


def _per_expert(inp: dict[str, Any], dtype: Any) -> Any:
    t = torch()
    offs = inp["offsets_host"]
    parts = [inp["x"][offs[e] : offs[e + 1]].to(dtype) @ inp["w"][e].to(dtype) for e in range(len(offs) - 1)]
    return t.cat(parts, 0)


def _gemm_baseline(inp: dict[str, Any]) -> Any:
    # torch has no stable grouped GEMM: what models do without one is a loop of per-expert products.
    return _per_expert(inp, inp["x"].dtype)


@register(
    "grouped_gemm_moe",
    shapes=[{"T": 16384, "E": 16, "K": 5120, "N": 4096}],
    small_shape={"T": 300, "E": 4, "K": 160, "N": 200},
    inputs=_gemm_inputs,
    reference=lambda i: _per_expert(i, torch().float64),
    baseline=_gemm_baseline,
    flops=lambda s: 2.0 * s["T"] * s["K"] * s["N"],
    bytes=lambda s: 2.0 * (s["T"] * s["K"] + s["E"] * s["K"] * s["N"] + s["T"] * s["N"]),
    compile_specs=_gemm_specs,
    scale_dim="T",
    tolerance=1e-2,
)
def grouped_gemm_moe(inp: dict[str, Any], launch: Launcher) -> Any:
    """Grouped GEMM: tokens sorted by expert, each expert's rows times that expert's (K, N) weight."""
    x, w, out = inp["x"], inp["w"], inp["out"]
    N, K = out.shape[1], x.shape[1]
    grid = (inp["tile_expert"].shape[0], triton.cdiv(N, GEMM_CONFIG["BLOCK_N"]))
    launch(
        grouped_gemm_kernel,
        grid,
        x,
        w,
        out,
        inp["tile_expert"],
        inp["tile_row"],
        inp["offsets"],
        N,
        K,
        x.stride(0),
        w.stride(0),
        w.stride(1),
        out.stride(0),
        **GEMM_CONFIG,
        **GEMM_OPTIONS,
    )
    return out
