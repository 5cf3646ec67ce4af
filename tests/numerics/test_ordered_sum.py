"""``layout.ordered_sum`` (a planned reduction over the block's index bits) gives, bit for bit, what
the straightforward formulation of the compiled order gives: per thread, then butterflies over
lanes and warps, as Triton's generated code adds. That formulation is kept here as the reference."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tilescope.engine import dtypes, layout
from tilescope.engine import numerics as nx
from tilescope.engine.dtypes import DType
from tilescope.engine.layout import Blocked, _add, _plan

TYPES = {"fp32": dtypes.FP32, "bf16": dtypes.BF16, "fp16": dtypes.FP16, "fp64": dtypes.FP64}


# --------------------------------------------------------------------------- the reference


def _per_thread(x, ty, order, factors):
    """Each thread's elements (last axis, register order) combined: a running sum or a pairwise tree
    (fp16/bf16: over the even, then the odd elements); ``factors`` fuse where the compiler fuses."""
    n = x.shape[-1]
    packed = ty.itemsize == 2
    if order == "linear":
        if factors is None:
            acc = x[..., 0]
            for i in range(1, n):
                acc = _add(acc, x[..., i], ty)
            return acc
        a, b = factors
        if n == 1:
            return x[..., 0]
        acc = nx.fma(a[..., 0], b[..., 0], x[..., 1], ty)
        for i in range(2, n):
            fuse = not packed or i % 2 == 0
            acc = nx.fma(a[..., i], b[..., i], acc, ty) if fuse else _add(acc, x[..., i], ty)
        return acc
    if packed and n > 1:
        perm = np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)])
        x = x[..., perm]
        if factors is not None:
            factors = (factors[0][..., perm], factors[1][..., perm])
    first = True
    while x.shape[-1] > 1:
        if first and factors is not None:
            x = nx.fma(factors[0][..., 0::2], factors[1][..., 0::2], x[..., 1::2], ty)
        else:
            x = _add(x[..., 0::2], x[..., 1::2], ty)
        first = False
    return x[..., 0]


def _butterfly(x, ty, factors=None):
    """Lane 0 after a shuffle butterfly over the last axis: halves folded, the first add fused."""
    while x.shape[-1] > 1:
        half = x.shape[-1] // 2
        if factors is not None:
            x = nx.fma(factors[0][..., :half], factors[1][..., :half], x[..., half:], ty)
            factors = None
        else:
            x = _add(x[..., :half], x[..., half:], ty)
    return x[..., 0]


def _pairs(x: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """The even and the odd elements of ``x`` along ``axis`` (views)."""
    lo = [slice(None)] * x.ndim
    hi = list(lo)
    lo[axis], hi[axis] = slice(0, None, 2), slice(1, None, 2)
    return x[tuple(lo)], x[tuple(hi)]


def _tree_sum(
    x: np.ndarray,
    axis: int,
    plan: tuple[int, int, int, int],
    ty: DType,
    factors: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Triton 3.9's order: a pairwise tree over each thread's elements (register order), then the
    butterflies over lanes and warps; ``factors`` fuse into the first level (``x`` their products)."""
    spt, lanes, warps, reps = plan
    if factors is not None and spt % 2 == 0:
        # the first level pairs neighbours along the axis: fuse it on the block as it lies, without
        # splitting (or copying broadcast factors)
        fa, fb = (_pairs(f, axis + 1)[0] for f in factors)
        x, factors, spt = nx.fma(fa, fb, _pairs(x, axis + 1)[1], ty), None, spt // 2

    def split4(a: np.ndarray) -> np.ndarray:
        # without a transposing copy: a pairwise tree over (rep, s) is one over s, then over rep
        a = np.moveaxis(np.broadcast_to(a, x.shape), axis + 1, -1)
        return a.reshape(*a.shape[:-1], reps, warps, lanes, spt)

    a = split4(x)
    fa, fb = (None, None) if factors is None else (split4(factors[0]), split4(factors[1]))
    for ax in (-1, -4):
        while a.shape[ax] > 1:
            lo, hi = _pairs(a, ax)
            if fa is not None:  # the first level adds each pair's left product unrounded
                a = nx.fma(_pairs(fa, ax)[0], _pairs(fb, ax)[0], hi, ty)
                fa = fb = None
            else:
                a = _add(lo, hi, ty)
    lane = None if fa is None else (fa[..., 0, :, :, 0], fb[..., 0, :, :, 0])
    return _butterfly(_butterfly(a[..., 0, :, :, 0], ty, lane), ty)


def reference_sum(x, axis, ty, numerics, factors=None, compiled=None):
    """The compiled order, spelled out (the engine's formulation before the plan): split the axis
    into (warp, lane, register), reduce each thread's registers, then the lanes' and the warps'
    butterflies."""
    block = x.shape[1:]
    plan = _plan(block, axis, compiled or layout.coalesced(block, ty.itemsize * 8, numerics.num_warps))
    if plan is None:
        return None
    if numerics.per_thread == "tree" and ty.itemsize != 2:
        return _tree_sum(x, axis, plan, ty, factors)
    spt, lanes, warps, reps = plan
    arrays = [x] if factors is None else [x, *factors]
    split = []
    for a in arrays:
        a = np.moveaxis(np.broadcast_to(a, x.shape), axis + 1, -1)
        a = a.reshape(*a.shape[:-1], reps, warps, lanes, spt)
        split.append(np.moveaxis(a, -4, -2).reshape(*a.shape[:-4], warps, lanes, reps * spt))
    fused = None if factors is None else tuple(split[1:])
    per_thread = _per_thread(split[0], ty, numerics.per_thread, fused)
    lane_factors = None if fused is None or reps * spt > 1 else tuple(f[..., 0] for f in fused)
    return _butterfly(_butterfly(per_thread, ty, lane_factors), ty)


