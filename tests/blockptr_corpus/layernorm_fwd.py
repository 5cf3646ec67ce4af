"""LayerNorm forward over rows: mean on a forward sweep, variance on a backward sweep (negative advances)."""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def layernorm_fwd_kernel(X, Y, W, B, Mean, Rstd, stride_x, stride_y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_bp = tl.make_block_ptr(X + row * stride_x, (N,), (1,), (0,), (BLOCK_N,), (0,))
    # pass 1: mean
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for _ in range(0, N, BLOCK_N):
        acc += tl.load(x_bp, boundary_check=(0,), padding_option="zero").to(tl.float32)
        x_bp = tl.advance(x_bp, (BLOCK_N,))
    mean = tl.sum(acc, axis=0) / N
    # pass 2: walk back over the row for the variance
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for _ in range(0, N, BLOCK_N):
        x_bp = tl.advance(x_bp, (-BLOCK_N,))
        x = tl.load(x_bp, boundary_check=(0,), padding_option="zero").to(tl.float32)
        x = x - mean
        acc += x * x
    # the padded lanes each added mean**2; take them out again
    n_pad = tl.cdiv(N, BLOCK_N) * BLOCK_N - N
    var = (tl.sum(acc, axis=0) - n_pad * mean * mean) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    # pass 3: normalize
    w_bp = tl.make_block_ptr(W, (N,), (1,), (0,), (BLOCK_N,), (0,))
    b_bp = tl.make_block_ptr(B, (N,), (1,), (0,), (BLOCK_N,), (0,))
    y_bp = tl.make_block_ptr(Y + row * stride_y, (N,), (1,), (0,), (BLOCK_N,), (0,))
    for _ in range(0, N, BLOCK_N):
        x = tl.load(x_bp, boundary_check=(0,)).to(tl.float32)
        w = tl.load(w_bp, boundary_check=(0,))
        b = tl.load(b_bp, boundary_check=(0,))
        tl.store(y_bp, ((x - mean) * rstd * w + b).to(Y.dtype.element_ty), boundary_check=(0,))
        x_bp = tl.advance(x_bp, (BLOCK_N,))
        w_bp = tl.advance(w_bp, (BLOCK_N,))
        b_bp = tl.advance(b_bp, (BLOCK_N,))
        y_bp = tl.advance(y_bp, (BLOCK_N,))


def cases():
    return [dict(M=4, N=128), dict(M=5, N=77), dict(M=3, N=33)]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(M=4096, N=4096)


def make_inputs(rng, M, N):
    return {
        "x": (rng.standard_normal((M, N)) * 2 + 0.5).astype(np.float16),
        "y": rng.standard_normal((M, N)).astype(np.float16),
        "w": rng.standard_normal(N).astype(np.float32),
        "b": rng.standard_normal(N).astype(np.float32),
        "mean": rng.standard_normal(M).astype(np.float32),
        "rstd": rng.standard_normal(M).astype(np.float32),
    }


def launch(kernels, t, M, N):
    kernels.layernorm_fwd_kernel[(M,)](
        t["x"],
        t["y"],
        t["w"],
        t["b"],
        t["mean"],
        t["rstd"],
        t["x"].stride(0),
        t["y"].stride(0),
        N,
        1e-5,
        BLOCK_N=32,
    )


def reference(x, M, N):
    mean = x["x"].mean(axis=1)
    var = x["x"].var(axis=1)
    rstd = 1 / np.sqrt(var + 1e-5)
    y = (x["x"] - mean[:, None]) * rstd[:, None] * x["w"] + x["b"]
    return {"y": y, "mean": mean, "rstd": rstd}
