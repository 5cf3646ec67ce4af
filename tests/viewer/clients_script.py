"""A script for ``tilescope run -c tracer,racecheck,profiler``: three kernels in the style of real
ones, each checked against a float64 NumPy reference.

1. ``smooth`` (``tilescope.viewer.examples.smooth_kernel``): a 3-point moving average run in
   place (``smooth(x, x)``): every program reads its neighbours' edge elements, which they
   overwrite (two races: the left read and the right read against the store);
2. ``gather_columns_kernel``: ``out[c, r] = x[r, c]`` over a row-major ``x``, so the load walks a
   column (strided by a row: one 32-byte sector per lane, an uncoalesced access);
3. ``softmax_kernel``: Triton's fused-softmax tutorial over rows of 80 columns in blocks of 128
   (62.5% of the lanes enabled: the masked-lanes note).
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from tilescope.viewer.examples import smooth_kernel as smooth

SMOOTH_N, SMOOTH_BLOCK = 256, 64
ROWS, COLS, COLUMN_BLOCK = 512, 16, 128
SOFTMAX_ROWS, SOFTMAX_COLS = 32, 80


@triton.jit
def gather_columns_kernel(x_ptr, out_ptr, rows, stride_r, stride_c, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    r = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + col * rows + r, tl.load(x_ptr + r * stride_r + col * stride_c))


@triton.jit
def softmax_kernel(
    output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols, BLOCK_SIZE: tl.constexpr
):
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets
    row = tl.load(input_ptrs, mask=col_offsets < n_cols, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    softmax_output = numerator / tl.sum(numerator, axis=0)
    output_ptrs = output_ptr + row_idx * output_row_stride + col_offsets
    tl.store(output_ptrs, softmax_output, mask=col_offsets < n_cols)


def line_of(kernel, text: str) -> int:
    """The file line of the first line of ``kernel``'s source that contains ``text``."""
    import inspect

    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def main() -> None:
    """Run the three kernels and check every result against float64 NumPy."""
    rng = np.random.default_rng(14)
    x = rng.standard_normal(SMOOTH_N).astype(np.float32)
    padded = np.r_[0.0, x.astype(np.float64), 0.0]
    smooth[(SMOOTH_N // SMOOTH_BLOCK,)](x, x, SMOOTH_N, BLOCK=SMOOTH_BLOCK)
    # one batched pass: every program's loads ran before any program's stores
    np.testing.assert_allclose(x, (padded[:-2] + padded[1:-1] + padded[2:]) / 3.0, rtol=1e-5, atol=1e-6)

    m = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    out = np.zeros((COLS, ROWS), np.float32)
    grid = (COLS, ROWS // COLUMN_BLOCK)
    gather_columns_kernel[grid](m, out, ROWS, COLS, 1, BLOCK=COLUMN_BLOCK)
    np.testing.assert_array_equal(out, m.T)

    s = rng.standard_normal((SOFTMAX_ROWS, SOFTMAX_COLS)).astype(np.float32)
    got = np.zeros_like(s)
    block = triton.next_power_of_2(SOFTMAX_COLS)
    softmax_kernel[(SOFTMAX_ROWS,)](got, s, SOFTMAX_COLS, SOFTMAX_COLS, SOFTMAX_COLS, BLOCK_SIZE=block)
    e = np.exp(s.astype(np.float64) - s.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    print("results match the float64 references")


if __name__ == "__main__":
    main()