# --------------------------------------------------------------------------- inputs


def _split(total: int, parts: int, draw) -> tuple[int, ...]:
    """``2**total`` spread over ``parts`` powers of two."""
    exps = [0] * parts
    for _ in range(total):
        exps[draw(st.integers(0, parts - 1))] += 1
    return tuple(1 << e for e in exps)


@st.composite
def cases(draw):
    """A block, axis, dtype, layout (coalesced or any blocked one), order and batched inputs, with
    specials (NaN, inf, -0.0, subnormals) sprinkled in, a product's factors (some broadcast)."""
    rank = draw(st.integers(1, 3))
    block = tuple(1 << draw(st.integers(0, 6 if rank < 3 else 3)) for _ in range(rank))
    axis = draw(st.integers(0, rank - 1))
    name = draw(st.sampled_from(sorted(TYPES)))
    ty = TYPES[name]
    num_warps = 1 << draw(st.integers(0, 3))
    if draw(st.booleans()):
        compiled = None
    else:
        compiled = Blocked(
            tuple(1 << draw(st.integers(0, 3)) for _ in range(rank)),
            _split(5, rank, draw),
            _split(int(math.log2(num_warps)), rank, draw),
        )
    numerics = nx.Numerics(num_warps=num_warps, per_thread=draw(st.sampled_from(nx.PER_THREAD_ORDERS)))
    batch = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    storage = {"fp32": np.float32, "fp64": np.float64, "fp16": np.float16, "bf16": nx.bf16_storage()}[name]

    def values(shape):
        v = rng.standard_normal(shape) * np.exp2(rng.integers(-20, 20, shape) * draw(st.booleans()))
        special = rng.random(shape) < draw(st.sampled_from([0.0, 0.02, 0.2]))
        v = np.where(special, rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40], shape), v)
        return nx.from_float(v.astype(np.float64), ty).astype(storage)

    factors = None
    if draw(st.booleans()):
        shapes = []
        for _ in range(2):
            s = [batch, *block]
            for d in range(rank + 1):
                if draw(st.integers(0, 3)) == 0:
                    s[d] = 1
            shapes.append(tuple(s))
        a, b = (np.broadcast_to(values(s), (batch, *block)) for s in shapes)
        x = _mul(a, b, ty)
        factors = (a, b)
    else:
        x = values((batch, *block))
    return x, axis, ty, numerics, factors, compiled


def _mul(a, b, ty):
    if ty.is_low_float:
        return nx.from_float(nx.to_float32(a, ty) * nx.to_float32(b, ty), ty)
    return a * b


# --------------------------------------------------------------------------- the properties


@settings(max_examples=400, deadline=None)
@given(cases())
def test_planned_sum_is_the_reference_bit_for_bit(case):
    """Same bits (NaN payloads and signed zeros included) or the same refusal to plan."""
    x, axis, ty, numerics, factors, compiled = case
    with np.errstate(all="ignore"):
        got = layout.ordered_sum(x, axis, ty, numerics, factors, compiled)
        want = reference_sum(x, axis, ty, numerics, factors, compiled)
    if want is None:
        assert got is None
        return
    assert got.shape == want.shape and got.dtype == want.dtype
    uint = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(uint), np.ascontiguousarray(want).view(uint))


@settings(max_examples=100, deadline=None)
@given(cases())
def test_planned_sum_is_close_to_the_exact_sum(case):
    """On finite inputs the sum is within the dtype's rounding of the float64 one (the reference and
    the plan could agree and both be wrong)."""
    x, axis, ty, numerics, factors, compiled = case
    with np.errstate(all="ignore"):
        got = layout.ordered_sum(x, axis, ty, numerics, factors, compiled)
    wide = nx.to_float32(x, ty).astype(np.float64) if ty.is_low_float else x.astype(np.float64)
    if got is None or not np.all(np.isfinite(wide)):
        return
    exact = wide.sum(axis=axis + 1)
    n = x.shape[axis + 1]
    eps = {"fp32": 2.0**-24, "fp64": 2.0**-53, "fp16": 2.0**-11, "bf16": 2.0**-8}[ty.name]
    magnitude = np.abs(wide).sum(axis=axis + 1)
    tiny = {"fp32": 2.0**-149, "fp64": 2.0**-1074, "fp16": 2.0**-24, "bf16": 2.0**-133}[ty.name]
    bound = 2 * n * (eps * magnitude + tiny)
    value = nx.to_float32(got, ty).astype(np.float64) if ty.is_low_float else got.astype(np.float64)
    finite = np.isfinite(value)
    top = {"fp16": 65504.0, "bf16": 3.38e38}.get(ty.name, np.inf)
    assert np.all(finite | (magnitude >= top)), "an overflow no partial sum can reach"
    assert np.all(np.abs(value - exact)[finite] <= bound[finite])
