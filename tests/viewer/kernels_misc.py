"""Kernels with the other shapes of access the viewer must draw: gathers, atomics, 3-D tensors,
tensor descriptors, strided views."""

import triton
import triton.language as tl


@triton.jit
def gather_kernel(x_ptr, idx_ptr, out_ptr, BLOCK: tl.constexpr):
    """``out = x[idx]``: the gather's addresses depend on data (listed lanes in the trace)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + tl.load(idx_ptr + offs)))


@triton.jit
def histogram_kernel(x_ptr, bins_ptr, n, BLOCK: tl.constexpr):
    """Atomic adds from every program into a few bins."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(bins_ptr + x, 1, mask=offs < n)


@triton.jit
def batched_scale_kernel(x_ptr, out_ptr, stride_b, stride_m, M: tl.constexpr, N: tl.constexpr):
    """One program per (batch, row block) of a 3-D tensor."""
    b = tl.program_id(0)
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    ptrs = b * stride_b + rows[:, None] * stride_m + cols[None, :]
    tl.store(out_ptr + ptrs, tl.load(x_ptr + ptrs) * 2)


@triton.jit
def descriptor_copy_kernel(src_ptr, dst_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Copy through tensor descriptors (block coordinates, no pointer arithmetic)."""
    src = tl.make_tensor_descriptor(src_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    dst = tl.make_tensor_descriptor(dst_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    m = tl.program_id(0) * BLOCK_M
    n = tl.program_id(1) * BLOCK_N
    dst.store([m, n], src.load([m, n]))


@triton.jit
def column_kernel(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    """Read a column of a transposed view (stride between rows, not columns)."""
    offs = tl.arange(0, BLOCK)
    col = tl.program_id(0)
    tl.store(out_ptr + col * BLOCK + offs, tl.load(x_ptr + col + offs * stride))


@triton.jit
def scale_in_place_kernel(x_ptr, n, BLOCK: tl.constexpr):
    """``x *= 2`` in place: one tensor, read at one line and written at another."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x * 2, mask=offs < n)
