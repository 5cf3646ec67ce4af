"""Factored values for addresses-only runs: a per-program scalar plus one block shared by all programs.

Most addresses a kernel computes have the form ``s[p] + b[lane]``: a per-program offset (from
``program_id``, a loop counter, a grouped-ordering formula) plus a block pattern that every program
shares (``tl.arange`` arithmetic). Most masks compare such a value with a bound. Kept factored, an
access by B programs of S lanes costs O(B + S) to check instead of O(B·S):

* :class:`Affine` — integer or pointer value ``scalar[p] + block[lane]`` (exact int64 arithmetic;
  only used while the true value provably fits the type, so no wrap-around is hidden);
* :class:`Predicate` — ``uniform[lane] & AND_k (mblock_k[lane] OP_k thresh_k[p])``;
* :func:`prove` — for each program, the extreme addresses over its enabled lanes, by sorting the
  lanes of the (single) program-dependent mask term and taking prefix maxima and minima.

A proof only ever says "no enabled lane of any program is out of bounds". When it cannot (a bad
program exists, or the mask has several program-dependent terms), the caller materializes the
arrays and checks lane by lane, which also yields the exact finding.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

INT32 = (-(2**31), 2**31 - 1)

#: what was derived from a shared block, per block array: a loop's pointer advanced by a constant
#: keeps its block object, or gets its block plus that constant (:func:`plus`), so its extremes and
#: lane steps are derived once, not once per iteration
_FACTS: dict[int, tuple[weakref.ref, dict]] = {}
_INT64 = (-(2**63), 2**63 - 1)
#: how the facts of a block carry over to the block plus a constant (by key, or a tuple key's head)
_SHIFTS: dict[str, Callable[[Any, int], Any]] = {
    "extremes": lambda v, c: (v[0] + c, v[1] + c),  # (min, max)
    "lanes": lambda v, c: None if v is None else (v[0] + c, v[1]),  # (first lane, steps) or None
}


def _facts(block: np.ndarray) -> dict:
    """The kept facts of ``block`` (a new, empty entry when there are none; the array is made
    read-only: kept facts stay true only while nothing writes it, and the engine never does)."""
    ident = id(block)
    entry = _FACTS.get(ident)
    if entry is None or entry[0]() is not block:

        def drop(ref: weakref.ref, ident: int = ident) -> None:
            if _FACTS.get(ident, (None,))[0] is ref:
                del _FACTS[ident]

        block.flags.writeable = False
        entry = (weakref.ref(block, drop), {})
        _FACTS[ident] = entry
    return entry[1]


def fact(block: np.ndarray, key: Any, derive: Callable[[np.ndarray], Any]) -> Any:
    """``derive(block)``, computed once per block array and ``key``. Keys named in ``_SHIFTS``
    (``"extremes"``, ``("lanes", ...)``) must hold what those entries say, so that :func:`plus` can
    carry them over to the block plus a constant."""
    facts = _facts(block)
    if key not in facts:
        facts[key] = derive(block)
    return facts[key]


def known(block: np.ndarray, key: Any) -> Any:
    """The fact ``key`` of ``block`` when it has been worked out (:func:`fact`), else None."""
    entry = _FACTS.get(id(block))
    if entry is None or entry[0]() is not block:
        return None
    return entry[1].get(key)


def plus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b`` of two int64 blocks. One of them itself when the other is a single zero that changes
    neither its values nor its shape (a per-program offset); for a single constant, the sum inherits
    the block's extremes and lane steps, shifted (a pointer advanced by a constant in a loop)."""
    for block, other in ((a, b), (b, a)):
        shift = _constant_over(other, block)
        if shift == 0:
            return block
        if shift is not None:
            out = block + other
            _inherit(block, out, shift)
            return out
    return a + b


