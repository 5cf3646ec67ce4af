"""Factored address proofs agree with the brute-force per-lane check (never prove a bad access)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

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
