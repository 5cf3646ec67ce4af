"""Elementwise kernels: vector add, bf16/fp16 arithmetic, SwiGLU, where/clamp/maximum/minimum."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ..case import Case, poison, register
from ._common import f64, normal, rnd


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """The tutorial vector add: one block per program, a mask for the ragged tail."""
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def _add_inputs(rng):
    n = 3000
    return {"x": normal(rng, n), "y": normal(rng, n), "out": poison(n, np.float32), "n": n}


def _add_launch(wrap, t):
    grid = lambda meta: (triton.cdiv(t["n"], meta["BLOCK_SIZE"]),)  # noqa: E731
    wrap(add_kernel)[grid](t["x"], t["y"], t["out"], t["n"], BLOCK_SIZE=512)


register(
    Case(
        name="vector_add",
        make_inputs=_add_inputs,
        launch=_add_launch,
        # fp32 addition is correctly rounded: the float64 sum rounded once to fp32 is the only answer.
        reference=lambda i: {"out": rnd(f64(i["x"]) + f64(i["y"]), np.float32)},
        outputs=("out",),
        tolerance={"out": (0.0, 0.0)},
        tags=frozenset({"exact"}),
    )
)


@triton.jit
def lowp_arith_kernel(
    a_ptr, b_ptr, h_ptr, g_ptr, add_ptr, mul_ptr, sub_ptr, hadd_ptr, hmul_ptr, n, BLOCK: tl.constexpr
):
    """Arithmetic kept in bf16 / fp16 (no upcast in the source): what the GPU rounds per op."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=1.0)
    b = tl.load(b_ptr + offs, mask=mask, other=1.0)
    tl.store(add_ptr + offs, a + b, mask=mask)
    tl.store(mul_ptr + offs, a * b, mask=mask)
    tl.store(sub_ptr + offs, a - b, mask=mask)
    h = tl.load(h_ptr + offs, mask=mask, other=1.0)
    g = tl.load(g_ptr + offs, mask=mask, other=1.0)
    tl.store(hadd_ptr + offs, h + g, mask=mask)
    tl.store(hmul_ptr + offs, h * g, mask=mask)


def _lowp_inputs(rng):
    n = 1000
    return {
        "a": normal(rng, n, "bfloat16", 4.0),
        "b": normal(rng, n, "bfloat16", 4.0),
        "h": normal(rng, n, np.float16, 4.0),
        "g": normal(rng, n, np.float16, 4.0),
        "add": poison(n, "bfloat16"),
        "mul": poison(n, "bfloat16"),
        "sub": poison(n, "bfloat16"),
        "hadd": poison(n, np.float16),
        "hmul": poison(n, np.float16),
        "n": n,
    }


def _lowp_reference(i):
    a, b, h, g = f64(i["a"]), f64(i["b"]), f64(i["h"]), f64(i["g"])
    # Sums and products of two 8/11-bit significands are exact in float64: one rounding remains.
    return {
        "add": rnd(a + b, "bfloat16"),
        "mul": rnd(a * b, "bfloat16"),
        "sub": rnd(a - b, "bfloat16"),
        "hadd": rnd(h + g, np.float16),
        "hmul": rnd(h * g, np.float16),
    }


register(
    Case(
        name="lowp_arith",
        make_inputs=_lowp_inputs,
        launch=lambda wrap, t: wrap(lowp_arith_kernel)[(triton.cdiv(t["n"], 256),)](
            t["a"],
            t["b"],
            t["h"],
            t["g"],
            t["add"],
            t["mul"],
            t["sub"],
            t["hadd"],
            t["hmul"],
            t["n"],
            BLOCK=256,
        ),
        reference=_lowp_reference,
        outputs=("add", "mul", "sub", "hadd", "hmul"),
        # bf16/fp16 add, sub, mul are correctly rounded (round to nearest even) on the GPU: bit-exact.
        tolerance={k: (0.0, 0.0) for k in ("add", "mul", "sub", "hadd", "hmul")},
        tags=frozenset({"exact", "bf16", "fp16"}),
    )
)


@triton.jit
def swiglu_fwd_kernel(
    x_ptr, out_ptr, n_rows, n_hidden, stride_x, stride_out, BLOCK_ROWS: tl.constexpr, BLOCK_H: tl.constexpr
):
    """SwiGLU on a fused [gate | up] projection (bf16 storage, fp32 math), as LLM MLPs use it."""
    pid_r = tl.program_id(0)
    pid_h = tl.program_id(1)
    rows = pid_r * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    cols = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_hidden)
    gate_ptrs = x_ptr + rows[:, None] * stride_x + cols[None, :]
    gate = tl.load(gate_ptrs, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(gate_ptrs + n_hidden, mask=mask, other=0.0).to(tl.float32)
    silu = gate * tl.sigmoid(gate)
    out = (silu * up).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + rows[:, None] * stride_out + cols[None, :], out, mask=mask)


