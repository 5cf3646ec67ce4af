"""Fused row softmax, after Triton's second tutorial: one program per row, the row held in registers.

``softmax(x)`` runs it on a GPU, or on the CPU under tilescope (``tilescope.trace``,
``tilescope run``). ``tilescope demo`` breaks its mask by one element and lets the sanitizer find it.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    """Softmax of row ``program_id(0)``; ``BLOCK_SIZE`` is the next power of two above ``n_cols``."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)  # subtract the row's maximum so that exp cannot overflow
    numerator = tl.exp(x)
    denominator = tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, numerator / denominator, mask=mask)


def softmax(x, kernel=softmax_kernel):
    """Row softmax of a 2-D torch tensor (or NumPy array) by ``kernel``, one program per row."""
    import torch

    x = torch.as_tensor(x)
    out = torch.empty_like(x)
    n_rows, n_cols = x.shape
    kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), n_cols, BLOCK_SIZE=triton.next_power_of_2(n_cols))
    return out
