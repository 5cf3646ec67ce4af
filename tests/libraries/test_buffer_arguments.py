"""Pointer arguments that are not tensors: objects with ``data_ptr()`` and ``dtype``, as libraries pass.

GPU Triton takes any object with a ``data_ptr()`` method and a ``dtype`` as a pointer argument.
Libraries use it for their own strided-buffer classes (a flat allocation viewed with a shape, strides
and an offset of their own) and Triton itself for ``triton.reinterpret``. tilescope resolves such an
object to the tensor that owns its memory, never to the raw address.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

import tilescope
from tilescope.engine.errors import LaunchError


class StridedBuffer:
    """A strided view of a flat buffer, with its own shape, strides and element offset (the wrapper a
    kernel library uses where a torch view cannot express the layout it needs)."""

    def __init__(self, base: torch.Tensor, shape, strides, offset: int = 0, dtype=None):
        self._base = base
        self.dtype = dtype or base.dtype
        self.shape = tuple(shape)
        self._strides = tuple(strides)
        self.offset = offset
        self.device = base.device

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def element_size(self) -> int:
        return self._base.element_size()

    def data_ptr(self) -> int:
        return self._base.data_ptr() + self.offset * self.element_size()


@triton.jit
def copy_2d(src_ptr, dst_ptr, rows, cols, s_row, s_col, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    c = tl.arange(0, BLOCK_C)[None, :]
    mask = (r < rows) & (c < cols)
    x = tl.load(src_ptr + r * s_row + c * s_col, mask=mask)
    tl.store(dst_ptr + r * cols + c, x * 2.0, mask=mask)


def test_a_strided_buffer_object_is_read_through_the_tensor_it_wraps():
    flat = torch.randn(40 * 30 + 7)
    # a transposed (30, 40) view starting 7 elements in: element [i, j] is flat[7 + j * 30 + i]
    buf = StridedBuffer(flat, (30, 40), (1, 30), offset=7)
    out = torch.empty(30, 40)
    tilescope.trace(copy_2d)[(triton.cdiv(30, 16),)](buf, out, 30, 40, *buf.stride(), BLOCK_R=16, BLOCK_C=64)
    expected = flat[7:].reshape(40, 30).t().double() * 2.0
    torch.testing.assert_close(out.double(), expected)


def test_a_strided_buffer_is_bounds_checked_against_its_own_shape():
    flat = torch.randn(64 * 8)
    buf = StridedBuffer(flat, (8, 32), (64, 1))  # the left half of each 64-wide row
    out = torch.empty(8, 40)
    # 40 columns of a 32-column view: the access leaves the buffer's view (inside the flat memory)
    launcher = tilescope.trace(copy_2d, clients="sanitizer", bounds="view")
    launcher[(1,)](buf, out, 8, 40, 64, 1, BLOCK_R=8, BLOCK_C=64)
    (report,) = launcher.reports
    (finding,) = report.findings
    assert finding.details["argument"] == "src_ptr"
    assert finding.line == copy_2d.fn.__code__.co_firstlineno + 5  # the tl.load
    # bounds are the view's extent: the first element past it is one past the last row's end
    assert finding.details["element_text"] == "src_ptr[7, 32]"


@triton.jit
def fp8_to_fp32(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(tl.float32), mask=mask)


def test_triton_reinterpret_gives_the_wrapper_dtype():
    raw = torch.randint(0, 120, (1000,), dtype=torch.uint8)  # finite float8_e5m2 bit patterns
    out = torch.empty(1000)
    tilescope.trace(fp8_to_fp32)[(4,)](triton.reinterpret(raw, tl.float8e5), out, 1000, BLOCK=256)
    torch.testing.assert_close(out, raw.view(torch.float8_e5m2).float(), rtol=0, atol=0)


class NumpyBacked:
    """A host buffer class over a NumPy array, exposing Triton's two names and nothing else."""

    def __init__(self, array: np.ndarray):
        self.array = array
        self.dtype = array.dtype

    def data_ptr(self) -> int:
        return self.array.__array_interface__["data"][0]


def test_a_numpy_backed_buffer_without_shape_spans_its_memory():
    x = np.random.default_rng(1).standard_normal(500).astype(np.float32) + 3.0
    out = np.zeros(500, dtype=np.float32)
    tilescope.trace(fp8_to_fp32)[(2,)](NumpyBacked(x), NumpyBacked(out), 500, BLOCK=256)
    np.testing.assert_array_equal(out, x)


class RawPointer:
    """A buffer known only by its address (memory from a C allocator), as some bindings pass."""

    def __init__(self, address: int, dtype):
        self.address, self.dtype = address, dtype

    def data_ptr(self) -> int:
        return self.address


def test_memory_no_tensor_owns_is_refused_naming_kernel_and_argument():
    memory = ctypes.create_string_buffer(4096)
    out = torch.empty(16)
    with pytest.raises(LaunchError, match=r"kernel `fp8_to_fp32`.*argument `x_ptr`: a RawPointer whose "
                                          r"data_ptr\(\) 0x[0-9a-f]+ is not inside any torch tensor"):
        tilescope.trace(fp8_to_fp32)[(1,)](RawPointer(ctypes.addressof(memory), torch.float32), out, 16,
                                           BLOCK=16)  # fmt: skip
    with pytest.raises(LaunchError, match=r"argument `x_ptr`: a RawPointer has data_ptr\(\) but no dtype"):
        bare = RawPointer(0, None)
        del bare.dtype
        tilescope.trace(fp8_to_fp32)[(1,)](bare, out, 16, BLOCK=16)


def test_a_buffer_reaching_past_its_memory_is_refused():
    flat = torch.randn(100)
    with pytest.raises(LaunchError, match=r"argument `src_ptr`: a StridedBuffer of shape \[10, 20\].*reaches "
                                          r"past the memory"):
        tilescope.trace(copy_2d)[(1,)](StridedBuffer(flat, (10, 20), (20, 1)), torch.empty(10, 20), 10, 20,
                                       20, 1, BLOCK_R=16, BLOCK_C=32)  # fmt: skip
