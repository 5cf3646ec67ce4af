"""Helpers the case modules share: typed random inputs, rounding references, Philox in NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..case import LOW_PRECISION

F64 = np.float64


def cdiv(a: int, b: int) -> int:
    """Ceiling division, as `triton.cdiv`."""
    return -(-a // b)


def normal(rng: np.random.Generator, shape: Any, dtype: Any = np.float32, scale: float = 1.0) -> np.ndarray:
    """Normal(0, scale) values rounded once to `dtype` (a numpy dtype or an ml_dtypes name)."""
    x = rng.standard_normal(shape) * scale
    return as_dtype(x, dtype)


def uniform(
    rng: np.random.Generator, shape: Any, lo: float, hi: float, dtype: Any = np.float32
) -> np.ndarray:
    """Uniform[lo, hi) values rounded once to `dtype`."""
    return as_dtype(rng.uniform(lo, hi, shape), dtype)


def as_dtype(x: Any, dtype: Any) -> np.ndarray:
    """`x` rounded to nearest even in `dtype` (ml_dtypes names accepted)."""
    dt = LOW_PRECISION.get(dtype, dtype) if isinstance(dtype, str) else dtype
    with np.errstate(over="ignore"):  # overflow to inf is the correctly rounded answer
        return np.asarray(x, dtype=F64).astype(dt)


def rnd(x: Any, dtype: Any) -> np.ndarray:
    """`x` (float64) rounded once to `dtype` and returned as float64: the correctly rounded result."""
    return as_dtype(x, dtype).astype(F64)


def f64(x: np.ndarray) -> np.ndarray:
    """Exact float64 view of any float array (bf16/fp8 included)."""
    return np.asarray(x).astype(F64)


# Philox 4x32-10 exactly as triton/language/random.py (3.6 and 3.9 agree).
_KEY_A, _KEY_B = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
_ROUND_A, _ROUND_B = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)


def philox4x32(seed: int, offsets: np.ndarray, n_rounds: int = 10) -> tuple[np.ndarray, ...]:
    """`tl.randint4x(seed, offsets)` for int32 offsets: four uint32 streams."""
    c0 = np.asarray(offsets).astype(np.int32).view(np.uint32).astype(np.uint64)
    zero = np.zeros_like(c0)
    c1, c2, c3 = zero.copy(), zero.copy(), zero.copy()
    s = seed & 0xFFFFFFFFFFFFFFFF
    k0, k1 = np.uint64(s & 0xFFFFFFFF), np.uint64(s >> 32)
    m32 = np.uint64(0xFFFFFFFF)
    for _ in range(n_rounds):
        _c0, _c2 = c0, c2
        c0 = ((_ROUND_B * _c2) >> np.uint64(32)) ^ c1 ^ k0
        c2 = ((_ROUND_A * _c0) >> np.uint64(32)) ^ c3 ^ k1
        c1 = (_ROUND_B * _c2) & m32
        c3 = (_ROUND_A * _c0) & m32
        k0 = (k0 + np.uint64(_KEY_A)) & m32
        k1 = (k1 + np.uint64(_KEY_B)) & m32
    return tuple(c.astype(np.uint32) for c in (c0, c1, c2, c3))


def uint_to_uniform(x: np.ndarray) -> np.ndarray:
    """`uint_to_uniform_float` for 32-bit streams, in float32 as the kernel computes it."""
    i = x.astype(np.uint32).view(np.int32)
    i = np.where(i < 0, ~i, i)
    return i.astype(np.float32) * np.float32(4.6566127342e-10)
