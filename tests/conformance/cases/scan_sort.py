"""Scans, sorting and counting: cumsum, a custom associative_scan, sort, top-k, gather, histograms."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ..case import Case, poison, register
from ._common import f64, normal, uniform


@triton.jit
def cumsum_kernel(x_ptr, xi_ptr, out_ptr, outi_ptr, n_cols, BLOCK: tl.constexpr):
    """Inclusive prefix sums along rows, fp32 and int32 (int32 wraps like the GPU)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    xi = tl.load(xi_ptr + row * n_cols + cols, mask=mask, other=0)
    tl.store(out_ptr + row * n_cols + cols, tl.cumsum(x, axis=0), mask=mask)
    tl.store(outi_ptr + row * n_cols + cols, tl.cumsum(xi, axis=0), mask=mask)


def _cumsum_inputs(rng):
    rows, cols = 6, 200
    return {
        "x": normal(rng, (rows, cols)),
        "xi": rng.integers(-(2**30), 2**30, (rows, cols)).astype(np.int32),
        "out": poison((rows, cols), np.float32),
        "outi": poison((rows, cols), np.int32),
        "cols": cols,
    }


def _wrap32(x: np.ndarray) -> np.ndarray:
    return ((x.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.int64)


register(
    Case(
        name="cumsum",
        make_inputs=_cumsum_inputs,
        launch=lambda wrap, t: wrap(cumsum_kernel)[(t["x"].shape[0],)](
            t["x"], t["xi"], t["out"], t["outi"], t["cols"], BLOCK=256
        ),
        reference=lambda i: {
            "out": np.cumsum(f64(i["x"]), axis=1),
            "outi": _wrap32(np.cumsum(i["xi"].astype(np.int64), axis=1)),
        },
        outputs=("out", "outi"),
        # fp32 prefix sums of up to 200 N(0,1) terms in tree order: ~1e-5 absolute.
        tolerance={"out": (1e-5, 2e-5), "outi": (0.0, 0.0)},
    )
)


@triton.jit
def _affine_combine(a1, b1, a2, b2):
    # Composition of h -> a1 h + b1 followed by h -> a2 h + b2.
    return a1 * a2, b1 * a2 + b2


@triton.jit
def linear_recurrence_kernel(a_ptr, b_ptr, h_ptr, seq_len, BLOCK: tl.constexpr):
    """h_t = a_t * h_{t-1} + b_t (a gated linear RNN / SSM scan) with tl.associative_scan."""
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < seq_len
    a = tl.load(a_ptr + row * seq_len + offs, mask=mask, other=1.0)
    b = tl.load(b_ptr + row * seq_len + offs, mask=mask, other=0.0)
    _, h = tl.associative_scan((a, b), axis=0, combine_fn=_affine_combine)
    tl.store(h_ptr + row * seq_len + offs, h, mask=mask)


def _rec_inputs(rng):
    rows, n = 8, 100
    return {
        "a": uniform(rng, (rows, n), 0.5, 0.99),
        "b": normal(rng, (rows, n)),
        "h": poison((rows, n), np.float32),
        "n": n,
    }


def _rec_reference(i):
    a, b = f64(i["a"]), f64(i["b"])
    h = np.zeros_like(a)
    prev = np.zeros(a.shape[0])
    for t in range(a.shape[1]):
        prev = a[:, t] * prev + b[:, t]
        h[:, t] = prev
    return {"h": h}


register(
    Case(
        name="associative_scan_linear_recurrence",
        make_inputs=_rec_inputs,
        launch=lambda wrap, t: wrap(linear_recurrence_kernel)[(t["a"].shape[0],)](
            t["a"], t["b"], t["h"], t["n"], BLOCK=128
        ),
        reference=_rec_reference,
        outputs=("h",),
        # Contracting recurrence (|a| < 1): fp32 rounding errors decay; a few ulps of |h| <~ 10.
        tolerance={"h": (1e-5, 1e-5)},
    )
)


@triton.jit
def sort_kernel(x_ptr, xi_ptr, asc_ptr, desc_ptr, topv_ptr, N: tl.constexpr, K: tl.constexpr):
    """Sort rows ascending (fp32) and descending (int32), and keep the top K values."""
    row = tl.program_id(0)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + row * N + cols)
    xi = tl.load(xi_ptr + row * N + cols)
    tl.store(asc_ptr + row * N + cols, tl.sort(x))
    tl.store(desc_ptr + row * N + cols, tl.sort(xi, descending=True))
    top = tl.topk(x, K)
    tl.store(topv_ptr + row * K + tl.arange(0, K), top)


