"""The special function unit's instructions against what the H200 gave (``sfu_samples.npz``, recorded
by ``record_sfu.py``): bit for bit, random inputs over many binades and the special values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.engine.c_clones import default_clone
from tilescope.engine import clib, sfu

SAMPLES = np.load(Path(__file__).parent / "sfu_samples.npz")


def _compiled(name: str):
    """Instruction ``name`` through the C kernels (skipped where the install built none)."""
    lib = clib.checked("tilescope.engine._sfu", sfu._library, lambda lib: True)
    if lib is None:
        pytest.skip("the C kernels were not built (no C compiler at install)")
    return lambda x: sfu._compiled(lib, name, x)


#: the two implementations: the C kernels (as built, before their first-use check) and NumPy
IMPLEMENTATIONS = {"compiled": _compiled, "numpy": lambda name: sfu._NUMPY[name]}


def same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elementwise: identical float32 bits, or both NaN (the GPU's NaN payload is its own)."""
    return (got.view(np.int32) == want.view(np.int32)) | (np.isnan(got) & np.isnan(want))


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
@pytest.mark.parametrize("op", ["rcp", "rsqrt", "sqrt", "ex2"])
def test_each_instruction_gives_the_h200_bits(op, impl):
    x, want = SAMPLES[f"{op}.x"], SAMPLES[f"{op}.y"]
    with np.errstate(all="ignore"):
        got = IMPLEMENTATIONS[impl](op)(x)
    wrong = ~same_bits(got, want)
    assert not wrong.any(), list(zip(x[wrong][:5], got[wrong][:5], want[wrong][:5], strict=True))


def _any_floats(rng: np.random.Generator, n: int) -> np.ndarray:
    """float32 of random bit patterns (every binade, subnormals, infinities, NaNs), values of tl.exp's
    and ex2's range, and each tail of the kernels' vector loops."""
    patterns = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([patterns, rng.uniform(-200, 200, n).astype(np.float32), [np.float32(-150.5)]])


@pytest.mark.parametrize("op", sorted(sfu._NUMPY))
def test_the_c_kernels_give_the_numpy_bits(op):
    """On 400k random float32 (subnormal tl.exp results among them) and every length up to 40 (the
    vector loops' tails), the C kernel and the NumPy path agree bit for bit (NaN's payload aside)."""
    run = _compiled(op)
    rng = np.random.default_rng(23)
    with np.errstate(all="ignore"):
        for x in [_any_floats(rng, 200_000), *(_any_floats(rng, n)[:n] for n in range(40))]:
            assert clib.same_bits(run(x), sfu._NUMPY[op](x))
    assert sfu._kernel(op) is not None  # and it passes the first-use check, so launches use it


def test_the_default_clone_gives_the_same_bits(tmp_path):
    """Built as its portable default clone alone (no AVX: scalar gathers), the C kernels pass the
    first-use check: the NumPy forms' bits on every binade, ex2's range and the specials."""
    path = default_clone(Path(sfu.__file__).with_name("_sfu.c"), tmp_path / "sfu_default.so")
    assert sfu._agrees(sfu._library(path))


def test_div_full_is_a_times_the_reciprocal_where_it_claims_so():
    a, b, want = SAMPLES["div.a"], SAMPLES["div.b"], SAMPLES["div.y"]
    got = sfu.div_full(a, b)
    assert same_bits(got, want).all()


def test_div_full_by_a_broadcast_divisor_is_the_same_quotient():
    """A divisor broadcast over the quotient (one rcp per row) gives the bits of the materialized
    one, a row whose quotients fall below the normal range included (they are ``a * rcp(b)`` too),
    and a row whose divisor the instruction scales takes the correctly rounded quotient alone."""
    rng = np.random.default_rng(29)
    a = np.ldexp(rng.standard_normal((64, 256)), rng.integers(-40, 40, (64, 256))).astype(np.float32)
    a[3, :7] = 0.0
    b = np.ldexp(rng.uniform(1, 2, (64, 1)), rng.integers(-40, 40, (64, 1))).astype(np.float32)
    wide = np.broadcast_to(b, a.shape)
    assert same_bits(sfu.div_full(a, wide), sfu.div_full(a, wide.copy())).all()
    a[5, 9] = 2.0**-120
    b[5] = 2.0**10
    b[7] = 2.0**127
    got = sfu.div_full(a, np.broadcast_to(b, a.shape))
    assert same_bits(got, sfu.div_full(a, np.broadcast_to(b, a.shape).copy())).all()
    assert same_bits(got[5], a[5] * sfu.rcp(b[5])).all()
    assert same_bits(got[7], a[7] / b[7]).all()
    assert same_bits(np.delete(got, 7, axis=0), np.delete(a * sfu.rcp(b), 7, axis=0)).all()


@pytest.mark.parametrize(
    ("a", "b"),
    [(1.0, 2.0**127), (1.0, 1e-40), (np.nan, 2.0**127)],
)
def test_div_full_is_correctly_rounded_where_the_instruction_scales_its_operands(a, b):
    # divisors above 2**126 or subnormal: the instruction scales its
    # operands there (what it gives was not recorded), so those elements keep the bounded model,
    # element by element: the lanes next to them still follow the tables
    a = np.float32([a, 3.0])
    b = np.float32([b, 7.0])
    got = sfu.div_full(a, b)
    with np.errstate(all="ignore"):
        assert same_bits(got[:1], a[:1] / b[:1]).all()
    assert same_bits(got[1:], a[1:] * sfu.rcp(b[1:])).all()


def test_results_of_a_table_are_within_two_ulps_of_the_correctly_rounded_value():
    x = np.random.default_rng(3).uniform(1, 4, 100_000).astype(np.float32)
    exact = (1 / np.sqrt(x.astype(np.float64))).astype(np.float32)
    assert np.abs(sfu.rsqrt(x).view(np.int32) - exact.view(np.int32)).max() <= 2


def test_an_unknown_gpu_sfu_is_refused_with_the_choices():
    import triton
    import triton.language as tl

    import tilescope
    from tilescope.errors import TilescopeError

    @triton.jit
    def copy(x_ptr):
        tl.store(x_ptr, tl.load(x_ptr))

    with pytest.raises(TilescopeError, match="gpu_sfu must be one of 'model', 'tables'; got 'exact'"):
        tilescope.trace(copy, gpu_sfu="exact")
