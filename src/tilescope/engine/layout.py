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
from . import tree_sum
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


@dataclass(frozen=True)
class _Order:
    """How one reduction runs on a block split into index bits: the block as ``shape`` (the reduced
    axis as one axis of two per bit of the element index, most significant first), the ``chain`` of
    index tuples a thread adds one by one (the "linear" order; empty otherwise), then the ``levels``,
    each a pair of index tuples (the halves whose bit is 0 and 1) added halves-wise, and where a
    product's factors first fuse (``fuse``: into the first combine unless that one is across warps)."""

    shape: tuple[int, ...]
    chain: tuple[tuple, ...]
    levels: tuple[tuple[tuple, tuple], ...]
    fuse: bool
    out: tuple[int, ...]
    bits: tuple[int, ...] = ()  # the index bit each level folds (bit 0: the axis's lowest)


def _bits(n: int) -> int | None:
    """log2(n) for a power of two, else None."""
    return n.bit_length() - 1 if n > 0 and n & (n - 1) == 0 else None


@cache
def _order(
    block: tuple[int, ...], axis: int, layout: Blocked, per_thread: str, packed: bool
) -> _Order | None:
    """The plan of a reduction along ``axis`` of ``block`` in ``layout`` (None when it does not tile
    evenly into powers of two); ``packed``: fp16/bf16, whose additions take two lanes of a register.

    Element ``i`` of the axis is ``((rep * warps + warp) * lanes + lane) * spt + s``; a thread holds
    its (rep, s) in register order. Triton 3.9 ("tree") adds them pairwise over s, then over rep
    (packed types: over the register's odd bits, then its lowest bit), 3.6 ("linear") in one running
    sum; then shuffle butterflies across lanes and warps fold halves, highest bit first."""
    plan = _plan(block, axis, layout)
    if plan is None:
        return None
    widths = [_bits(v) for v in plan]
    if None in widths:
        return None
    ls, ll, lw, lr = widths
    k = ls + ll + lw + lr
    pos = 1 + axis + k - 1  # the view's axis of index bit 0 (program axis first)

    def half(bit: int, value: int) -> tuple:
        index = [slice(None)] * (len(block) + k)
        index[pos - bit] = slice(value, value + 1)
        return tuple(index)

    # register bit r: the thread's s bits, then its rep bits (above the lane and warp bits)
    register = list(range(ls)) + list(range(ls + ll + lw, k))
    lanes = list(range(ls + ll - 1, ls - 1, -1))
    warps = list(range(ls + ll + lw - 1, ls + ll - 1, -1))
    chain: tuple[tuple, ...] = ()
    if per_thread == "linear":
        chain = tuple(_register(r, register, pos, len(block) + k) for r in range(1 << len(register)))
        tree = []
    elif packed and register:
        tree = register[1:] + register[:1]  # even elements, then odd: the register's bit 0 last
    else:
        tree = register
    levels = [*tree, *lanes, *warps]
    first_across_warps = not chain[1:] and levels and levels[0] in warps
    return _Order(
        shape=(*block[:axis], *[2] * k, *block[axis + 1 :]),
        chain=chain if len(chain) > 1 else (),
        levels=tuple((half(b, 0), half(b, 1)) for b in levels),
        fuse=not first_across_warps,
        out=(*block[:axis], *block[axis + 1 :]),
        bits=tuple(levels),
    )


def _register(r: int, bits: list[int], pos: int, ndim: int) -> tuple:
    """The index (keeping dimensions) of a thread's register ``r`` in the split view of ``ndim``
    dimensions: its bits set the index bits in ``bits``, lanes and warps stay whole."""
    index = [slice(None)] * ndim
    for j, bit in enumerate(bits):
        v = (r >> j) & 1
        index[pos - bit] = slice(v, v + 1)
    return tuple(index)


def _linear(
    a: np.ndarray, ty: DType, chain: tuple[tuple, ...], packed: bool, factors: tuple | None
) -> np.ndarray:
    """One running sum over a thread's registers; ``factors`` fuse into every add they can (fp16/bf16
    pairs are vectorized: only the even element of a pair stays fusable)."""
    if factors is None:
        acc = a[chain[0]]
        for index in chain[1:]:
            acc = _add(acc, a[index], ty)
        return acc
    fa, fb = factors
    acc = nx.fma(fa[chain[0]], fb[chain[0]], a[chain[1]], ty)
    for i, index in enumerate(chain[2:], 2):
        if packed and i % 2:
            acc = _add(acc, a[index], ty)
        else:
            acc = nx.fma(fa[index], fb[index], acc, ty)
    return acc


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
    ``compiled`` (the layout an offline compile gave the reduction) or else the coalesced layout.
    ``factors``: ``x`` is their product, which the compiler fuses into the first add it feeds."""
    block = x.shape[1:]
    layout = compiled or coalesced(block, ty.itemsize * 8, numerics.num_warps)
    order = _order(block, axis, layout, numerics.per_thread, ty.itemsize == 2)
    if order is None:
        return None
    batch = x.shape[0]
    a = x.reshape(batch, *order.shape)
    fused = None if factors is None else tuple(f.reshape(batch, *order.shape) for f in factors)
    if order.chain:
        a, fused = _linear(a, ty, order.chain, ty.itemsize == 2, fused), None
    elif not order.fuse:
        fused = None
    flat = fused is None and not order.chain and axis == len(block) - 1
    if flat and x.dtype == np.float32 and not ty.is_low_float:
        summed = tree_sum.tree_sum(x.reshape(batch, *block[:axis], -1), order.bits)
        if summed is not None:
            return summed
    for lo, hi in order.levels:
        if fused is not None:
            a, fused = nx.fma(fused[0][lo], fused[1][lo], a[hi], ty), None
        else:
            a = _add(a[lo], a[hi], ty)
    return a.reshape(batch, *order.out)