def _constant_over(other: np.ndarray, block: np.ndarray) -> int | None:
    """The one number ``other`` holds, when it is a broadcast of one number (a splat) whose sum with
    ``block`` has ``block``'s shape; else None."""
    if other.size == 0 or other.ndim > block.ndim:
        return None
    if any(n != 1 and n != m for n, m in zip(other.shape[::-1], block.shape[::-1], strict=False)):
        return None
    if any(st for st, n in zip(other.strides, other.shape, strict=True) if n > 1):
        return None
    return int(other.flat[0])


def _inherit(block: np.ndarray, out: np.ndarray, shift: int) -> None:
    """Give ``out`` (``block + shift``) the shifted facts of ``block``, when its extremes are kept and
    the shifted ones fit int64 (so no lane wrapped)."""
    entry = _FACTS.get(id(block))
    if entry is None or entry[0]() is not block or "extremes" not in entry[1]:
        return
    lo, hi = entry[1]["extremes"]
    if lo + shift < _INT64[0] or hi + shift > _INT64[1]:
        return
    facts = _facts(out)
    for key, value in entry[1].items():
        move = _SHIFTS.get(key[0] if isinstance(key, tuple) else key)
        if move is not None:
            facts[key] = move(value, shift)


@dataclass(repr=False, eq=False)
class Affine:
    """``scalar[p] + block[lane]``; scalar has shape (B,), block (1, *S); both int64."""

    scalar: np.ndarray
    block: np.ndarray

    def materialize(self, dtype: np.dtype) -> np.ndarray:
        """The (B, *S) array, wrapped to ``dtype`` like the GPU's integer arithmetic."""
        s = self.scalar.reshape(-1, *([1] * (self.block.ndim - 1)))
        full = s + self.block
        if np.dtype(dtype) == np.uint64:
            return full.view(np.uint64)
        return full.astype(dtype)

    def bounds(self) -> tuple[int, int]:
        """Smallest and largest value over every program and lane."""
        lo, hi = fact(self.block, "extremes", _extremes)
        return int(self.scalar.min()) + lo, int(self.scalar.max()) + hi

    def fits(self, lo: int, hi: int) -> bool:
        """True when every value lies in [lo, hi] (so no arithmetic on it wrapped)."""
        if self.block.size == 0 or self.scalar.size == 0:
            return True
        a, b = self.bounds()
        return lo <= a and b <= hi

    def map_block(self, fn) -> Affine:
        """Apply a shape operation (broadcast, reshape, transpose) to the shared block."""
        return Affine(self.scalar, np.asarray(fn(self.block)))


def compact(a: np.ndarray) -> np.ndarray:
    """``a`` with its broadcast (stride-0) axes cut to length 1: the numbers it holds, once each."""
    pairs = zip(a.shape, a.strides, strict=True)
    return a[tuple(slice(0, 1) if n > 1 and st == 0 else slice(None) for n, st in pairs)]


@dataclass(repr=False, eq=False)
class Rows:
    """``rows[p, i, ...] + block[lane]``: per-row numbers from data plus a shared block, for pointers.

    An embedding lookup's address ``w + idx[:, None] * D + cols[None, :]`` is one loaded row
    offset per row (``rows``, shape (B, R, 1)) plus the columns every row shares (``block``, shape
    (1, 1, D), ``tl.arange`` arithmetic). Kept apart, its bounds are proven per row, not per lane,
    and its data moves a row at a time (:func:`tilescope.engine.access.row_box`). Both parts are
    int64 byte addresses; broadcast axes are kept at length 1.
    """

    rows: np.ndarray
    block: np.ndarray

    def materialize(self, dtype: np.dtype) -> np.ndarray:
        """The (B, *S) array of byte addresses (``dtype``: uint64 pointers)."""
        full = self.rows + self.block
        return full.view(np.uint64) if np.dtype(dtype) == np.uint64 else full.astype(dtype)

    def shape(self) -> tuple[int, ...]:
        """The per-program block shape."""
        return tuple(np.broadcast_shapes(self.rows.shape, self.block.shape)[1:])

    def map_block(self, fn) -> Rows:
        """Apply a shape operation (broadcast, reshape, transpose) to both parts."""
        shape = self.shape()
        rows = np.broadcast_to(self.rows, (self.rows.shape[0], *shape))
        block = np.broadcast_to(self.block, (1, *shape))
        return Rows(compact(np.asarray(fn(rows))), compact(np.asarray(fn(block))))


