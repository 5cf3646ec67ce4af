"""Row-wise kernels over a (M, N) bf16 activation: RMSNorm and softmax, one row per program."""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from tilescope.bench.registry import CompileSpec, Launcher, register
from tilescope.bench.suite.common import next_pow2, randn, torch

EPS = 1e-6
ROW_OPTIONS = {"num_warps": 8}


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, N, stride_x, stride_o, eps, BLOCK_N: tl.constexpr):
    """out[row] = x[row] / sqrt(mean(x[row]^2) + eps) * w, in fp32, stored as bf16."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, 0) / N + eps)
    tl.store(out_ptr + row * stride_o + cols, (x * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, N, stride_x, stride_o, BLOCK_N: tl.constexpr):
    """out[row] = softmax(x[row]) in fp32, stored as bf16."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf")).to(tl.float32)
    p = tl.exp(x - tl.max(x, 0))
    tl.store(out_ptr + row * stride_o + cols, (p / tl.sum(p, 0)).to(out_ptr.dtype.element_ty), mask=mask)


ROW_SHAPES = [{"M": 16384, "N": 8192}]
SMALL_ROWS = {"M": 37, "N": 300}


def _row_inputs(shape: dict[str, int], device: str, seed: int) -> dict[str, Any]:
    t = torch()
    M, N = shape["M"], shape["N"]
    return {
        "x": randn((M, N), t.bfloat16, device, seed),
        "w": randn((N,), t.bfloat16, device, seed + 1),
        "out": t.empty((M, N), device=device, dtype=t.bfloat16),
    }


def _row_bytes(s: dict[str, int]) -> float:
    return 2.0 * 2 * s["M"] * s["N"]


def _rmsnorm_specs() -> list[CompileSpec]:
    sig = {
        "x_ptr": "*bf16",
        "w_ptr": "*bf16",
        "out_ptr": "*bf16",
        "N": "i32",
        "stride_x": "i32",
        "stride_o": "i32",
        "eps": "fp32",
        "BLOCK_N": "constexpr",
    }
    divisible = ("x_ptr", "w_ptr", "out_ptr", "N", "stride_x", "stride_o")
    return [CompileSpec(rmsnorm_kernel, sig, {"BLOCK_N": 8192}, divisible, ROW_OPTIONS)]


def _rmsnorm_reference(inp: dict[str, Any]) -> Any:
    x = inp["x"].double()
    return x * (x.pow(2).mean(-1, keepdim=True) + EPS).rsqrt() * inp["w"].double()


def _rmsnorm_baseline(inp: dict[str, Any]) -> Any:
    t = torch()
    return t.nn.functional.rms_norm(inp["x"], (inp["x"].shape[1],), inp["w"], EPS)


@register(
    "rmsnorm",
    shapes=ROW_SHAPES,
    small_shape=SMALL_ROWS,
    inputs=_row_inputs,
    reference=_rmsnorm_reference,
    baseline=_rmsnorm_baseline,
    flops=lambda s: 4.0 * s["M"] * s["N"],
    bytes=_row_bytes,
    compile_specs=_rmsnorm_specs,
    scale_dim="M",
    tolerance=1e-2,
)
def rmsnorm(inp: dict[str, Any], launch: Launcher) -> Any:
    """RMSNorm of every row of x with weight w."""
    x, out = inp["x"], inp["out"]
    M, N = x.shape
    launch(
        rmsnorm_kernel,
        (M,),
        x,
        inp["w"],
        out,
        N,
        x.stride(0),
        out.stride(0),
        EPS,
        BLOCK_N=next_pow2(N),
        **ROW_OPTIONS,
    )
    return out


def _softmax_specs() -> list[CompileSpec]:
    sig = {
        "x_ptr": "*bf16",
        "out_ptr": "*bf16",
        "N": "i32",
        "stride_x": "i32",
        "stride_o": "i32",
        "BLOCK_N": "constexpr",
    }
    divisible = ("x_ptr", "out_ptr", "N", "stride_x", "stride_o")
    return [CompileSpec(softmax_kernel, sig, {"BLOCK_N": 8192}, divisible, ROW_OPTIONS)]


@register(
    "softmax",
    shapes=ROW_SHAPES,
    small_shape=SMALL_ROWS,
    inputs=_row_inputs,
    reference=lambda i: torch().softmax(i["x"].double(), dim=-1),
    baseline=lambda i: torch().softmax(i["x"], dim=-1),
    flops=lambda s: 5.0 * s["M"] * s["N"],
    bytes=_row_bytes,
    compile_specs=_softmax_specs,
    scale_dim="M",
    tolerance=1e-2,
)
def softmax(inp: dict[str, Any], launch: Launcher) -> Any:
    """Softmax of every row of x."""
    x, out = inp["x"], inp["out"]
    M, N = x.shape
    launch(softmax_kernel, (M,), x, out, N, x.stride(0), out.stride(0), BLOCK_N=next_pow2(N), **ROW_OPTIONS)
    return out