def _sort_inputs(rng):
    rows, n, k = 8, 128, 16
    return {
        "x": normal(rng, (rows, n)),
        "xi": rng.integers(-50, 50, (rows, n)).astype(np.int32),
        "asc": poison((rows, n), np.float32),
        "desc": poison((rows, n), np.int32),
        "topv": poison((rows, k), np.float32),
    }


register(
    Case(
        name="sort_topk",
        make_inputs=_sort_inputs,
        launch=lambda wrap, t: wrap(sort_kernel)[(t["x"].shape[0],)](
            t["x"], t["xi"], t["asc"], t["desc"], t["topv"], N=128, K=16
        ),
        reference=lambda i: {
            "asc": np.sort(f64(i["x"]), axis=1),
            "desc": -np.sort(-i["xi"].astype(np.int64), axis=1),
            "topv": -np.sort(-f64(i["x"]), axis=1)[:, :16],
        },
        outputs=("asc", "desc", "topv"),
        tolerance={"asc": (0.0, 0.0), "desc": (0.0, 0.0), "topv": (0.0, 0.0)},  # permutations of the input
        tags=frozenset({"exact"}),
    )
)


@triton.jit
def gather_rows_kernel(src_ptr, idx_ptr, out_ptr, N: tl.constexpr, M: tl.constexpr):
    """tl.gather along axis 1: out[r, j] = src[r, idx[r, j]] inside one tile."""
    row = tl.program_id(0)
    src = tl.load(src_ptr + row * N + tl.arange(0, N))
    idx = tl.load(idx_ptr + row * M + tl.arange(0, M))
    src2 = tl.reshape(src, (1, N))
    out = tl.gather(src2, tl.reshape(idx, (1, M)), axis=1)
    tl.store(out_ptr + row * M + tl.arange(0, M), tl.reshape(out, (M,)))


def _gather_inputs(rng):
    rows, n, m = 8, 64, 32
    return {
        "src": normal(rng, (rows, n)),
        "idx": rng.integers(0, n, (rows, m)).astype(np.int32),
        "out": poison((rows, m), np.float32),
    }


register(
    Case(
        name="tl_gather",
        make_inputs=_gather_inputs,
        launch=lambda wrap, t: wrap(gather_rows_kernel)[(t["src"].shape[0],)](
            t["src"], t["idx"], t["out"], N=64, M=32
        ),
        reference=lambda i: {"out": np.take_along_axis(f64(i["src"]), i["idx"].astype(np.int64), axis=1)},
        outputs=("out",),
        tolerance={"out": (0.0, 0.0)},
        tags=frozenset({"exact"}),
    )
)


@triton.jit
def histogram_tl_kernel(x_ptr, hist_ptr, n, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    """Per-program tl.histogram (masked tail) merged into the global histogram by atomic adds."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    h = tl.histogram(x, NUM_BINS, mask=mask)
    tl.atomic_add(hist_ptr + tl.arange(0, NUM_BINS), h)


@triton.jit
def histogram_atomic_kernel(x_ptr, hist_ptr, n, num_bins, BLOCK: tl.constexpr):
    """Histogram by scattering atomic increments: heavy contention on few bins."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    x = tl.minimum(tl.maximum(x, 0), num_bins - 1)
    tl.atomic_add(hist_ptr + x, 1, mask=mask)


def _hist_inputs(rng):
    n, bins = 5000, 32
    # Skewed data: most values land in a few bins.
    x = np.minimum(rng.geometric(0.15, n) - 1, bins - 1).astype(np.int32)
    y = rng.integers(-5, bins + 5, n).astype(np.int32)  # out-of-range values clamp to the end bins
    # The counts start from earlier totals: the kernels must add, not overwrite.
    return {
        "x": x,
        "y": y,
        "hist": rng.integers(0, 100, bins).astype(np.int32),
        "hist2": rng.integers(0, 100, bins).astype(np.int32),
        "n": n,
        "bins": bins,
    }


def _hist_launch(wrap, t):
    wrap(histogram_tl_kernel)[(triton.cdiv(t["n"], 1024),)](
        t["x"], t["hist"], t["n"], NUM_BINS=32, BLOCK=1024
    )
    wrap(histogram_atomic_kernel)[(triton.cdiv(t["n"], 512),)](
        t["y"], t["hist2"], t["n"], t["bins"], BLOCK=512
    )


register(
    Case(
        name="histogram",
        make_inputs=_hist_inputs,
        launch=_hist_launch,
        reference=lambda i: {
            "hist": i["hist"] + np.bincount(i["x"], minlength=i["bins"]),
            "hist2": i["hist2"] + np.bincount(np.clip(i["y"], 0, i["bins"] - 1), minlength=i["bins"]),
        },
        outputs=("hist", "hist2"),
        tolerance={"hist": (0.0, 0.0), "hist2": (0.0, 0.0)},
        tags=frozenset({"exact", "atomics"}),
    )
)
