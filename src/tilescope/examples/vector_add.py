"""Vector add, the first kernel of Triton's tutorials: ``out[i] = x[i] + y[i]`` in blocks of ``BLOCK``.

Run it as a script (``python -m tilescope.examples.vector_add``) on a GPU, or through tilescope on
the CPU: ``tilescope run -c tracer python -m ...`` or ``tilescope demo``.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    """Each program adds one block of ``BLOCK`` elements; the mask covers the ragged tail."""
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, block: int = 1024):
    """``x + y`` computed by :func:`add_kernel` (torch tensors of one shape and dtype)."""
    import torch

    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    return out


def main(n: int = 98_432, device: str = "cpu") -> float:
    """Add two random vectors of ``n`` elements; returns the largest error against float64."""
    import torch

    torch.manual_seed(0)
    x = torch.rand(n, device=device)
    y = torch.rand(n, device=device)
    out = add(x, y)
    error = (out.double() - (x.double() + y.double())).abs().max().item()
    print(f"vector add of {n} float32 elements: max |error| vs float64 = {error:.3g}")
    return error


if __name__ == "__main__":
    main()
