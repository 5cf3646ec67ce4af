"""Row softmax, one program per row, the row in one 1-D block (-inf masked after a zero-padded load)."""

import numpy as np
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    in_bp = tl.make_block_ptr(in_ptr + row * in_row_stride, (n_cols,), (1,), (0,), (BLOCK_SIZE,), (0,))
    x = tl.load(in_bp, boundary_check=(0,), padding_option="zero")
    x = tl.where(tl.arange(0, BLOCK_SIZE) < n_cols, x, -float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    out = num / tl.sum(num, axis=0)
    out_bp = tl.make_block_ptr(out_ptr + row * out_row_stride, (n_cols,), (1,), (0,), (BLOCK_SIZE,), (0,))
    tl.store(out_bp, out, boundary_check=(0,))


def cases():
    return [dict(M=8, N=128), dict(M=5, N=97), dict(M=3, N=1)]


def bench_case():
    """A GPU-sized launch for benchmarks/gpu_blockptr.py."""
    return dict(M=4096, N=4096)


def make_inputs(rng, M, N):
    return {
        "x": (rng.standard_normal((M, N)) * 3).astype(np.float32),
        "y": rng.standard_normal((M, N)).astype(np.float32),
    }


def launch(kernels, t, M, N):
    kernels.softmax_kernel[(M,)](
        t["y"], t["x"], t["x"].stride(0), t["y"].stride(0), N, BLOCK_SIZE=triton.next_power_of_2(N)
    )


def reference(x, M, N):
    e = np.exp(x["x"] - x["x"].max(axis=1, keepdims=True))
    return {"y": e / e.sum(axis=1, keepdims=True)}
