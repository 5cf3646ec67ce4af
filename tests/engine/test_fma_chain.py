"""The fp32 ``ieee`` dot's FMA chain: the C kernel, torch's addcmul and NumPy give the same bits."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.c_clones import default_clone as build_default_clone
from tests.engine.test_numerics import _double_rounding_cases
from tilescope.engine import fma_chain as fc

#: values that break a chain done wrong: infinities, NaN, signed zeros, subnormals, extremes
_SPECIAL = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-45, -3e-39, 1e-38, 3.4e38, -1.0], np.float32)


def _operand(rng: np.random.Generator, shape: tuple[int, ...], special: float) -> np.ndarray:
    """float32 normals over a wide exponent range, a ``special`` fraction of them from _SPECIAL."""
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-70, 40, shape))).astype(np.float32)
    pick = rng.random(shape) < special
    x[pick] = rng.choice(_SPECIAL, np.count_nonzero(pick))
    return x


def _compiled(a, b, acc):
    lib = fc._load()
    if lib is None:
        pytest.skip("the C kernel was not built (no C compiler at install)")
    return fc._compiled_chain(lib, a, b, acc)


def _torch(a, b, acc):
    if fc.nx.hardware_fma() is None:
        pytest.skip("no torch whose addcmul rounds once here")
    return fc.torch_chain(a, b, acc)


def _assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == np.float32
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


@pytest.mark.parametrize("chain", [_compiled, _torch], ids=["compiled", "torch"])
@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    programs=st.integers(1, 4),
    broadcast=st.sampled_from(["none", "a", "b", "acc"]),
    m=st.integers(1, 20),
    n=st.integers(1, 40),
    k=st.integers(0, 24),
    special=st.sampled_from([0.0, 0.05, 0.3]),
    transposed=st.booleans(),
)
def test_chain_gives_the_numpy_paths_bits(chain, seed, programs, broadcast, m, n, k, special, transposed):
    """Any shape (tails of the kernel's 6 x 16 tile, k = 0), a program axis of 1 against several on
    either operand or the accumulator, a transposed (non-contiguous) operand, and values that
    overflow, underflow to subnormals, or are inf, NaN or signed zeros: the same bits as NumPy's
    exact chain (NaN's payload aside)."""
    rng = np.random.default_rng(seed)
    a = _operand(rng, (1 if broadcast == "a" else programs, m, k), special)
    b = _operand(rng, (1 if broadcast == "b" else programs, n, k), special).transpose(0, 2, 1)
    if not transposed:
        b = np.ascontiguousarray(b)
    acc = _operand(rng, (1 if broadcast == "acc" else programs, m, n), special)
    with np.errstate(all="ignore"):
        _assert_same_bits(chain(a, b, acc), fc.numpy_chain(a, b, acc))


@pytest.mark.parametrize("chain", [_compiled, _torch], ids=["compiled", "torch"])
def test_chain_rounds_each_step_once(chain):
    """One-step chains built to double-round (the exact sum a hair off a float32 halfway point) and
    products whose rounding error is all that is left: each step is one fused rounding."""
    a, b, c = _double_rounding_cases(np.random.default_rng(5), 40_000)
    cases = [(a[:, None, None], b[:, None, None], c[:, None, None])]
    x = np.random.default_rng(6).uniform(1, 2, (2, 9, 1)).astype(np.float32)
    y = x.transpose(0, 2, 1) * np.float32(1.5)
    cases.append((x, y, -(x.astype(np.float64) * y).astype(np.float32)))
    for a, b, acc in cases:
        want = fc.numpy_chain(a, b, acc)
        _assert_same_bits(chain(a, b, acc), want)
    assert np.count_nonzero(want) > want.size // 2  # the rounding errors survive: a fused step


@pytest.fixture(scope="module")
def default_clone(tmp_path_factory):
    """The C kernel built as its portable default clone alone (fmaf from libm, no vector FMA)."""
    out = tmp_path_factory.mktemp("fma_chain") / "default.so"
    return fc.library(build_default_clone(Path(fc.__file__).with_name("_fma_chain.c"), out))


def test_the_default_clone_gives_the_same_bits(default_clone):
    """On a CPU without FMA the kernel's default clone (libm's fmaf) gives the NumPy chain's bits on
    the first-use check's cases and on one-step chains built to double-round."""
    a, b, c = _double_rounding_cases(np.random.default_rng(7), 20_000)
    cases = [*fc._check_cases(), (a[:, None, None], b[:, None, None], c[:, None, None])]
    with np.errstate(all="ignore"):
        for a, b, acc in cases:
            _assert_same_bits(fc._compiled_chain(default_clone, a, b, acc), fc.numpy_chain(a, b, acc))


def test_the_built_kernel_passes_its_check():
    """Where the install built the kernel, it passes the check at first use (so dots run on it)."""
    if fc._load() is None:
        pytest.skip("the C kernel was not built (no C compiler at install)")
    assert fc.compiled_chain() is not None


@pytest.mark.parametrize(
    "wrong",
    [
        lambda a, b, acc: np.float32(a @ b + acc),  # products rounded before the sum (BLAS)
        lambda a, b, acc: np.where(np.abs(good := fc.numpy_chain(a, b, acc)) < 2**-126, 0, good),  # flushed
        lambda a, b, acc: fc.numpy_chain(a[..., ::-1], b[..., ::-1, :], acc),  # k in reverse order
    ],
    ids=["unfused", "flush-to-zero", "reversed"],
)
def test_a_kernel_that_disagrees_is_not_used(wrong, monkeypatch):
    """The check at first use turns down a chain that fuses nothing, flushes subnormals or runs k
    backwards: the engine falls back to torch or NumPy."""
    monkeypatch.setattr(fc, "_load", lambda: object())
    monkeypatch.setattr(fc, "_compiled_chain", lambda _, a, b, acc: np.asarray(wrong(a, b, acc), np.float32))
    assert fc.compiled_chain.__wrapped__() is None
