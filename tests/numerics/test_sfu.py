"""The special function unit's instructions against what the H200 gave (``sfu_samples.npz``, recorded
by ``record_sfu.py``): bit for bit, random inputs over many binades and the special values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilescope.engine import sfu

SAMPLES = np.load(Path(__file__).parent / "sfu_samples.npz")


def same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elementwise: identical float32 bits, or both NaN (the GPU's NaN payload is its own)."""
    return (got.view(np.int32) == want.view(np.int32)) | (np.isnan(got) & np.isnan(want))


@pytest.mark.parametrize("op", ["rcp", "rsqrt", "sqrt", "ex2"])
def test_each_instruction_gives_the_h200_bits(op):
    x, want = SAMPLES[f"{op}.x"], SAMPLES[f"{op}.y"]
    got = getattr(sfu, op)(x)
    wrong = ~same_bits(got, want)
    assert not wrong.any(), list(zip(x[wrong][:5], got[wrong][:5], want[wrong][:5], strict=True))


def test_div_full_is_a_times_the_reciprocal_where_it_claims_so():
    a, b, want = SAMPLES["div.a"], SAMPLES["div.b"], SAMPLES["div.y"]
    got = sfu.div_full(a, b)
    assert same_bits(got, want).all()


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
