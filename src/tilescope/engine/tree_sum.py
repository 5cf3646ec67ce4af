"""A float32 reduction tree run row by row in C: the halves-wise adds of a ``tl.sum`` in the order
the compiled code adds (:func:`layout.ordered_sum`), without one fresh array per level.

The C kernel ``_tree_sum.c`` (built at install, loaded with ctypes) is used when it was built and,
checked once per process, gives the NumPy fold's bits on inputs with infinities, NaNs, signed zeros,
subnormals and cancellations; else the caller keeps its NumPy path. A sum that is not a NaN has the
same bits whatever loop adds it; which NaN two NaNs give depends on the loop (NumPy's vector loops
keep the first operand's, its strided ones the compiler's choice), so where a NaN comes out the
caller's NumPy path gives the result instead.
"""

from __future__ import annotations

import ctypes
from functools import cache

import numpy as np

from . import clib

_MODULE = "tilescope.engine._tree_sum"


def library(path: str) -> ctypes.CDLL:
    """The C kernel built at ``path``, its signature declared. Loaded as a ``PyDLL``: a call keeps
    the GIL (it takes about a millisecond; released, getting it back can wait out another thread's
    switch interval, 5 ms or more)."""
    size, pointer = ctypes.c_ssize_t, ctypes.c_void_p
    return clib.declare(
        ctypes.PyDLL(path),
        {"tilescope_tree_sum_f32": ([pointer, size, size, pointer, ctypes.c_int, pointer, pointer], None)},
    )


def renumbered(bits: tuple[int, ...]) -> tuple[int, ...]:
    """The bits a fold removes one after another, each as numbered once the earlier ones are gone
    (a removed bit shifts every higher one down)."""
    return tuple(b - sum(1 for e in bits[:j] if e < b) for j, b in enumerate(bits))


def numpy_fold(x: np.ndarray, bits: tuple[int, ...]) -> np.ndarray:
    """The tree sum of each row of ``x`` (rows x 2**len(bits)), folding ``bits`` in order, in NumPy."""
    a, (rows, m) = x, x.shape
    for b in renumbered(bits):
        a = a.reshape(rows, m // (2 << b), 2, 1 << b)
        m //= 2
        a = (a[:, :, 0] + a[:, :, 1]).reshape(rows, m)
    return a[:, 0]


def _compiled_fold(lib: ctypes.CDLL, x: np.ndarray, bits: tuple[int, ...]) -> np.ndarray:
    """:func:`numpy_fold` through the C kernel ``lib``."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    rows, n = x.shape
    out = np.empty(rows, np.float32)
    order = np.array(renumbered(bits), np.int32)
    scratch = np.empty(max(n, 1), np.float32)
    lib.tilescope_tree_sum_f32(x.ctypes.data, rows, n, order.ctypes.data, len(bits), out.ctypes.data,
                               scratch.ctypes.data)  # fmt: skip
    return out


def _check_cases() -> list[tuple[np.ndarray, tuple[int, ...]]]:
    """(rows, bits) where a wrong order or a fused or reassociated add shows."""
    rng = np.random.default_rng(12)
    wide = (rng.standard_normal((7, 1024)) * np.exp2(rng.integers(-30, 30, (7, 1024)))).astype(np.float32)
    special = rng.standard_normal((5, 64)).astype(np.float32)
    special.flat[::5] = np.resize(np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-41], np.float32), 64)
    cancel = np.tile(np.array([1e30, 1.0, -1e30, 2.0**-20], np.float32), (3, 4))
    return [
        (wide, (0, 1, 9, 6, 5, 4, 3, 2, 8, 7)),
        (wide, tuple(range(9, -1, -1))),
        (special, (5, 0, 4, 1, 3, 2)),
        (cancel, (0, 3, 1, 2)),
        (cancel, (2, 0, 3, 1)),
        (wide[:, :1], ()),
        (wide[:0], (0, 1, 9, 6, 5, 4, 3, 2, 8, 7)),
    ]


def check_expected() -> dict[str, np.ndarray]:
    """The check as stored (``data/tree_sum_check/``): per case of :func:`_check_cases` its rows and
    the NumPy fold's bits on them (:func:`clib.packed`), with ``bits``, every case's bits one after
    another, and ``nbits``, how many each."""
    arrays, orders = [], []
    with np.errstate(all="ignore"):
        for x, bits in _check_cases():
            arrays += [x, numpy_fold(x, bits)]
            orders.append(bits)
    return clib.packed(arrays) | {
        "bits": np.array([b for bits in orders for b in bits], np.int64),
        "nbits": np.array([len(bits) for bits in orders], np.int64),
    }


def _agrees(lib: ctypes.CDLL) -> bool:
    """The C kernel ``lib`` gives :func:`numpy_fold`'s bits on :func:`_check_cases` (as stored: a
    first use neither draws them, which would import ``numpy.random``, nor folds them in NumPy)."""
    stored = clib.check_data("tree_sum")
    arrays = clib.unpacked(stored)
    ends = np.cumsum(stored["nbits"]).tolist()
    counts = stored["nbits"].tolist()
    orders = [tuple(stored["bits"][end - n : end].tolist()) for end, n in zip(ends, counts, strict=True)]
    return all(
        clib.same_bits(_compiled_fold(lib, x, bits), want)
        for x, want, bits in zip(arrays[::2], arrays[1::2], orders, strict=True)
    )


@cache
def _library() -> ctypes.CDLL | None:
    return clib.checked(_MODULE, library, _agrees)


def tree_sum(x: np.ndarray, bits: tuple[int, ...]) -> np.ndarray | None:
    """The tree sum of each row of float32 ``x`` (..., 2**len(bits)) folding its index ``bits`` in
    order (leading axes kept), through the C kernel; None where it is not built or did not agree,
    and where some sum is a NaN."""
    lib = _library()
    if lib is None:
        return None
    out = _compiled_fold(lib, x.reshape(-1, x.shape[-1]), bits)
    return None if np.isnan(out).any() else out.reshape(x.shape[:-1])
