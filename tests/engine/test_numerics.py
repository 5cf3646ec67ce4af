"""The numerics contract (docs/numerics.md): conversions and arithmetic as Triton's GPU code does them."""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from hypothesis import given, settings
from hypothesis import strategies as st

import tilescope
from tilescope.engine import dtypes
from tilescope.engine import numerics as nx

FP8 = {
    "fp8e4nv": (dtypes.FP8E4M3FN, ml_dtypes.float8_e4m3fn, 448.0),
    "fp8e5": (dtypes.FP8E5M2, ml_dtypes.float8_e5m2, 57344.0),
}


@pytest.mark.parametrize("name", sorted(FP8))
def test_fp8_round_trip_matches_ml_dtypes_in_range(name):
    ty, ml, top = FP8[name]
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(20000) * rng.choice([1e-3, 1.0, 50.0], 20000)).astype(np.float32)
    x = x[np.abs(x) < top]
    ours = nx.from_float(x, ty)
    theirs = x.astype(ml).view(np.uint8)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("name", sorted(FP8))
def test_fp8_saturates_to_largest_finite(name):
    ty, _, top = FP8[name]
    x = np.array([top * 4, -top * 4, np.inf, -np.inf, 1e30], dtype=np.float32)
    back = nx.to_float32(nx.from_float(x, ty), ty)
    np.testing.assert_array_equal(back, [top, -top, top, -top, top])


def test_fp8_nan_stays_nan():
    for ty in (dtypes.FP8E4M3FN, dtypes.FP8E5M2, dtypes.FP8E4M3FNUZ, dtypes.FP8E5M2FNUZ):
        assert np.isnan(nx.to_float32(nx.from_float(np.array([np.nan], np.float32), ty), ty)[0])


def test_fp8e4b15_table_is_exact_and_saturating():
    table = nx.fp8_decode_table("fp8e4m3b15")
    assert np.all(np.isfinite(table))
    assert table.max() == 1.875 and table.min() == -1.875
    # every code decodes and re-encodes to itself (except -0 which maps to itself too)
    codes = np.arange(256, dtype=np.uint8)
    np.testing.assert_array_equal(nx.from_float(table, dtypes.FP8E4M3B15), codes)
    assert (
        nx.to_float32(nx.from_float(np.array([5.0], np.float32), dtypes.FP8E4M3B15), dtypes.FP8E4M3B15)[0]
        == 1.875
    )


def test_round_to_nearest_even_ties():
    # 1 + 2**-8 is exactly halfway between two bf16 values: ties go to the even mantissa (1.0)
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8], dtype=np.float32)
    np.testing.assert_array_equal(nx.from_float(x, dtypes.BF16).astype(np.float32), [1.0, 1 + 2**-6])


def test_rtz_rounds_toward_zero():
    x = np.array([1 + 2**-7 + 2**-9, -(1 + 2**-7 + 2**-9)], dtype=np.float32)
    np.testing.assert_array_equal(
        nx.from_float(x, dtypes.BF16, rtz=True).astype(np.float32), [1 + 2**-7, -(1 + 2**-7)]
    )


def test_float_to_int_saturates_and_nan_is_zero():
    x = np.array([3.9, -3.9, 1e20, -1e20, np.nan], dtype=np.float32)
    np.testing.assert_array_equal(nx.float_to_int(x, np.int32), [3, -3, 2**31 - 1, -(2**31), 0])


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e6, 1e6, width=32), st.floats(-1e6, 1e6, width=32), st.floats(-1e6, 1e6, width=32))
def test_fma_fp32_rounds_once(a, b, c):
    got = nx.fma(
        np.array([a], np.float32), np.array([b], np.float32), np.array([c], np.float32), dtypes.FP32
    )[0]
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    want = np.float32(float(exact))  # float() rounds the exact rational to float64, then float32 ...
    # ... which can double-round; check against the two float32 neighbours instead
    lo = np.nextafter(want, np.float32(-np.inf))
    hi = np.nextafter(want, np.float32(np.inf))
    candidates = [v for v in (lo, want, hi)]
    best = min(
        candidates, key=lambda v: (abs(Fraction(float(v)) - exact), int(np.float32(v).view(np.uint32)) & 1)
    )
    assert got == best


