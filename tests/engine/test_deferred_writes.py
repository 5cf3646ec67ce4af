"""A store of a strided box waits until its attempt commits (no snapshot of the old contents); every
access that may overlap it first applies it. Kernels that read back what they wrote, mask their
stores, follow a store with an atomic, are abandoned and replanned after a store, fail after a store,
or write one box from several programs and batches give the bits an immediate write gives, and a
rolled-back pending write never touched memory."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

import tilescope
from tilescope.engine import access, affine
from tilescope.engine.memory import Access, AddressTable, Storage


@triton.jit
def write_then_read(x_ptr, out_ptr, again_ptr, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)
    src = offs + SHIFT
    back = tl.load(out_ptr + src, mask=mask & (src >= 0) & (src < n), other=-1.0)
    tl.store(again_ptr + offs, back + 1.0, mask=mask)


@pytest.mark.parametrize("mode", ["batched", "serial"])
@pytest.mark.parametrize("shift", [0, 1, -1])
@pytest.mark.parametrize("n", [64, 61])
def test_a_load_sees_the_stores_before_it(mode, shift, n):
    x = torch.randn(n)
    out, again = torch.zeros(n), torch.zeros(n)
    tilescope.trace(write_then_read, mode=mode)[(4,)](x, out, again, n, SHIFT=shift, BLOCK=16)
    assert torch.equal(out, x * 2)
    idx = torch.arange(n)
    src = idx + shift
    valid = (src >= 0) & (src < n)
    # one batch stores every program's block before any loads; serial programs see earlier ones only
    stored = valid if mode == "batched" else valid & (src // 16 <= idx // 16)
    expected = torch.where(stored, (x * 2)[src.clamp(0, n - 1)] + 1, torch.where(valid, 1.0, 0.0))
    assert torch.equal(again, expected)


@triton.jit
def store_then_branch(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x)
    if pid % 3 == 0:  # programs disagree: the batch is abandoned after its store, and replanned
        tl.store(out_ptr + offs, x * 2.0)


def test_an_abandoned_attempt_after_a_store_leaves_no_trace():
    x = torch.randn(9, 8)
    out = torch.full_like(x, float("nan"))
    tilescope.trace(store_then_branch)[(9,)](x, out, BLOCK=8)
    expected = x.clone()
    expected[::3] *= 2
    assert torch.equal(out, expected)


@triton.jit
def store_then_fault(x_ptr, out_ptr, bad_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))
    tl.store(out_ptr + offs, tl.load(bad_ptr + offs))  # past the end of bad


def test_a_failing_launch_after_a_store_leaves_memory_untouched():
    x, out, bad = torch.randn(64), torch.randn(64), torch.randn(40)
    before = out.clone()
    with pytest.raises(tilescope.OutOfBoundsError):
        tilescope.trace(store_then_fault)[(4,)](x, out, bad, BLOCK=16)
    assert torch.equal(out, before)


@triton.jit
def store_then_atomic(out_ptr, old_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    pid = tl.program_id(0)
    tl.store(out_ptr + pid * BLOCK + offs, offs.to(tl.float32), mask=pid == 0)
    old = tl.atomic_add(out_ptr + offs, 1.0)
    tl.store(old_ptr + pid * BLOCK + offs, old)


def test_an_atomic_sees_the_store_before_it():
    programs, block = 3, 8
    out = torch.full((programs * block,), -5.0)
    old = torch.zeros(programs * block)
    tilescope.trace(store_then_atomic)[(programs,)](out, old, BLOCK=block)
    base = torch.arange(block, dtype=torch.float32)
    assert torch.equal(out[:block], base + programs)
    assert torch.equal(out[block:], torch.full((programs * block - block,), -5.0))
    assert torch.equal(old.view(programs, block), base + torch.arange(programs)[:, None])


@triton.jit
def everyone_writes_one_box(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    pid = tl.program_id(0)
    tl.store(out_ptr + offs, (offs + pid * 100).to(tl.float32))
    tl.store(out_ptr + BLOCK + offs, (offs - pid).to(tl.float32), mask=offs < pid)


@pytest.mark.parametrize("options", [{}, {"batch_size": 2}, {"batch_size": 3}])
def test_programs_and_batches_writing_one_box_write_it_in_program_order(options):
    block = 8
    out, serial = torch.zeros(2 * block), torch.zeros(2 * block)
    tilescope.trace(everyone_writes_one_box, **options)[(7,)](out, BLOCK=block)
    tilescope.trace(everyone_writes_one_box, mode="serial")[(7,)](serial, BLOCK=block)
    assert torch.equal(out, serial)
    assert torch.equal(out[:block], torch.arange(block) + 600.0)  # the last program's
    assert torch.equal(out[block:], torch.tensor([-6.0, -5, -4, -3, -2, -1, 0, 0]))  # 6, 6, 6, 5, ...


# ---------------------------------------------------------------- the address table itself


def _box(
    n: int, offset: int, size: int, mask: np.ndarray | None = None
) -> tuple[Storage, np.ndarray, Access]:
    values = np.arange(n, dtype=np.float32)
    buf = values.view(np.uint8)
    storage = Storage(buf.ctypes.data, buf.nbytes, buf)
    return storage, values, _access(storage, offset, size, mask)


def _access(storage: Storage, offset: int, size: int, mask: np.ndarray | None = None) -> Access:
    addr = affine.Affine(np.array([storage.base + 4 * offset]), (np.arange(size) * 4)[None])
    box = access.strided_box(addr, storage, 4, (1, size))
    assert box is not None
    ok = np.broadcast_to(True, (1, size)) if mask is None else mask
    return Access(ok, ~ok, np.zeros_like(ok), [(storage, ok, None)], None, box, whole=mask is None)


def test_a_pending_write_is_applied_before_an_overlapping_read_and_rolled_back():
    storage, values, write = _box(32, 4, 8)
    table = AddressTable()
    mark = table.mark()
    table.scatter(write, np.full((1, 8), 100.0, np.float32), np.float32)
    assert values[4] == 4.0  # pending: memory untouched
    disjoint = table.gather(_access(storage, 12, 8), np.float32, None)
    assert values[4] == 4.0 and np.array_equal(disjoint[0], np.arange(12, 20))
    overlapping = table.gather(_access(storage, 10, 4), np.float32, None)
    assert np.array_equal(overlapping[0], [100, 100, 12, 13])
    table.rollback(mark)
    np.testing.assert_array_equal(values, np.arange(32))


def test_masked_pending_writes_keep_their_order_and_only_their_lanes():
    storage, values, _ = _box(32, 0, 8)
    lanes = np.array([[True, False] * 4])
    table = AddressTable()
    mark = table.mark()
    table.scatter(_access(storage, 0, 8, lanes), np.full((1, 8), 7.0, np.float32), np.float32)
    table.scatter(_access(storage, 2, 8, ~lanes), np.full((1, 8), 9.0, np.float32), np.float32)
    # an index write (an atomic's path) into the first box applies both pending writes first
    table.write_elements(storage, np.float32, np.array([1]), np.array([-1.0], np.float32))
    expected = np.arange(32, dtype=np.float32)
    expected[[0, 2, 4, 6]] = 7.0
    expected[[3, 5, 7, 9]] = 9.0
    expected[1] = -1.0
    np.testing.assert_array_equal(values, expected)
    table.rollback(mark)
    np.testing.assert_array_equal(values, np.arange(32))
    mark = table.mark()
    table.scatter(_access(storage, 0, 8, lanes), np.full((1, 8), 7.0, np.float32), np.float32)
    table.scatter(_access(storage, 2, 8, ~lanes), np.full((1, 8), 9.0, np.float32), np.float32)
    table.commit(mark)
    expected[1] = 1.0
    np.testing.assert_array_equal(values, expected)


def test_an_outer_mark_rolls_back_writes_committed_inside_it():
    _, values, write = _box(16, 0, 8)
    table = AddressTable()
    outer = table.mark()
    table.holds += 1  # as a launch of several schedules does
    inner = table.mark()
    table.scatter(write, np.full((1, 8), 3.0, np.float32), np.float32)
    table.commit(inner)
    assert np.all(values[:8] == 3.0)
    table.rollback(outer)
    table.holds -= 1
    np.testing.assert_array_equal(values, np.arange(16))
