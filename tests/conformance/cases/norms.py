"""Normalisation layers: LayerNorm forward, LayerNorm backward (spin-lock partial sums), RMSNorm."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ..case import Case, poison, register
from ._common import f64, normal, uniform


@triton.jit
def layer_norm_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    """LayerNorm forward from the Triton tutorial: three passes over a row in column blocks."""
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


def _ln_inputs(rng):
    m, n = 24, 300
    return {
        "x": normal(rng, (m, n), np.float16, 2.0) + np.float16(0.5),
        "w": uniform(rng, n, 0.5, 1.5, np.float16),
        "b": normal(rng, n, np.float16, 0.1),
        "y": poison((m, n), np.float16),
        "mean": poison(m, np.float32),
        "rstd": poison(m, np.float32),
        "eps": 1e-5,
    }


def _ln_reference(i):
    x = f64(i["x"])
    mean = x.mean(axis=1)
    var = ((x - mean[:, None]) ** 2).mean(axis=1)
    rstd = 1 / np.sqrt(var + i["eps"])
    y = (x - mean[:, None]) * rstd[:, None] * f64(i["w"]) + f64(i["b"])
    return {"y": y, "mean": mean, "rstd": rstd}


register(
    Case(
        name="layernorm_fwd",
        make_inputs=_ln_inputs,
        launch=lambda wrap, t: wrap(layer_norm_fwd_fused)[(t["x"].shape[0],)](
            t["x"],
            t["y"],
            t["w"],
            t["b"],
            t["mean"],
            t["rstd"],
            t["x"].stride(0),
            t["x"].shape[1],
            t["eps"],
            BLOCK_SIZE=128,
        ),
        reference=_ln_reference,
        outputs=("y", "mean", "rstd"),
        # y is fp16 (half an ulp = 2^-11 relative, plus fp32 statistics); mean/rstd are fp32 sums of 300.
        tolerance={"y": (2.0**-10, 2e-3), "mean": (1e-5, 1e-6), "rstd": (1e-5, 0.0)},
        tags=frozenset({"fp16"}),
    )
)


@triton.jit
def layer_norm_bwd_dx_fused(
    DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N, GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr
):
    """LayerNorm backward from the Triton tutorial: dx per row, and dw/db partial sums per group
    of rows accumulated under a spin lock (atomic_cas / atomic_xchg)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.0)
    wdy = tl.where(mask, wdy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    # The first program of a group stores; the others accumulate.
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@triton.jit
def layer_norm_bwd_dwdb(
    DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr
):
    """Sums the per-group partial dw/db rows into the final gradients."""
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.0)
        db += tl.load(DB + offs, mask=mask, other=0.0)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


_GROUP_M = 8


def _ln_bwd_inputs(rng):
    m, n = 48, 200
    x = normal(rng, (m, n), scale=2.0)
    mean = x.astype(np.float64).mean(axis=1).astype(np.float32)
    rstd = (1 / np.sqrt(x.astype(np.float64).var(axis=1) + 1e-5)).astype(np.float32)
    return {
        "x": x,
        "dy": normal(rng, (m, n)),
        "w": uniform(rng, n, 0.5, 1.5),
        "mean": mean,
        "rstd": rstd,
        # The lock and the per-group counters must start unlocked (zero): that is the protocol.
        "lock": np.zeros(2 * _GROUP_M, np.int32),
        "partial_dw": poison((_GROUP_M, n), np.float32),
        "partial_db": poison((_GROUP_M, n), np.float32),
        "dx": poison((m, n), np.float32),
        "dw": poison(n, np.float32),
        "db": poison(n, np.float32),
    }


def _ln_bwd_launch(wrap, t):
    m, n = t["x"].shape
    wrap(layer_norm_bwd_dx_fused)[(m,)](
        t["dx"],
        t["dy"],
        t["partial_dw"],
        t["partial_db"],
        t["x"],
        t["w"],
        t["mean"],
        t["rstd"],
        t["lock"],
        t["x"].stride(0),
        n,
        GROUP_SIZE_M=_GROUP_M,
        BLOCK_SIZE_N=256,
    )
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE_N"]),)  # noqa: E731
    wrap(layer_norm_bwd_dwdb)[grid](
        t["partial_dw"], t["partial_db"], t["dw"], t["db"], _GROUP_M, n, BLOCK_SIZE_M=8, BLOCK_SIZE_N=64
    )


def _ln_bwd_reference(i):
    x, dy, w = f64(i["x"]), f64(i["dy"]), f64(i["w"])
    n = x.shape[1]
    xhat = (x - f64(i["mean"])[:, None]) * f64(i["rstd"])[:, None]
    wdy = w * dy
    c1 = (xhat * wdy).sum(axis=1, keepdims=True) / n
    c2 = wdy.sum(axis=1, keepdims=True) / n
    dx = (wdy - (xhat * c1 + c2)) * f64(i["rstd"])[:, None]
    return {"dx": dx, "dw": (dy * xhat).sum(axis=0), "db": dy.sum(axis=0)}


register(
    Case(
        name="layernorm_bwd",
        make_inputs=_ln_bwd_inputs,
        launch=_ln_bwd_launch,
        reference=_ln_bwd_reference,
        outputs=("dx", "dw", "db"),
        # fp32 throughout; dw/db add 48 rows in lock order (any order): ~48 * 2^-24 * sum|.| absolute.
        tolerance={"dx": (1e-5, 1e-5), "dw": (1e-5, 2e-5), "db": (1e-5, 2e-5)},
        tags=frozenset({"atomics", "spinlock"}),
    )
)


@triton.jit
def rms_norm_fwd_kernel(
    x_ptr, w_ptr, y_ptr, rstd_ptr, stride_x, stride_y, n_cols, eps, BLOCK_N: tl.constexpr
):
    """RMSNorm (LLaMA style) on bf16 activations with an fp32 weight; stores 1/rms for backward."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean_sq = tl.sum(x * x, axis=0) / n_cols
    rstd = tl.rsqrt(mean_sq + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    y = x * rstd * w
    tl.store(y_ptr + row * stride_y + cols, y.to(tl.bfloat16), mask=mask)
    tl.store(rstd_ptr + row, rstd)


def _rms_inputs(rng):
    m, n = 33, 384
    return {
        "x": normal(rng, (m, n), "bfloat16", 3.0),
        "w": uniform(rng, n, 0.5, 1.5),
        "y": poison((m, n), "bfloat16"),
        "rstd": poison(m, np.float32),
        "eps": 1e-6,
    }


def _rms_reference(i):
    x = f64(i["x"])
    rstd = 1 / np.sqrt((x * x).mean(axis=1) + i["eps"])
    return {"y": x * rstd[:, None] * f64(i["w"]), "rstd": rstd}


register(
    Case(
        name="rmsnorm_fwd",
        make_inputs=_rms_inputs,
        launch=lambda wrap, t: wrap(rms_norm_fwd_kernel)[(t["x"].shape[0],)](
            t["x"],
            t["w"],
            t["y"],
            t["rstd"],
            t["x"].stride(0),
            t["y"].stride(0),
            t["x"].shape[1],
            t["eps"],
            BLOCK_N=512,
        ),
        reference=_rms_reference,
        outputs=("y", "rstd"),
        # y is bf16: half an ulp is 2^-9 relative; rsqrt.approx adds ~2^-22.
        tolerance={"y": (2.0**-8, 1e-6), "rstd": (2e-6, 0.0)},
        tags=frozenset({"bf16"}),
    )
)