def _fma_reference(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a*b+c rounded once to float32 the slow, proven way: exact float64 product, TwoSum, round to odd."""
    a, b, c = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64), c.astype(np.float64))
    p = a * b
    return nx._round_to_odd_sum(p, c, p + c).astype(np.float32)


def _double_rounding_cases(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    """(a, b, c) whose exact a*b+c lies a hair off a float32 halfway point, closer than float64 can
    tell: a*b = h*(1 + e) with 0 < |e| < 2**-29 (b = 1/a rounded), h half of c's ulp."""
    a = rng.uniform(1, 2, n).astype(np.float32)
    b = (1 / a.astype(np.float64)).astype(np.float32)
    eps = a.astype(np.float64) * b - 1
    keep = (eps != 0) & (np.abs(eps) < 2.0**-29)
    a, b = a[keep], b[keep]
    c = (rng.uniform(1, 2, a.size) * np.exp2(rng.integers(-100, 100, a.size))).astype(np.float32)
    half = (np.spacing(c) / 2).astype(np.float32)  # a power of two: the product stays exact
    sign = rng.choice(np.array([-1, 1], np.float32), a.size)
    return a * sign, b * half, c * sign


def _scaled_normals(rng: np.random.Generator, shape: tuple, lo: int, hi: int) -> np.ndarray:
    """float32 normals times 2**k, k uniform in [lo, hi)."""
    return (rng.standard_normal(shape) * np.exp2(rng.integers(lo, hi, shape))).astype(np.float32)


def _numpy_fma(a, b, c, ty):
    return nx._fma_f32(a, b, c, np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c)))


def _hardware_fma(a, b, c, ty):
    if nx.hardware_fma() is None:
        pytest.skip("no torch whose addcmul rounds once here")
    return nx.fma_f32_hardware(a, b, c)


def _fma_without_hardware(a, b, c, ty):
    with pytest.MonkeyPatch.context() as patch:  # as on a machine whose torch does not round once
        patch.setattr(nx, "hardware_fma", lambda: None)
        return nx.fma(a, b, c, ty)


