"""Row reductions: fused softmax, sum / max (NaN rules), argmin / argmax, cross-entropy."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ..case import Case, poison, register
from ._common import f64, normal


@triton.jit
def softmax_kernel(
    output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr
):
    """The fused-softmax tutorial: programs stride over rows; masked lanes read -inf."""
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


def _softmax_inputs(rng):
    rows, cols = 45, 781
    return {"x": normal(rng, (rows, cols), scale=3.0), "y": poison((rows, cols), np.float32)}


def _softmax_reference(i):
    x = f64(i["x"])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"y": e / e.sum(axis=1, keepdims=True)}


register(
    Case(
        name="softmax",
        make_inputs=_softmax_inputs,
        launch=lambda wrap, t: wrap(softmax_kernel)[(8,)](
            t["y"],
            t["x"],
            t["x"].stride(0),
            t["y"].stride(0),
            t["x"].shape[0],
            t["x"].shape[1],
            BLOCK_SIZE=1024,
        ),
        reference=_softmax_reference,
        outputs=("y",),
        # fp32 exp (~2 ulp on the GPU's ex2.approx path) and an 781-term fp32 sum: 1e-5 relative.
        tolerance={"y": (1e-5, 1e-9)},
    )
)


@triton.jit
def _max_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def row_stats_kernel(x_ptr, clean_ptr, sum_ptr, max_ptr, nanmax_ptr, min_ptr, n_cols, BLOCK: tl.constexpr):
    """Per-row sum, max, min, and a NaN-propagating max through tl.reduce with a custom combine."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("nan"))
    c = tl.load(clean_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(sum_ptr + row, tl.sum(c, axis=0))
    tl.store(max_ptr + row, tl.max(tl.where(mask, c, -float("inf")), axis=0))
    tl.store(min_ptr + row, tl.min(tl.where(mask, c, float("inf")), axis=0))
    x = tl.where(mask, x, -float("inf"))
    tl.store(nanmax_ptr + row, tl.reduce(x, 0, _max_nan))


def _stats_inputs(rng):
    rows, cols = 16, 300
    x = normal(rng, (rows, cols))
    x[rng.random((rows, cols)) < 0.002] = np.nan
    x[3, 17] = np.nan  # at least one NaN row
    return {
        "x": x,
        "clean": normal(rng, (rows, cols)),
        "sum": poison(rows, np.float32),
        "max": poison(rows, np.float32),
        "nanmax": np.full(rows, -7.0, np.float32),
        "min": poison(rows, np.float32),
        "cols": cols,
    }


def _stats_reference(i):
    x, c = f64(i["x"]), f64(i["clean"])
    return {"sum": c.sum(axis=1), "max": c.max(axis=1), "min": c.min(axis=1), "nanmax": x.max(axis=1)}


register(
    Case(
        name="reduce_sum_max_nan",
        make_inputs=_stats_inputs,
        launch=lambda wrap, t: wrap(row_stats_kernel)[(t["x"].shape[0],)](
            t["x"], t["clean"], t["sum"], t["max"], t["nanmax"], t["min"], t["cols"], BLOCK=512
        ),
        reference=_stats_reference,
        outputs=("sum", "max", "nanmax", "min"),
        # max/min select an input: exact. A 300-term fp32 sum in tree order: ~300 * 2^-24 * sum|x|.
        tolerance={"sum": (0.0, 3e-4), "max": (0.0, 0.0), "nanmax": (0.0, 0.0), "min": (0.0, 0.0)},
    )
)


@triton.jit
def arg_kernel(x_ptr, idx_ptr, amax_ptr, amin_ptr, vmax_ptr, n_cols, BLOCK: tl.constexpr):
    """argmax / argmin per row (ties go to the lowest index) plus max with return_indices."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-1000)
    tl.store(amax_ptr + row, tl.argmax(x, axis=0))
    tl.store(amin_ptr + row, tl.argmin(tl.where(mask, x, 1000), axis=0))
    vmax, imax = tl.max(x, axis=0, return_indices=True)
    tl.store(vmax_ptr + row, vmax)
    tl.store(idx_ptr + row, imax)


def _arg_inputs(rng):
    rows, cols = 12, 100
    # Small integers force ties: the first index must win.
    x = rng.integers(-20, 20, (rows, cols)).astype(np.int32)
    return {
        "x": x,
        "idx": poison(rows, np.int32),
        "amax": poison(rows, np.int32),
        "amin": poison(rows, np.int32),
        "vmax": poison(rows, np.int32),
        "cols": cols,
    }


register(
    Case(
        name="argmin_argmax",
        make_inputs=_arg_inputs,
        launch=lambda wrap, t: wrap(arg_kernel)[(t["x"].shape[0],)](
            t["x"], t["idx"], t["amax"], t["amin"], t["vmax"], t["cols"], BLOCK=128
        ),
        reference=lambda i: {
            "amax": i["x"].argmax(axis=1),
            "amin": i["x"].argmin(axis=1),
            "idx": i["x"].argmax(axis=1),
            "vmax": i["x"].max(axis=1),
        },
        outputs=("amax", "amin", "idx", "vmax"),
        tolerance={k: (0.0, 0.0) for k in ("amax", "amin", "idx", "vmax")},
        tags=frozenset({"exact"}),
    )
)


@triton.jit
def cross_entropy_fwd_kernel(
    logits_ptr, labels_ptr, loss_ptr, lse_ptr, n_cols, stride_row, ignore_index, BLOCK: tl.constexpr
):
    """Cross-entropy forward over bf16 logits in column chunks with an online logsumexp."""
    row = tl.program_id(0)
    label = tl.load(labels_ptr + row)
    m = -float("inf")
    s = 0.0
    target = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(logits_ptr + row * stride_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
        target += tl.sum(tl.where(cols == label, x, 0.0), axis=0)
    lse = m + tl.log(s)
    loss = tl.where(label == ignore_index, 0.0, lse - target)
    tl.store(loss_ptr + row, loss)
    tl.store(lse_ptr + row, lse)


def _ce_inputs(rng):
    rows, vocab = 20, 1000
    labels = rng.integers(0, vocab, rows).astype(np.int64)
    labels[[2, 7]] = -100
    return {
        "logits": normal(rng, (rows, vocab), "bfloat16", 4.0),
        "labels": labels,
        "loss": poison(rows, np.float32),
        "lse": poison(rows, np.float32),
        "vocab": vocab,
    }


def _ce_reference(i):
    x = f64(i["logits"])
    m = x.max(axis=1)
    lse = m + np.log(np.exp(x - m[:, None]).sum(axis=1))
    lab = i["labels"]
    tgt = x[np.arange(x.shape[0]), np.where(lab < 0, 0, lab)]
    return {"loss": np.where(lab == -100, 0.0, lse - tgt), "lse": lse}


register(
    Case(
        name="cross_entropy_fwd",
        make_inputs=_ce_inputs,
        launch=lambda wrap, t: wrap(cross_entropy_fwd_kernel)[(t["logits"].shape[0],)](
            t["logits"], t["labels"], t["loss"], t["lse"], t["vocab"], t["logits"].stride(0), -100, BLOCK=256
        ),
        reference=_ce_reference,
        outputs=("loss", "lse"),
        # bf16 inputs are exact in fp32; fp32 exp/log and a 1000-term sum: ~1e-5 absolute on lse ~ 10.
        tolerance={"loss": (1e-5, 3e-5), "lse": (1e-5, 3e-5)},
        tags=frozenset({"bf16"}),
    )
)