def _swiglu_inputs(rng):
    rows, hidden = 37, 200
    return {
        "x": normal(rng, (rows, 2 * hidden), "bfloat16", 2.0),
        "out": poison((rows, hidden), "bfloat16"),
        "rows": rows,
        "hidden": hidden,
    }


def _swiglu_reference(i):
    x = f64(i["x"])
    gate, up = x[:, : i["hidden"]], x[:, i["hidden"] :]
    return {"out": gate / (1.0 + np.exp(-gate)) * up}


register(
    Case(
        name="swiglu",
        make_inputs=_swiglu_inputs,
        launch=lambda wrap, t: wrap(swiglu_fwd_kernel)[
            (triton.cdiv(t["rows"], 16), triton.cdiv(t["hidden"], 64))
        ](
            t["x"],
            t["out"],
            t["rows"],
            t["hidden"],
            t["x"].stride(0),
            t["out"].stride(0),
            BLOCK_ROWS=16,
            BLOCK_H=64,
        ),
        reference=_swiglu_reference,
        outputs=("out",),
        # bf16 output: one rounding, half an ulp = 2^-9 relative; fp32 exp/sigmoid error is far below.
        tolerance={"out": (2.0**-8, 1e-6)},
        tags=frozenset({"bf16"}),
    )
)


@triton.jit
def select_kernel(
    x_ptr,
    y_ptr,
    lo_ptr,
    hi_ptr,
    mx_nan_ptr,
    mn_nan_ptr,
    mx_ptr,
    mn_ptr,
    clamp_ptr,
    sel_ptr,
    n,
    BLOCK: tl.constexpr,
):
    """where / clamp / maximum / minimum, with NaN-propagating variants on NaN-laden input."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)  # holds NaNs
    y = tl.load(y_ptr + offs, mask=mask)  # finite
    lo = tl.load(lo_ptr + offs, mask=mask)
    hi = tl.load(hi_ptr + offs, mask=mask)
    tl.store(mx_nan_ptr + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL), mask=mask)
    tl.store(mn_nan_ptr + offs, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL), mask=mask)
    tl.store(mx_ptr + offs, tl.maximum(y, lo), mask=mask)
    tl.store(mn_ptr + offs, tl.minimum(y, hi), mask=mask)
    tl.store(clamp_ptr + offs, tl.clamp(y, lo, hi), mask=mask)
    # A NaN compares false, so NaN lanes take the other branch.
    tl.store(sel_ptr + offs, tl.where(x > y, x, y * 2.0), mask=mask)


def _select_inputs(rng):
    n = 700
    x = normal(rng, n)
    x[rng.random(n) < 0.2] = np.nan
    y = normal(rng, n)
    lo = normal(rng, n) - 0.5
    hi = (lo + np.abs(normal(rng, n))).astype(np.float32)
    out = {k: poison(n, np.float32) for k in ("mx_nan", "mn_nan", "mx", "mn", "clamp", "sel")}
    # A NaN poison would be indistinguishable from an expected NaN; use a finite sentinel here.
    out["mx_nan"][:] = out["mn_nan"][:] = -12345.0
    return {"x": x, "y": y, "lo": lo, "hi": hi, **out, "n": n}


def _select_reference(i):
    x, y, lo, hi = (f64(i[k]) for k in ("x", "y", "lo", "hi"))
    return {
        "mx_nan": np.maximum(x, y),
        "mn_nan": np.minimum(x, y),  # numpy propagates NaN
        "mx": np.maximum(y, lo),
        "mn": np.minimum(y, hi),
        "clamp": np.minimum(np.maximum(y, lo), hi),
        "sel": np.where(x > y, x, y * 2.0),
    }


_SELECT_OUT = ("mx_nan", "mn_nan", "mx", "mn", "clamp", "sel")
register(
    Case(
        name="where_clamp_minmax",
        make_inputs=_select_inputs,
        launch=lambda wrap, t: wrap(select_kernel)[(triton.cdiv(t["n"], 128),)](
            t["x"], t["y"], t["lo"], t["hi"], *(t[k] for k in _SELECT_OUT), t["n"], BLOCK=128
        ),
        reference=_select_reference,
        outputs=_SELECT_OUT,
        # Selection only moves values; y * 2.0 is exact: bit-exact.
        tolerance={k: (0.0, 0.0) for k in _SELECT_OUT},
        tags=frozenset({"exact"}),
    )
)