@pytest.mark.parametrize(
    "fma",
    [nx.fma, _numpy_fma, _hardware_fma, _fma_without_hardware],
    ids=["fma", "numpy", "hardware", "fma-without-hardware"],
)
def test_fma_fp32_is_exact_on_double_rounding_and_subnormal_cases(fma):
    """Each float32 FMA path (NumPy: one float64 sum, rounded again, redone where that could
    double-round; the CPU's FMA through torch; without it, the exact power-of-two products) equals the exact
    single rounding on inputs built to double-round, on subnormal results, on wide random inputs and
    on products by a power of two that overflow or underflow."""
    rng = np.random.default_rng(17)
    a1, b1, c1 = _double_rounding_cases(rng, 200_000)
    s = (a1.astype(np.float64) * b1 + c1).view(np.uint64)
    assert np.count_nonzero((s & np.uint64((1 << 29) - 1)) == np.uint64(1 << 28)) > 1000  # they do hit
    tiny = (rng.standard_normal((3, 20_000)) * np.exp2(rng.integers(-75, -55, (3, 20_000)))).astype(
        np.float32
    )
    tiny[2] = (rng.standard_normal(20_000) * 2.0**-140).astype(np.float32)  # subnormal addends
    wide = _scaled_normals(rng, (3, 50_000), -60, 60)
    for a, b, c in ((a1, b1, c1), tiny, wide):
        want = _fma_reference(a, b, c)
        np.testing.assert_array_equal(fma(a, b, c, dtypes.FP32).view(np.uint32), want.view(np.uint32))
    x = np.array([3e38, -3e38, 1e-38, 1.5e-45, 0.0, 1.0, np.inf], np.float32)  # ×2 overflows, ×0.5 underflows
    for v in (2.0, 0.5, -4.0):
        scale = np.broadcast_to(np.float32(v), x.shape)
        with np.errstate(over="ignore"):
            addends = (np.zeros_like(x), -x * np.float32(v), np.full_like(x, 1e-39))
        for c in addends:
            with np.errstate(over="ignore", invalid="ignore"):
                want = _fma_reference(x, scale, c)
                got = fma(x, scale, c, dtypes.FP32)
            np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_torch_reads_read_only_views_of_writable_arrays_in_place():
    """A loaded block or a broadcast is a read-only view of writable memory: torch reads it where it
    lies (no copy); memory given read-only and a negative stride are copied, with the same values."""
    torch = pytest.importorskip("torch")
    base = np.arange(48, dtype=np.float32).reshape(6, 8)
    view = base[1:5, ::3]
    view.flags.writeable = False
    column = np.broadcast_to(base[:, 2:3], (6, 8))
    for x in (view, column):
        shared = nx.as_torch(torch, x)
        assert shared.data_ptr() == x.__array_interface__["data"][0]
        np.testing.assert_array_equal(shared.numpy(), x)
    frozen = base.copy()
    frozen.flags.writeable = False
    for x in (frozen[2:, 1:], np.broadcast_to(frozen[:, :1], (6, 8)), base[::-1]):
        got = nx.as_torch(torch, x)
        assert got.data_ptr() != x.__array_interface__["data"][0]
        np.testing.assert_array_equal(got.numpy(), x)
    assert not frozen.flags.writeable and base[0, 0] == 0  # nothing was made writable or written


def test_tf32_rounding_keeps_ten_mantissa_bits():
    x = np.array([1 + 2**-11, 1 + 2**-10 + 2**-11], dtype=np.float32)
    np.testing.assert_array_equal(nx.round_to_tf32(x), [1.0, 1 + 2**-9])


@triton.jit
def _bf16_add(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))


def test_bf16_arithmetic_is_arithmetic_not_bits():
    # Triton's interpreter adds bf16 bit patterns (1.0 + 1.0 gives 1.7e38); the GPU gives 2.0
    x = torch.ones(16, dtype=torch.bfloat16)
    y = torch.randn(16).to(torch.bfloat16)
    out = torch.empty(16, dtype=torch.bfloat16)
    tilescope.trace(_bf16_add)[(1,)](x, y, out, BLOCK=16)
    want = (x.float() + y.float()).to(torch.bfloat16)
    assert torch.equal(out, want)


@triton.jit
def _int_ops(a_ptr, b_ptr, div_ptr, rem_ptr, mul_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(div_ptr + offs, a // b)
    tl.store(rem_ptr + offs, a % b)
    tl.store(mul_ptr + offs, a * b)


def test_integer_division_truncates_and_multiplication_wraps():
    rng = np.random.default_rng(3)
    a = torch.from_numpy(rng.integers(-(2**31), 2**31 - 1, 64, dtype=np.int64).astype(np.int32))
    b = torch.from_numpy(rng.integers(-50000, 50000, 64).astype(np.int32))
    b[b == 0] = 7
    div, rem, mul = (torch.empty(64, dtype=torch.int32) for _ in range(3))
    tilescope.trace(_int_ops)[(1,)](a, b, div, rem, mul, BLOCK=64)
    a64, b64 = a.numpy().astype(np.int64), b.numpy().astype(np.int64)
    q = np.trunc(a64 / b64).astype(np.int64)
    np.testing.assert_array_equal(div.numpy(), q)
    np.testing.assert_array_equal(rem.numpy(), a64 - q * b64)
    np.testing.assert_array_equal(mul.numpy(), ((a64 * b64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32))