def rows_plus(rows: np.ndarray, offset: Affine, size: int) -> Rows | None:
    """Per-lane byte addresses ``rows`` (B, *S) plus a factored offset of ``size``-byte elements,
    kept apart when the rows repeat along an axis the offset's block varies on (the embedding
    shape); else None."""
    rows = compact(rows)
    block = compact(offset.block) * size
    if rows.ndim != block.ndim or rows.ndim < 2:
        return None
    if not any(r == 1 and b > 1 for r, b in zip(rows.shape[1:], block.shape[1:], strict=True)):
        return None
    scalar = offset.scalar.reshape(-1, *([1] * (rows.ndim - 1))) * size
    try:
        np.broadcast_shapes(rows.shape, scalar.shape, block.shape)
    except ValueError:
        return None
    return Rows(rows.astype(np.int64, copy=False) + scalar, block)


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NP = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}


@dataclass(repr=False, eq=False)
class Predicate:
    """``uniform[lane] & AND_k (mblock_k[lane] OP_k thresh_k[p])``; blocks (1, *S), thresholds (B,)."""

    uniform: np.ndarray | None
    terms: list[tuple[np.ndarray, str, np.ndarray]]

    def block_shape(self) -> tuple[int, ...]:
        """The per-program block shape of the predicate."""
        shapes = [t[0].shape for t in self.terms] + ([self.uniform.shape] if self.uniform is not None else [])
        return tuple(np.broadcast_shapes(*shapes)[1:]) if shapes else ()

    def materialize(self, batch: int) -> np.ndarray:
        """The (B, *S) boolean array."""
        out = np.ones((batch, *self.block_shape()), dtype=bool)
        if self.uniform is not None:
            out &= self.uniform
        for mblock, op, thresh in self.terms:
            t = thresh.reshape(-1, *([1] * (mblock.ndim - 1)))
            out &= _NP[op](mblock, t)
        return out

    def map_block(self, fn) -> Predicate:
        """Apply a shape operation to every lane-indexed part."""
        uniform = None if self.uniform is None else np.asarray(fn(self.uniform))
        return Predicate(uniform, [(np.asarray(fn(m)), op, t) for m, op, t in self.terms])

    def all_true(self) -> bool:
        """True when every lane of every program is enabled (decided from the factored form)."""
        if self.uniform is not None and not self.uniform.all():
            return False
        for mblock, op, thresh in self.terms:
            if mblock.size == 0 or thresh.size == 0:
                continue
            if op in ("<", "<="):
                holds = _NP[op](mblock.max(), thresh.min())
            else:
                holds = _NP[op](mblock.min(), thresh.max())
            if not holds:
                return False
        return True

    def conjoin(self, other: Predicate | np.ndarray) -> Predicate:
        """This predicate AND another (or AND a uniform (1, *S) mask)."""
        if isinstance(other, np.ndarray):
            uniform = other if self.uniform is None else self.uniform & other
            return Predicate(uniform, list(self.terms))
        if self.uniform is None:
            uniform = other.uniform
        elif other.uniform is None:
            uniform = self.uniform
        else:
            uniform = self.uniform & other.uniform
        return Predicate(uniform, self.terms + other.terms)


def compare(op: str, lhs: Affine | np.ndarray, rhs: Affine | np.ndarray) -> Predicate:
    """``lhs OP rhs`` as a predicate; each side is an Affine or a uniform (1, *S) / (1,) array."""
    ls, lb = (
        (lhs.scalar, lhs.block) if isinstance(lhs, Affine) else (np.zeros(1, np.int64), lhs.astype(np.int64))
    )
    rs, rb = (
        (rhs.scalar, rhs.block) if isinstance(rhs, Affine) else (np.zeros(1, np.int64), rhs.astype(np.int64))
    )
    # ls[p] + lb[j] OP rs[p] + rb[j]  <=>  lb[j] - rb[j] OP rs[p] - ls[p]
    mblock = lb - rb
    thresh = rs - ls
    if thresh.size > 1 and np.all(thresh == thresh[0]):
        thresh = thresh[:1]
    if thresh.size == 1:
        return Predicate(_NP[op](mblock, thresh[0]), [])
    return Predicate(None, [(mblock, op, thresh)])


