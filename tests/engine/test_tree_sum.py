"""The C reduction tree of fp32 sums (engine/_tree_sum.c) gives the NumPy path's bits: its fold
against NumPy's on any order of bits (NaNs of any payload counting as equal), and ``tl.sum``'s
ordered sum with and without it on blocks of several shapes, layouts and per-thread orders, bit
for bit (a sum that comes out NaN is the NumPy path's)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilescope.engine import clib, layout, tree_sum
from tilescope.engine.dtypes import FP32

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # infinities and NaNs on purpose
# built but failing its first-use check is a failure here, not a skip: the engine would quietly lose it
needs_kernel = pytest.mark.skipif(
    clib.built(tree_sum._MODULE) is None, reason="the C kernel was not built here"
)


@needs_kernel
def test_the_built_kernel_passes_its_first_use_check():
    assert tree_sum._library() is not None


FINITE = [0.0, -0.0, 1e-42, 3e38, -3e38]  # (big ones overflow to infinities of either sign)


def _values(rng: np.random.Generator, shape: tuple[int, ...], specials: list = FINITE) -> np.ndarray:
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-40, 40, shape))).astype(np.float32)
    if x.size == 0:
        return x
    special = np.array(specials, np.float32)
    x.flat[rng.integers(0, x.size, x.size // 50 + 1)] = rng.choice(special, x.size // 50 + 1)
    return x


@needs_kernel
@settings(max_examples=100, deadline=None)
@given(nbits=st.integers(0, 11), rows=st.integers(0, 5), seed=st.integers(0, 2**16))
def test_the_c_fold_gives_the_numpy_folds_bits(nbits, rows, seed):
    rng = np.random.default_rng(seed)
    bits = tuple(int(b) for b in rng.permutation(nbits))
    x = _values(rng, (rows, 1 << nbits), [*FINITE, np.inf, -np.inf, np.nan])
    lib = tree_sum._library()
    assert clib.same_bits(tree_sum._compiled_fold(lib, x, bits), tree_sum.numpy_fold(x, bits))
    summed = tree_sum.tree_sum(x, bits)
    if summed is not None:  # (None: a NaN came out, which the NumPy path gives instead)
        assert clib.same_bits(summed, tree_sum.numpy_fold(x, bits))
    else:
        assert np.isnan(tree_sum.numpy_fold(x, bits)).any()


BLOCKS = [((1024,), 0), ((4, 256), 1), ((16, 32), 1), ((32, 8), 0), ((2,), 0)]


@needs_kernel
@pytest.mark.parametrize("per_thread", ["tree", "linear"])
@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize(("block", "axis"), BLOCKS)
@pytest.mark.parametrize("nan", [False, True])
def test_ordered_sums_give_the_same_bits_with_and_without_the_c_kernel(
    per_thread, num_warps, block, axis, nan, monkeypatch
):
    numerics = SimpleNamespace(num_warps=num_warps, per_thread=per_thread)
    x = _values(
        np.random.default_rng(num_warps), (3, *block), [*FINITE, np.inf, -np.inf, np.nan][: 8 if nan else 5]
    )
    with_c = layout.ordered_sum(x, axis, FP32, numerics)
    monkeypatch.setattr(tree_sum, "_library", lambda: None)
    without = layout.ordered_sum(x, axis, FP32, numerics)
    # NaN signs and payloads included: a NaN that comes out is the NumPy path's
    assert with_c is not None and np.array_equal(with_c.view(np.uint32), without.view(np.uint32))
