"""A row softmax as the Triton tutorial writes it, grown a chunked path for wide rows, and the case
function a sweep calls per cell of its support matrix.

Rows up to ``MAX_FUSED`` columns are one block per program; wider rows loop over ``CHUNK``-column
chunks (an online max and sum, then a normalising pass). The planted bug: the normalising pass
stores its last chunk unmasked, as if every width were a multiple of ``CHUNK``. Only a wide row
whose width is not a multiple of ``CHUNK`` is affected: the last row writes past the end of the
output, earlier rows into the next row.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

MAX_FUSED = 4096
CHUNK = 1024


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr, CHUNKED: tl.constexpr):
    row = tl.program_id(0)
    in_row = in_ptr + row * in_row_stride
    out_row = out_ptr + row * out_row_stride
    if not CHUNKED:
        cols = tl.arange(0, BLOCK_SIZE)
        x = tl.load(in_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        y = num / tl.sum(num, axis=0)
        tl.store(out_row + cols, y.to(out_ptr.dtype.element_ty), mask=cols < n_cols)
    else:
        m = tl.full((), -float("inf"), tl.float32)
        s = tl.zeros((), tl.float32)
        for start in range(0, n_cols, BLOCK_SIZE):
            cols = start + tl.arange(0, BLOCK_SIZE)
            x = tl.load(in_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK_SIZE):
            cols = start + tl.arange(0, BLOCK_SIZE)
            x = tl.load(in_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
            y = tl.exp(x - m) / s
            tl.store(out_row + cols, y.to(out_ptr.dtype.element_ty))  # planted bug: no mask


def softmax(x: torch.Tensor, **launch: int) -> torch.Tensor:
    """Softmax over the last dimension of a 2-D tensor (``launch``: options such as ``num_warps``)."""
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    chunked = n_cols > MAX_FUSED
    block = CHUNK if chunked else triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), n_cols, BLOCK_SIZE=block, CHUNKED=chunked,
                              **launch)
    return out


#: (rtol, atol) per dtype: the kernel computes in float32 and rounds once to the output dtype (half an
#: ulp of its mantissa, plus float32's error over the row); outputs are probabilities, often tiny, so
#: the absolute part is far below them
TOLERANCE = {"float32": (1e-6, 1e-9), "float16": (2e-3, 1e-7), "bfloat16": (1.6e-2, 1e-7)}


def case(shape: tuple[int, int], dtype: str, config: dict | None = None) -> None:
    """One cell: softmax of random rows of ``shape`` in ``dtype`` (launched with ``config``'s options)
    against float64 torch."""
    rows, cols = shape
    generator = torch.Generator().manual_seed(rows * 100_003 + cols)
    x = (torch.randn(rows, cols, generator=generator, dtype=torch.float64) * 3).to(getattr(torch, dtype))
    got = softmax(x, **(config or {}))
    want = torch.softmax(x.double(), dim=-1)
    rtol, atol = TOLERANCE[dtype]
    np.testing.assert_allclose(got.double().numpy(), want.numpy(), rtol=rtol, atol=atol,
                               err_msg=f"softmax{tuple(shape)} in {dtype}")
