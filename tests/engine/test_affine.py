"""Factored address proofs agree with the brute-force per-lane check (never prove a bad access)."""

from __future__ import annotations

import numpy as np
import pytest
import triton
import triton.language as tl
from hypothesis import given, settings
from hypothesis import strategies as st

import tilescope
from tilescope.engine import affine


def _brute(addr: affine.Affine, mask: affine.Predicate | None, lo: int, hi: int, size: int) -> bool:
    full = addr.materialize(np.int64)
    enabled = (
        np.ones(full.shape, bool)
        if mask is None
        else np.broadcast_to(mask.materialize(full.shape[0]), full.shape)
    )
    ok = (full >= lo) & (full <= hi - size) & (full % size == 0)
    return bool(np.all(ok | ~enabled))


@settings(max_examples=400, deadline=None)
@given(
    programs=st.integers(1, 12),
    lanes=st.integers(1, 16),
    size=st.sampled_from([1, 2, 4, 8]),
    step=st.integers(-3, 40),
    extent=st.integers(0, 400),
    op=st.sampled_from(["<", "<=", ">", ">="]),
    bound=st.integers(-20, 200),
    masked=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_prove_never_accepts_a_bad_lane(programs, lanes, size, step, extent, op, bound, masked, seed):
    rng = np.random.default_rng(seed)
    scalar = (np.arange(programs) * step + rng.integers(-2, 3)) * size
    block = (rng.integers(-4, 30, lanes) * size)[None]
    addr = affine.Affine(scalar.astype(np.int64), block.astype(np.int64))
    mask = None
    if masked:
        offs = affine.Affine(np.arange(programs, dtype=np.int64) * step, rng.integers(-4, 30, lanes)[None])
        mask = affine.compare(op, offs, np.array([bound], dtype=np.int64))
        if rng.random() < 0.5:
            mask = mask.conjoin(rng.random((1, lanes)) < 0.8)
    proven = affine.prove(addr, mask, 0, extent, size)
    truth = _brute(addr, mask, 0, extent, size)
    assert not (proven and not truth)  # sound: never proves a bad access
    if not masked or (mask is not None and len(mask.terms) <= 1):
        assert proven == truth  # complete for the forms it handles


def test_materialize_matches_the_factored_form():
    a = affine.Affine(np.array([0, 10, 20]), np.array([[1, 2, 3]]))
    np.testing.assert_array_equal(a.materialize(np.int32), [[1, 2, 3], [11, 12, 13], [21, 22, 23]])
    p = affine.compare("<", a, np.array([12]))
    np.testing.assert_array_equal(p.materialize(3), [[1, 1, 1], [1, 0, 0], [0, 0, 0]])


@triton.jit
def _row_block_store(out_ptr, n_rows, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    col = tl.program_id(1)
    if row == 1:  # splits the batch: the group of row 1 has the same row id in every program
        offs = row * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + col * n_rows * BLOCK + offs, offs.to(tl.float32), mask=offs < n_rows * BLOCK)


def test_factored_product_of_two_batch_constants():
    """row * BLOCK where both are the same for every program of the batch (regression: used row * row)."""
    out = np.full((2, 3 * 32), -1.0, np.float32)
    tilescope.trace(_row_block_store)[(3, 2)](out, 3, BLOCK=32)
    want = np.full((2, 96), -1.0, np.float32)
    want[:, 32:64] = np.arange(32, 64)
    np.testing.assert_array_equal(out, want)
    # the sanitizer proves the same accesses in bounds (a wrong factor would land elsewhere)
    launcher = tilescope.trace(_row_block_store, clients="sanitizer")
    launcher[(3, 2)](np.zeros((2, 96), np.float32), 3, BLOCK=32)
    assert launcher.reports[0].findings == []
    launcher[(3, 2)](np.zeros((2, 40), np.float32), 3, BLOCK=32)  # column 1 writes past the 80 elements
    assert [f.kind for f in launcher.reports[0].findings] == ["out-of-bounds store"]


def test_a_per_program_offset_keeps_the_shared_block_and_its_facts():
    """ptr + k * BK keeps the block array (facts about it are derived once); the values are the sum."""
    block = np.arange(12, dtype=np.int64).reshape(1, 3, 4) * 4
    scalar = np.zeros(1, np.int64)
    assert affine.plus(block, scalar) is block and affine.plus(scalar, block) is block
    np.testing.assert_array_equal(affine.plus(block, np.ones(1, np.int64)), block + 1)
    assert affine.plus(np.zeros((1, 1, 1), np.int64), np.zeros(1, np.int64)).shape == (1, 1, 1)
    assert affine.plus(np.zeros(1, np.int64), np.zeros((1, 2), np.int64)).shape == (1, 2)
    calls = []
    derive = lambda b: calls.append(1) or int(b.max())  # noqa: E731
    assert affine.fact(block, "max", derive) == 44 and affine.fact(block, "max", derive) == 44
    assert len(calls) == 1 and not block.flags.writeable  # kept facts: the block is read-only
    copy = block.copy()  # equal values, another array: derived again
    assert affine.fact(copy, "max", derive) == 44 and len(calls) == 2
    # plus a constant: the sum's extremes and lane steps are the block's, shifted (not derived again)
    lanes = lambda b: (int(b.flat[0]), [16, 4])  # noqa: E731
    assert affine.fact(block, "extremes", lambda b: (int(b.min()), int(b.max()))) == (0, 44)
    assert affine.fact(block, ("lanes", (3, 4)), lanes) == (0, [16, 4])
    moved = affine.plus(block, np.array([8], np.int64))
    np.testing.assert_array_equal(moved, block + 8)
    never = lambda b: pytest.fail("derived again")  # noqa: E731
    assert affine.fact(moved, "extremes", never) == (8, 52)
    assert affine.fact(moved, ("lanes", (3, 4)), never) == (8, [16, 4])
    assert affine.fact(moved, "max", derive) == 52 and len(calls) == 3  # not one that shifts
    splat = np.broadcast_to(np.array([[[4]]], np.int64), block.shape)  # Triton's splat of a constant
    assert affine.fact(affine.plus(splat, block), "extremes", never) == (4, 48)
    varied = affine.plus(block, np.arange(4, dtype=np.int64)[None, None])  # not one number: derived
    assert affine.fact(varied, "extremes", lambda b: (int(b.min()), int(b.max()))) == (0, 47)
    huge = affine.plus(block, np.array([2**63 - 10], np.int64))  # would wrap: nothing carried over
    assert affine.fact(huge, "extremes", lambda b: "derived") == "derived"


@triton.jit
def _walk(x_ptr, out_ptr, n_steps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    ptrs = x_ptr + pid * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for _ in range(n_steps):  # the pointer advances by a constant: one block, facts derived once
        acc += tl.load(ptrs)
        ptrs += 2 * BLOCK
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


def test_a_loop_pointer_advanced_by_a_constant_is_proven_every_iteration():
    """The kept block facts never hide the iteration that walks past the end (both halves)."""
    x = np.arange(8 * 16, dtype=np.float32)
    out = np.zeros(32, np.float32)
    tilescope.trace(_walk)[(2,)](x, out, 4, BLOCK=16)
    want = [sum(x[p * 16 + k * 32 : p * 16 + k * 32 + 16] for k in range(4)) for p in range(2)]
    np.testing.assert_array_equal(out, np.concatenate(want))
    launcher = tilescope.trace(_walk, clients="sanitizer")
    launcher[(2,)](x, out, 4, BLOCK=16)
    assert launcher.reports[0].findings == []
    launcher[(2,)](x, out, 5, BLOCK=16)  # the fifth step reads past the 128 elements
    assert [f.kind for f in launcher.reports[0].findings] == ["out-of-bounds load"]
