"""Where a block's elements live on the GPU, and the order a compiled reduction adds them in.

Triton gives every block a *blocked* layout: each thread holds ``size_per_thread`` contiguous
elements per dimension, the 32 lanes of a warp and the warps of a program tile the block in the
layout's ``order`` (fastest dimension first), repeating when the block is larger than the tile. A
``tl.sum`` then adds (1) the elements each thread holds, (2) across the lanes of a warp with a
butterfly of shuffles (strides 16, 8, ..., 1), (3) across warps through shared memory with the same
butterfly. The bits of a float sum depend on that order, so "gpu" numerics follow it.

The layout is the one an offline compile of the kernel gave the reduction's input, where the launch
asked for one (the Triton frontend's ``gpu_layouts="compiled"``), else the one Triton's coalescing
pass gives a contiguous, 16-byte aligned row-major load (the common case; the layout a reduction
sees is its input's): per thread as many elements along
the last dimension as fill 16 bytes, but no more than the block has per thread; lanes, then warps,
fastest dimension first. This is checked against the layouts in the TTGIR of an sm_90a compile
(``tests/numerics``). The within-thread order is the compiler release's (:class:`~.numerics.Numerics`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from . import numerics as nx
from .dtypes import DType

WARP = 32


@dataclass(frozen=True)
class Blocked:
    """A blocked layout: per dimension, elements per thread, lanes per warp, warps per program."""

    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]


@cache
def coalesced(shape: tuple[int, ...], bits: int, num_warps: int) -> Blocked:
    """The layout Triton gives a contiguous, aligned row-major block of ``bits``-wide elements."""
    rank = len(shape)
    order = list(range(rank))[::-1]
    per_thread = max(1, min(128 // bits, math.prod(shape) // (WARP * num_warps), shape[-1]))
    spt = [1] * rank
    spt[-1] = per_thread
    tpw, wpc = [1] * rank, [1] * rank
    lanes, warps, threads = WARP, num_warps, WARP * num_warps
    used_lanes = used_warps = 1
    for dim in order[:-1]:
        in_cta = min(max(threads, 1), max(shape[dim] // spt[dim], 1))
        tpw[dim] = min(max(in_cta, 1), lanes)
        wpc[dim] = min(max(in_cta // tpw[dim], 1), warps)
        warps //= wpc[dim]
        lanes //= tpw[dim]
        threads //= in_cta
        used_lanes *= tpw[dim]
        used_warps *= wpc[dim]
    tpw[order[-1]] = WARP // used_lanes
    wpc[order[-1]] = num_warps // used_warps
    return Blocked(tuple(spt), tuple(tpw), tuple(wpc))


def _add(a: np.ndarray, b: np.ndarray, ty: DType) -> np.ndarray:
    """One add in ``ty``, correctly rounded (low-precision floats through float32, exact there)."""
    if ty.is_low_float:
        return nx.from_float(nx.to_float32(a, ty) + nx.to_float32(b, ty), ty)
    return a + b


def _mul(a: np.ndarray, b: np.ndarray, ty: DType) -> np.ndarray:
    if ty.is_low_float:
        return nx.from_float(nx.to_float32(a, ty) * nx.to_float32(b, ty), ty)
    return a * b


def _per_thread(
    x: np.ndarray, ty: DType, order: str, factors: tuple[np.ndarray, np.ndarray] | None
) -> np.ndarray:
    """Combine each thread's elements (last axis, register order). ``factors``: the elements are the
    products of these two arrays and the compiler fuses them into the additions where it does."""
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
            # fp16/bf16 pairs are vectorized: only the even element of a pair stays fusable
            fuse = not packed or i % 2 == 0
            acc = nx.fma(a[..., i], b[..., i], acc, ty) if fuse else _add(acc, x[..., i], ty)
        return acc
    if packed and n > 1:  # fp16/bf16 add two lanes at once: a tree over the even and the odd elements
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


def _butterfly(x: np.ndarray, ty: DType, factors: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """What lane 0 holds after a shuffle butterfly over the last axis (strides n/2, ..., 1): the
    halves folded pairwise. ``factors``: each lane still holds a product, which the first step's
    add fuses (the shuffled partner's product arrives rounded)."""
    while x.shape[-1] > 1:
        half = x.shape[-1] // 2
        if factors is not None:
            x = nx.fma(factors[0][..., :half], factors[1][..., :half], x[..., half:], ty)
            factors = None
        else:
            x = _add(x[..., :half], x[..., half:], ty)
    return x[..., 0]


@cache
def _plan(block: tuple[int, ...], axis: int, layout: Blocked) -> tuple[int, int, int, int] | None:
    """(elements per thread, lanes, warps, repetitions) along ``axis`` of a block's reduction in
    ``layout`` (None when the block does not tile evenly)."""
    n = block[axis]
    spt = min(layout.size_per_thread[axis], n)
    lanes = min(layout.threads_per_warp[axis], max(n // spt, 1))
    warps = min(layout.warps_per_cta[axis], max(n // (spt * lanes), 1))
    if n % (spt * lanes * warps):
        return None
    return spt, lanes, warps, n // (spt * lanes * warps)


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


def ordered_sum(
    x: np.ndarray,
    axis: int,
    ty: DType,
    numerics: nx.Numerics,
    factors: tuple[np.ndarray, np.ndarray] | None = None,
    compiled: Blocked | None = None,
) -> np.ndarray | None:
    """``tl.sum`` of ``x`` (program axis first) along block ``axis`` in ``ty`` and in the order the
    compiled code adds (None when the block does not tile evenly: the caller's order then), in
    ``compiled`` (the layout an offline compile gave the reduction) or else the coalesced layout."""
    block = x.shape[1:]
    plan = _plan(block, axis, compiled or coalesced(block, ty.itemsize * 8, numerics.num_warps))
    if plan is None:
        return None
    if numerics.per_thread == "tree" and ty.itemsize != 2:
        return _tree_sum(x, axis, plan, ty, factors)
    spt, lanes, warps, reps = plan
    arrays = [x] if factors is None else [x, *factors]
    # element i = ((rep * warps + warp) * lanes + lane) * spt + s; a thread holds (rep, s) in order
    split = []
    for a in arrays:
        a = np.moveaxis(np.broadcast_to(a, x.shape), axis + 1, -1)
        a = a.reshape(*a.shape[:-1], reps, warps, lanes, spt)
        split.append(np.moveaxis(a, -4, -2).reshape(*a.shape[:-4], warps, lanes, reps * spt))
    fused = None if factors is None else tuple(split[1:])
    per_thread = _per_thread(split[0], ty, numerics.per_thread, fused)
    # a thread holding one product still holds it unrounded-fusable for its first shuffle add
    lane_factors = None if fused is None or reps * spt > 1 else tuple(f[..., 0] for f in fused)
    return _butterfly(_butterfly(per_thread, ty, lane_factors), ty)
