"""SwiGLU: silu(gate) * up over a packed [gate | up] bf16 projection, as in Llama's MLP."""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from tilescope.bench.registry import CompileSpec, Launcher, register
from tilescope.bench.suite.common import randn, torch


@triton.jit
def swiglu_kernel(x_ptr, out_ptr, N, stride_x, stride_o, BLOCK_N: tl.constexpr):
    """out[row, c] = silu(x[row, c]) * x[row, N + c], computed in fp32."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    gate = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_ptr + row * stride_x + N + cols, mask=mask, other=0.0).to(tl.float32)
    y = gate * tl.sigmoid(gate) * up
    tl.store(out_ptr + row * stride_o + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


CONFIG = {"BLOCK_N": 1024}
OPTIONS = {"num_warps": 4}


def _specs() -> list[CompileSpec]:
    sig = {
        "x_ptr": "*bf16",
        "out_ptr": "*bf16",
        "N": "i32",
        "stride_x": "i32",
        "stride_o": "i32",
        "BLOCK_N": "constexpr",
    }
    return [
        CompileSpec(swiglu_kernel, sig, CONFIG, ("x_ptr", "out_ptr", "N", "stride_x", "stride_o"), OPTIONS)
    ]


def _inputs(shape: dict[str, int], device: str, seed: int) -> dict[str, Any]:
    t = torch()
    M, N = shape["M"], shape["N"]
    return {
        "x": randn((M, 2 * N), t.bfloat16, device, seed),
        "out": t.empty((M, N), device=device, dtype=t.bfloat16),
    }


def _reference(inp: dict[str, Any]) -> Any:
    x = inp["x"].double()
    gate, up = x.chunk(2, dim=-1)
    return torch().nn.functional.silu(gate) * up


def _baseline(inp: dict[str, Any]) -> Any:
    gate, up = inp["x"].chunk(2, dim=-1)
    return torch().nn.functional.silu(gate) * up


@register(
    "swiglu",
    shapes=[{"M": 8192, "N": 14336}],
    small_shape={"M": 9, "N": 1500},
    inputs=_inputs,
    reference=_reference,
    baseline=_baseline,
    flops=lambda s: 6.0 * s["M"] * s["N"],
    bytes=lambda s: 2.0 * 3 * s["M"] * s["N"],
    compile_specs=_specs,
    scale_dim="M",
    tolerance=1e-2,
)
def swiglu(inp: dict[str, Any], launch: Launcher) -> Any:
    """SwiGLU of the packed projection x (M, 2N) into out (M, N)."""
    x, out = inp["x"], inp["out"]
    M, N = out.shape
    launch(
        swiglu_kernel,
        (M, triton.cdiv(N, CONFIG["BLOCK_N"])),
        x,
        out,
        N,
        x.stride(0),
        out.stride(0),
        **CONFIG,
        **OPTIONS,
    )
    return out
