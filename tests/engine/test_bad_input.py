"""Bad input gets a clear message naming the kernel, the argument and the line; data survives."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

import tilescope


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def unmasked_copy(src_ptr, dst_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs))


def test_wrong_argument_count_names_kernel_and_parameters():
    with pytest.raises(
        tilescope.LaunchError, match=r"copy_kernel.*missing a required argument.*src_ptr, dst_ptr"
    ):
        tilescope.trace(copy_kernel)[(1,)](torch.ones(4), torch.ones(4), BLOCK=4)


def test_wrong_argument_type_names_the_argument():
    with pytest.raises(tilescope.LaunchError, match=r"argument `src_ptr`.*unsupported argument type list"):
        tilescope.trace(copy_kernel)[(1,)]([1.0, 2.0], torch.ones(4), 4, BLOCK=4)


def test_out_of_bounds_raises_with_element_and_leaves_memory_intact():
    src = torch.randn(100)
    dst = torch.randn(100)
    guard = torch.randn(64)
    before_dst, before_guard = dst.clone(), guard.clone()
    with pytest.raises(tilescope.OutOfBoundsError) as info:
        tilescope.trace(unmasked_copy)[(2,)](src, dst, BLOCK=64)
    text = str(info.value)
    assert "unmasked_copy" in text and "test_bad_input.py" in text
    assert "`src_ptr` (fp32[100])" in text and "src_ptr[100]" in text and "index 100 >= 100" in text
    assert "program (1, 0, 0)" in text
    assert torch.equal(guard, before_guard)
    assert torch.equal(dst, before_dst)  # the failing batch's in-bounds writes were rolled back


def test_offset_and_strided_views_are_read_through_their_strides():
    base = torch.randn(10, 40)
    src = base[2:7, ::3]  # offset and non-contiguous
    dst = torch.empty(src.numel())
    flat = src.contiguous().view(-1)
    tilescope.trace(copy_kernel)[(1,)](flat, dst, flat.numel(), BLOCK=128)
    assert torch.equal(dst, flat)


@triton.jit
def strided_read(
    src_ptr, dst_ptr, rows, cols, stride_r, stride_c, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr
):
    r = tl.arange(0, BLOCK_R)[:, None]
    c = tl.arange(0, BLOCK_C)[None, :]
    mask = (r < rows) & (c < cols)
    x = tl.load(src_ptr + r * stride_r + c * stride_c, mask=mask)
    tl.store(dst_ptr + r * cols + c, x, mask=mask)


def test_view_with_storage_offset_is_bounds_checked_against_the_view():
    base = torch.randn(8, 16)
    view = base[2:5, 3:11]
    out = torch.empty(3, 8)
    tilescope.trace(strided_read)[(1,)](view, out, 3, 8, *view.stride(), BLOCK_R=4, BLOCK_C=8)
    assert torch.equal(out, view)
    # one row too many is outside the view even though the storage continues: an error under
    # bounds="view"; by default ("warn") it reads the storage as the GPU does, a warning for the sanitizer
    out2 = torch.empty(4, 8)
    with pytest.raises(tilescope.OutOfBoundsError, match=r"view\[3, 0\]|row 3 >= 3"):
        tilescope.trace(strided_read, bounds="view")[(1,)](view, out2, 4, 8, *view.stride(), BLOCK_R=4,
                                                           BLOCK_C=8)  # fmt: skip
    tilescope.trace(strided_read)[(1,)](view, out2, 4, 8, *view.stride(), BLOCK_R=4, BLOCK_C=8)
    assert torch.equal(out2, base[2:6, 3:11])


def test_storage_bounds_opt_in_allows_reading_past_the_view():
    base = torch.randn(8, 16)
    view = base[2:5, 3:11]
    out = torch.empty(4, 8)
    tilescope.trace(strided_read, bounds="storage")[(1,)](
        view, out, 4, 8, *view.stride(), BLOCK_R=4, BLOCK_C=8
    )
    assert torch.equal(out, base[2:6, 3:11])


def test_zero_size_tensor_and_empty_grid():
    src, dst = torch.empty(0), torch.empty(0)
    tilescope.trace(copy_kernel)[(0,)](src, dst, 0, BLOCK=16)  # empty grid: nothing runs
    tilescope.trace(copy_kernel)[(1,)](src, dst, 0, BLOCK=16)  # every lane masked off: fine
    with pytest.raises(tilescope.OutOfBoundsError, match="0 lane|outside"):
        tilescope.trace(unmasked_copy)[(1,)](src, dst, BLOCK=16)


def test_grid_past_hardware_limits_is_refused():
    with pytest.raises(
        tilescope.LaunchError, match="grid dimension 1 is 70000, past the GPU's limit of 65535"
    ):
        tilescope.trace(copy_kernel)[(1, 70000)](torch.ones(4), torch.ones(4), 4, BLOCK=4)
    with pytest.raises(tilescope.LaunchError, match="1 to 3 dimensions"):
        tilescope.trace(copy_kernel)[(1, 1, 1, 1)](torch.ones(4), torch.ones(4), 4, BLOCK=4)


@triton.jit
def overflow_kernel(out_ptr, x):
    tl.store(out_ptr, x * 65536 * 65536 + 7)


def test_int32_overflow_in_user_arithmetic_wraps_like_the_gpu():
    out = torch.zeros(1, dtype=torch.int32)
    tilescope.trace(overflow_kernel)[(1,)](out, 3)
    assert out.item() == 7


@triton.jit
def asm_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(x_ptr + offs, y)


def test_unsupported_op_names_the_op_and_the_line():
    with pytest.raises(
        tilescope.UnsupportedOpError,
        match=r"asm_kernel` at .*test_bad_input.py:\d+: `tl.inline_asm_elementwise\(\"mov.b32 \$0, \$1\"\)` "
              r"is not supported by tilescope's engine; of inline PTX it runs only nanosleep",
    ):
        tilescope.trace(asm_kernel)[(1,)](torch.ones(16), BLOCK=16)


@triton.jit
def type_error_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, tl.dot(x, x))  # 1-D dot: a compile error in Triton


def test_language_errors_point_at_the_user_line_not_the_engine():
    with pytest.raises(tilescope.KernelError) as info:
        tilescope.trace(type_error_kernel)[(1,)](torch.ones(16), BLOCK=16)
    text = str(info.value)
    assert "type_error_kernel" in text and "tl.dot(x, x)" in text
    assert "site-packages" not in text.splitlines()[0] or "test_bad_input.py" in text


def test_numpy_arrays_work_like_tensors():
    src = np.random.default_rng(0).standard_normal(50).astype(np.float32)
    dst = np.zeros(50, dtype=np.float32)
    tilescope.trace(copy_kernel)[(1,)](src, dst, 50, BLOCK=64)
    np.testing.assert_array_equal(src, dst)


def test_process_and_tensors_survive_an_error_and_the_next_launch_works():
    src, dst = torch.randn(10), torch.zeros(10)
    with pytest.raises(tilescope.OutOfBoundsError):
        tilescope.trace(unmasked_copy)[(1,)](src, dst, BLOCK=16)
    tilescope.trace(copy_kernel)[(1,)](src, dst, 10, BLOCK=16)
    assert torch.equal(src, dst)
    # Triton's own language layer is restored: calling a jit function outside a kernel fails as usual
    with pytest.raises(RuntimeError, match="outside of the scope of a kernel"):
        copy_kernel(src, dst, 10, 16)
