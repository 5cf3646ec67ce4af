"""A read-only NumPy array as an output: an error at the store that writes it, naming the argument.

NumPy hands out read-only arrays in ordinary code (``np.frombuffer`` over ``bytes``, ``np.broadcast_to``,
memory-mapped files opened read-only); a kernel may read them freely. Writing one is refused the way
NumPy refuses it, at the kernel's store or atomic, not as an error without a location.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import triton
import triton.language as tl

import tilescope


@triton.jit
def saxpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = alpha * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def histogram(x_ptr, bins_ptr, n, n_bins, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    b = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(bins_ptr + b, 1, mask=mask & (b < n_bins))


def _line(kernel, text: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_read_only_inputs_are_read():
    rng = np.random.default_rng(0)
    x = np.frombuffer(rng.standard_normal(1000).astype(np.float32).tobytes(), dtype=np.float32)
    y = rng.standard_normal(1000).astype(np.float32)
    y.setflags(write=False)
    assert not x.flags.writeable and not y.flags.writeable
    out = np.empty(1000, dtype=np.float32)
    tilescope.trace(saxpy)[(4,)](x, y, out, 1000, 3.0, BLOCK=256)
    np.testing.assert_allclose(out, 3.0 * x.astype(np.float64) + y, rtol=1e-6, atol=1e-6)


def _read_only_view() -> np.ndarray:
    view = np.zeros(1000, np.float32).view()
    view.setflags(write=False)  # its base stays writable: the view's own flag counts
    return view


@pytest.mark.parametrize("make", [
    lambda: np.frombuffer(bytes(4000), dtype=np.float32),
    lambda: np.broadcast_to(np.zeros(1, np.float32), (1000,)),
    _read_only_view,
], ids=["frombuffer", "broadcast_to", "read_only_view"])  # fmt: skip
@pytest.mark.parametrize("clients", [None, "sanitizer"])  # the sanitizer alone computes no outputs
def test_a_read_only_output_is_an_error_at_the_store(make, clients):
    out = make()
    x = np.ones(1000, np.float32)
    message = r"kernel `saxpy` at .*:(\d+): a store writes to `out_ptr`, a read-only NumPy array"
    with pytest.raises(tilescope.KernelError, match=message) as info:
        tilescope.trace(saxpy, clients=clients)[(4,)](x, x, out, 1000, 3.0, BLOCK=256)
    assert info.value.site.line == _line(saxpy, "tl.store")
    assert "tl.store(out_ptr + offs, y, mask=mask)" in str(info.value)


def test_a_read_only_atomic_target_is_an_error_at_the_atomic():
    x = np.random.default_rng(1).integers(0, 16, 500).astype(np.int32)
    bins = np.zeros(16, np.int32)
    tilescope.trace(histogram)[(2,)](x, bins, 500, 16, BLOCK=256)
    np.testing.assert_array_equal(bins, np.bincount(x, minlength=16))
    bins.setflags(write=False)
    with pytest.raises(tilescope.KernelError, match=r"an atomic writes to `bins_ptr`, a read-only NumPy"):
        tilescope.trace(histogram)[(2,)](x, bins, 500, 16, BLOCK=256)
    np.testing.assert_array_equal(bins, np.bincount(x, minlength=16))  # untouched
