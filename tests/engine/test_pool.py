"""The launch's buffer pool: kept buffers are reused, zeroed where NumPy asks for zeros, bounded,
installed only inside a launch, and no launch's result depends on it."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

import tilescope
from tilescope.engine import pool

pytestmark = pytest.mark.skipif(pool._handler() is None, reason="engine/_pool.c was not built")

BIG = 1 << 21  # float32 elements: 8 MiB, above the pool's smallest kept buffer


def _handler_of(a: np.ndarray) -> str:
    return np._core.multiarray.get_handler_name(a)


def test_arrays_made_inside_come_from_the_pool_and_the_handler_is_restored():
    with pool.reusing():
        inside = np.ones(BIG, np.float32)
    outside = np.ones(BIG, np.float32)
    assert _handler_of(inside) == "tilescope_pool"
    assert _handler_of(outside) == np._core.multiarray.get_handler_name()
    with contextlib.suppress(RuntimeError), pool.reusing():
        raise RuntimeError
    assert _handler_of(np.ones(BIG, np.float32)) == _handler_of(outside)


def test_a_freed_buffer_is_reused_and_zeros_are_zeros():
    pool.release()
    with pool.reusing():
        a = np.full(BIG, 7.0, np.float32)
        address = a.ctypes.data
        del a
        assert pool.kept_bytes() >= BIG * 4
        b = np.zeros(BIG, np.float32)  # calloc from a kept, dirty buffer
        assert b.ctypes.data == address
        assert not b.any()
        assert pool.kept_bytes() == 0


def test_resizing_keeps_the_values():
    with pool.reusing():
        a = np.arange(BIG, dtype=np.float64)
        a.resize(3 * BIG, refcheck=False)  # realloc
    assert np.array_equal(a[:BIG], np.arange(BIG, dtype=np.float64)) and not a[BIG:].any()


def test_the_pool_keeps_at_most_its_limit():
    with pool.reusing():
        arrays = [np.empty(16 << 20, np.uint8) for _ in range(2 * pool.LIMIT // (16 << 20))]
        del arrays
    assert 0 < pool.kept_bytes() <= pool.LIMIT
    pool.release()
    assert pool.kept_bytes() == 0


@triton.jit
def _softmax(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * n_cols + offs, mask=offs < n_cols, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + offs, num / tl.sum(num, axis=0), mask=offs < n_cols)


def test_launch_results_do_not_depend_on_the_pool(monkeypatch):
    x = torch.randn(512, 1000)
    outs = []
    for reusing in (pool.reusing, contextlib.nullcontext, pool.reusing):
        monkeypatch.setattr(pool, "reusing", reusing)
        o = torch.full_like(x, float("nan"))
        tilescope.trace(_softmax)[(512,)](o, x, 1000, BLOCK=1024)
        outs.append(o.numpy().view(np.uint32).copy())
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[1], outs[2])
    assert np.allclose(outs[0].view(np.float32), torch.softmax(x.double(), 1).numpy(), atol=1e-6)
