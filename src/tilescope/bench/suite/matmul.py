"""Dense matrix products: bf16 (B row-major) and fp8 e4m3 with per-tensor scales (B stored N x K)."""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from tilescope.bench.registry import CompileSpec, Launcher, register
from tilescope.bench.suite.common import randn, torch


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    scale_a_ptr,
    scale_b_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    APPLY_SCALE: tl.constexpr,
):
    """C = (A @ B) [* scale_a * scale_b], fp32 accumulation, tiles visited in L2-friendly groups."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    if APPLY_SCALE:
        acc = acc * tl.load(scale_a_ptr) * tl.load(scale_b_ptr)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


BF16_CONFIG = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "APPLY_SCALE": False}
FP8_CONFIG = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128, "GROUP_M": 8, "APPLY_SCALE": True}
OPTIONS = {"num_warps": 8, "num_stages": 3}
_INTS = ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")


def _spec(in_type: str, config: dict[str, Any]) -> CompileSpec:
    sig = {
        "a_ptr": in_type,
        "b_ptr": in_type,
        "c_ptr": "*bf16",
        "scale_a_ptr": "*fp32",
        "scale_b_ptr": "*fp32",
        **{n: "i32" for n in _INTS},
    }
    sig.update({k: "constexpr" for k in config})
    divisible = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_bn", "stride_cm")
    return CompileSpec(matmul_kernel, sig, config, divisible, OPTIONS)


def _launch(inp: dict[str, Any], launch: Launcher, b_strides: tuple[int, int], config: dict[str, Any]) -> Any:
    a, b, c = inp["a"], inp["b"], inp["out"]
    M, K = a.shape
    N = c.shape[1]
    grid = (triton.cdiv(M, config["BLOCK_M"]) * triton.cdiv(N, config["BLOCK_N"]),)
    launch(
        matmul_kernel,
        grid,
        a,
        b,
        c,
        inp["scale_a"],
        inp["scale_b"],
        M,
        N,
        K,
        a.stride(0),
        a.stride(1),
        b_strides[0],
        b_strides[1],
        c.stride(0),
        c.stride(1),
        **config,
        **OPTIONS,
    )
    return c


def _bf16_inputs(shape: dict[str, int], device: str, seed: int) -> dict[str, Any]:
    t = torch()
    M, N, K = shape["M"], shape["N"], shape["K"]
    one = t.ones((), device=device, dtype=t.float32)
    return {
        "a": randn((M, K), t.bfloat16, device, seed),
        "b": randn((K, N), t.bfloat16, device, seed + 1),
        "scale_a": one,
        "scale_b": one,
        "out": t.empty((M, N), device=device, dtype=t.bfloat16),
    }


def _matmul_flops(s: dict[str, int]) -> float:
    return 2.0 * s["M"] * s["N"] * s["K"]


@register(
    "matmul_bf16",
    shapes=[{"M": 8192, "N": 8192, "K": 8192}],
    small_shape={"M": 200, "N": 300, "K": 160},
    inputs=_bf16_inputs,
    reference=lambda i: i["a"].double() @ i["b"].double(),
    baseline=lambda i: torch().matmul(i["a"], i["b"]),
    flops=_matmul_flops,
    bytes=lambda s: 2.0 * (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]),
    compile_specs=lambda: [_spec("*bf16", BF16_CONFIG)],
    scale_dim="K",
    scale_step=64,
    tolerance=1e-2,
)
def matmul_bf16(inp: dict[str, Any], launch: Launcher) -> Any:
    """bf16 C = A @ B with A (M, K) and B (K, N) row-major."""
    b = inp["b"]
    return _launch(inp, launch, (b.stride(0), b.stride(1)), BF16_CONFIG)


def _fp8_inputs(shape: dict[str, int], device: str, seed: int) -> dict[str, Any]:
    t = torch()
    M, N, K = shape["M"], shape["N"], shape["K"]
    e4m3 = t.float8_e4m3fn
    # Values spread over the e4m3 range the way a per-tensor scaled activation would be.
    a = randn((M, K), t.float32, device, seed, scale=64.0).clamp(-448, 448).to(e4m3)
    b = randn((N, K), t.float32, device, seed + 1, scale=64.0).clamp(-448, 448).to(e4m3)
    return {
        "a": a,
        "b": b,
        "scale_a": t.full((), 1 / 64, device=device),
        "scale_b": t.full((), 1 / 64, device=device),
        "out": t.empty((M, N), device=device, dtype=t.bfloat16),
    }


def _fp8_reference(inp: dict[str, Any]) -> Any:
    return (inp["a"].double() @ inp["b"].double().T) * inp["scale_a"].double() * inp["scale_b"].double()


def _fp8_baseline(inp: dict[str, Any]) -> Any:
    t = torch()
    return t._scaled_mm(
        inp["a"], inp["b"].T, scale_a=inp["scale_a"], scale_b=inp["scale_b"], out_dtype=t.bfloat16
    )


@register(
    "matmul_fp8",
    shapes=[{"M": 8192, "N": 8192, "K": 8192}],
    small_shape={"M": 200, "N": 300, "K": 256},
    inputs=_fp8_inputs,
    reference=_fp8_reference,
    baseline=_fp8_baseline,
    flops=_matmul_flops,
    bytes=lambda s: 1.0 * (s["M"] * s["K"] + s["K"] * s["N"]) + 2.0 * s["M"] * s["N"],
    compile_specs=lambda: [_spec("*fp8e4nv", FP8_CONFIG)],
    scale_dim="K",
    scale_step=64,
    tolerance=1e-2,
    roof="fp8",
)
def matmul_fp8(inp: dict[str, Any], launch: Launcher) -> Any:
    """fp8 e4m3 C = (A @ B^T) * scale_a * scale_b with B stored (N, K), bf16 output."""
    b = inp["b"]
    return _launch(inp, launch, (b.stride(1), b.stride(0)), FP8_CONFIG)
