"""``torch.gather`` along dimension 1 as a kernel library writes it: through an ``as_strided`` view.

The input is handed to the kernel as ``inp.as_strided(index.shape, (inp.stride(0), 0))``, a view with
stride 0 along the gathered dimension, and the kernel adds ``index * inp.stride(1)`` itself: a
correct op whose addresses leave the view and stay inside the input's storage.
"""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl


@triton.jit
def gather_kernel(inp_ptr, index_ptr, out_ptr, n_cols, stride_row, stride_dim, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    idx = tl.load(index_ptr + row * n_cols + cols, mask=mask, other=0)
    x = tl.load(inp_ptr + row * stride_row + idx * stride_dim, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, x, mask=mask)


GATHER_LINE = gather_kernel.fn.__code__.co_firstlineno + 6


def gather_dim1(inp: torch.Tensor, index: torch.Tensor, launch: Any = gather_kernel) -> torch.Tensor:
    """``torch.gather(inp, 1, index)``; ``launch`` is the kernel (or a tilescope launcher of it)."""
    inp_strided = inp.as_strided(index.shape, (inp.stride(0), 0))
    out = torch.empty(index.shape, dtype=inp.dtype)
    launch[(index.shape[0],)](inp_strided, index, out, index.shape[1], inp.stride(0), inp.stride(1),
                              BLOCK=triton.next_power_of_2(index.shape[1]))  # fmt: skip
    return out


def inputs(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A (512, 300) input and a (512, 64) index into its columns."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(512, 300, generator=gen), torch.randint(0, 300, (512, 64), generator=gen)