def _prefix_extremes(values: np.ndarray, keys: np.ndarray, op: str, thresh: np.ndarray):
    """Per threshold: max and min of ``values`` over lanes whose key satisfies ``key OP thresh``."""
    if op in ("<", "<="):
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        count = np.searchsorted(sorted_keys, thresh, side="left" if op == "<" else "right")
    else:
        order = np.argsort(-keys, kind="stable")
        sorted_keys = -keys[order]
        count = np.searchsorted(sorted_keys, -thresh, side="left" if op == ">" else "right")
    vals = values[order]
    pmax = np.maximum.accumulate(vals) if vals.size else vals
    pmin = np.minimum.accumulate(vals) if vals.size else vals
    has = count > 0
    idx = np.maximum(count - 1, 0)
    return (
        has,
        np.where(has, pmax[idx] if vals.size else 0, 0),
        np.where(has, pmin[idx] if vals.size else 0, 0),
    )


def _extremes(block: np.ndarray) -> tuple[int, int]:
    return int(block.min()), int(block.max())


def _bits(block: np.ndarray) -> int:
    return int(np.bitwise_or.reduce(block, axis=None))


def prove(addr: Affine, mask: Predicate | np.ndarray | None, lo: int, hi: int, itemsize: int) -> bool:
    """True when, for every program, every enabled lane's address lies in [lo, hi - itemsize].

    ``addr`` holds byte addresses. Alignment is part of the proof (every address a multiple of the
    item size). False means "not proven": the caller checks lane by lane.
    """
    if itemsize & (itemsize - 1) == 0 and (
        np.bitwise_or.reduce(addr.scalar) | fact(addr.block, "or", _bits)
    ) & (itemsize - 1):
        return False
    if isinstance(mask, Predicate) and mask.all_true():
        mask = None  # every lane enabled (a loop's full tiles): the block's kept extremes decide
    if isinstance(mask, Predicate):
        if len(mask.terms) > 1:
            return False
        shape = np.broadcast_shapes(
            addr.block.shape,
            *[t[0].shape for t in mask.terms],
            *([mask.uniform.shape] if mask.uniform is not None else []),
        )
        block = np.broadcast_to(addr.block, shape).reshape(-1)
        keep = (
            np.ones(block.shape, dtype=bool)
            if mask.uniform is None
            else np.broadcast_to(mask.uniform, shape).reshape(-1)
        )
        if mask.terms:
            mblock, op, thresh = mask.terms[0]
            keys = np.broadcast_to(mblock, shape).reshape(-1)[keep]
            has, bmax, bmin = _prefix_extremes(block[keep], keys, op, thresh)
            scalar = np.broadcast_to(addr.scalar, has.shape) if addr.scalar.size != has.size else addr.scalar
            if has.size != scalar.size and scalar.size != 1:
                return False
            return bool(np.all(~has | ((scalar + bmax <= hi - itemsize) & (scalar + bmin >= lo))))
        block = block[keep]
    elif isinstance(mask, np.ndarray):
        shape = np.broadcast_shapes(addr.block.shape, mask.shape)
        block = np.broadcast_to(addr.block, shape).reshape(-1)[np.broadcast_to(mask, shape).reshape(-1)]
    else:
        block = addr.block
    if block.size == 0:
        return True
    bmin, bmax = fact(block, "extremes", _extremes) if block is addr.block else _extremes(block)
    return bool(np.all((addr.scalar + bmax <= hi - itemsize) & (addr.scalar + bmin >= lo)))
