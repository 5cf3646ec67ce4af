"""Cases that end badly for one cell of their matrix: a native crash, a kernel that never stops, a
native deadlock, and one that needs more memory than its limit.

``row_sums`` walks each row with a ``while`` loop whose step the wrapper computes by integer
division; a row narrower than the number of splits gets a step of 0 and the loop never ends, on a
GPU as on the engine.
"""

from __future__ import annotations

import ctypes

import numpy as np
import triton
import triton.language as tl


@triton.jit
def row_sums_kernel(x_ptr, out_ptr, n_cols, step, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    start = 0
    while start < n_cols:
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n_cols + cols, mask=(cols < n_cols) & (cols < start + step), other=0.0)
        start += step
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def row_sums(x: np.ndarray, splits: int) -> np.ndarray:
    """Row sums of a 2-D float32 array, each row walked in ``splits`` steps."""
    rows, cols = x.shape
    step = cols // splits  # the bug: 0 when cols < splits
    out = np.zeros(rows, np.float32)
    row_sums_kernel[(rows,)](x, out, cols, step, BLOCK=triton.next_power_of_2(max(step, 1)))
    return out


def sums_case(shape: tuple[int, int], splits: int) -> None:
    """One cell: row sums of random data against float64 NumPy."""
    x = np.random.default_rng(shape[0] * 1009 + shape[1]).standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(row_sums(x, splits), x.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)


def native_case(shape: tuple[int, int]) -> None:
    """One cell of a host library whose native code dereferences a null pointer for empty rows."""
    if shape[1] == 0:
        ctypes.string_at(0)  # a segfault, as a buggy C extension gives
    sums_case(shape, 1)


def locked_case(shape: tuple[int, int]) -> None:
    """One cell of a host library whose native code takes a lock it already holds for empty rows (no
    signal reaches Python while it waits)."""
    if shape[1] == 0:
        libc = ctypes.CDLL(None)
        mutex = ctypes.create_string_buffer(64)  # zeroed: a default mutex on glibc
        libc.pthread_mutex_lock(mutex)
        libc.pthread_mutex_lock(mutex)
    sums_case(shape, 1)


def allocating_case(shape: tuple[int, int]) -> None:
    """One cell that allocates a float64 array of ``shape`` before summing it."""
    x = np.ones(shape)
    assert x.sum() == x.size
