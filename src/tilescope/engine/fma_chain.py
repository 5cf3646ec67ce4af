"""The FMA chain of an fp32 ``ieee`` dot: ``acc = fma(a[..., :, k], b[..., k, :], acc)`` for k in
order, each fused multiply-add rounded once in float32, as each thread of the H200's compiled code
runs it.

Three implementations give the same bits. The C kernel ``_fma_chain.c`` (built at install,
loaded with ctypes) keeps a tile of outputs in registers across the whole k loop; it is used when
it was built and, checked once per process, agrees with the NumPy path on inputs built to catch a
separately rounded product, flushed subnormals, wrong tails and broadcasts. Else torch's float32
``addcmul`` (one rounding on this CPU, :func:`numerics.hardware_fma`) makes one pass over the output
block per k; else NumPy does (:func:`numerics._fma_f32`, exact).
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable
from functools import cache

import numpy as np

from . import clib
from . import numerics as nx

#: (a, b, acc) -> acc + a @ b as the chain, in a fresh float32 array
Chain = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _output(a: np.ndarray, b: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """A fresh C-contiguous float32 copy of the accumulator, broadcast to the product's shape
    (the operands' program axes may differ: 1 vs B)."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    shape = np.broadcast_shapes(acc.shape, (*batch, a.shape[-2], b.shape[-1]))
    return np.array(np.broadcast_to(acc, shape), dtype=np.float32, order="C")


def numpy_chain(a: np.ndarray, b: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """The chain in NumPy, one exact fused multiply-add pass over the output block per k."""
    c = _output(a, b, acc)
    for k in range(a.shape[-1]):
        c = nx._fma_f32(a[..., :, k : k + 1], b[..., k : k + 1, :], c, c.shape)
    return c


def torch_chain(a: np.ndarray, b: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """The chain through torch's ``addcmul`` (:func:`numerics.hardware_fma` must not be None), in
    place, one pass per k."""
    torch = nx.hardware_fma()
    c = _output(a, b, acc)
    out = torch.from_numpy(c)
    columns = nx.as_torch(torch, a).unsqueeze(-1).unbind(-2)  # a[..., :, k:k+1] for each k
    rows = nx.as_torch(torch, b).contiguous().unsqueeze(-2).unbind(-3)  # b[..., k:k+1, :], dense
    with nx.one_torch_thread(torch):  # K short passes: each would pay the thread pool's hand-off
        for column, row in zip(columns, rows, strict=True):
            out.addcmul_(column, row)
    return c


def _programs(x: np.ndarray, batch: tuple[int, ...], rows: int, cols: int) -> tuple[np.ndarray, int]:
    """``x`` (program axes, then a matrix) broadcast to ``rows`` x ``cols`` matrices, as a contiguous
    float32 stack, and the stride in elements from one program's matrix to the next (0: one matrix
    for every program)."""
    if math.prod(x.shape[:-2]) == 1:
        return np.ascontiguousarray(np.broadcast_to(x.reshape(x.shape[-2:]), (rows, cols)), np.float32), 0
    return np.ascontiguousarray(np.broadcast_to(x, (*batch, rows, cols)), np.float32), rows * cols


def _compiled_chain(lib: ctypes.CDLL, a: np.ndarray, b: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """The chain through the C kernel ``lib``."""
    c = _output(a, b, acc)
    (m, n), k = c.shape[-2:], a.shape[-1]
    if c.size == 0:
        return c
    a_mats, a_stride = _programs(a, c.shape[:-2], m, k)
    b_mats, b_stride = _programs(b, c.shape[:-2], k, n)
    panel = np.empty(max(k, 1) * lib.tilescope_fma_chain_nr(), np.float32)
    pointers = (x.ctypes.data for x in (a_mats, b_mats, c))
    lib.tilescope_fma_chain(*pointers, c.size // (m * n), a_stride, b_stride, m, n, k, panel.ctypes.data)
    return c


_MODULE = "tilescope.engine._fma_chain"


def library(path: str) -> ctypes.CDLL:
    """The C kernel built at ``path``, its signature declared."""
    size = ctypes.c_ssize_t
    return clib.declare(
        ctypes.CDLL(path),
        {
            "tilescope_fma_chain": ([ctypes.c_void_p] * 3 + [size] * 6 + [ctypes.c_void_p], None),
            "tilescope_fma_chain_nr": ([], ctypes.c_int),
        },
    )


def _load() -> ctypes.CDLL | None:
    """The C kernel the install built, or None where it built none."""
    path = clib.built(_MODULE)
    return None if path is None else library(path)


def _scaled_normals(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """float32 normals times 2**e, e uniform in [-20, 20): products of many magnitudes."""
    return (rng.standard_normal(shape) * np.exp2(rng.integers(-20, 20, shape))).astype(np.float32)


def _check_cases() -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(a, b, acc) triples where a wrong chain shows: products whose rounding error is all that is
    left (an unfused multiply-add gives zero), subnormal products and sums, inf, NaN and signed
    zeros, m and n tails around the kernel's tile, one program's operand against several, a
    transposed operand, k = 0 and 1."""
    rng = np.random.default_rng(11)
    a = rng.uniform(1, 2, (3, 7, 1)).astype(np.float32)
    b = rng.uniform(1, 2, (3, 1, 19)).astype(np.float32)
    error_only = (a, b, -(a.astype(np.float64) * b).astype(np.float32))
    tiny = (rng.standard_normal((2, 13, 9)) * 2.0**-70).astype(np.float32)
    subnormal = (tiny, tiny.transpose(0, 2, 1) * np.float32(2**-3), (tiny[:, :, :1] * 2.0**-60))
    special = rng.standard_normal((2, 5, 6)).astype(np.float32)
    special.flat[::7] = np.resize(np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32), 9)
    zeros = (np.full((1, 3, 2), -0.0, np.float32), np.ones((1, 2, 17), np.float32), np.float32(-0.0))
    wide, wide_b = (_scaled_normals(rng, shape) for shape in ((3, 8, 37), (1, 37, 33)))
    acc = rng.standard_normal((3, 8, 33)).astype(np.float32)
    return [
        error_only,
        subnormal,
        (special, special.transpose(0, 2, 1).copy(), np.float32(1.0)),
        zeros,
        (wide, wide_b, acc),
        (wide[:1, :5], wide_b.repeat(3, 0)[:, :, :15], acc[:, :5, :15]),
        (wide[:, :, :0], wide_b[:, :0], acc),
        (wide.transpose(0, 2, 1)[:, :8, :], wide[:1, :, :20], np.float32(0.0)),
    ]


def check_expected() -> dict[str, np.ndarray]:
    """The check as stored (``data/fma_chain_check/``, :func:`clib.packed`): each case's operands
    ``a``, ``b``, ``acc`` from :func:`_check_cases` (the accumulator as a 3-d block) and ``out``, the
    NumPy chain's bits on them."""
    arrays = []
    with np.errstate(all="ignore"):
        for a, b, acc in _check_cases():
            acc = np.asarray(acc, np.float32)
            acc = acc.reshape((1,) * (3 - acc.ndim) + acc.shape)
            arrays += [a, b, acc, numpy_chain(a, b, acc)]
    return clib.packed(arrays)


def _stored_cases() -> list[list[np.ndarray]]:
    """The stored check's cases, each [a, b, acc, out] (:func:`check_expected`)."""
    arrays = clib.unpacked(clib.check_data("fma_chain"))
    return [arrays[i : i + 4] for i in range(0, len(arrays), 4)]


def _agrees(lib: ctypes.CDLL) -> bool:
    """The C kernel ``lib`` gives the NumPy chain's bits on :func:`_check_cases` (as stored)."""
    return all(clib.same_bits(_compiled_chain(lib, a, b, acc), out) for a, b, acc, out in _stored_cases())


@cache
def compiled_chain() -> Chain | None:
    """The C kernel's chain, where the install built it and it gives the NumPy path's bits on
    :func:`_check_cases` (checked once per process), else None."""
    lib = clib.checked(_MODULE, library, _agrees)
    return None if lib is None else lambda a, b, acc: _compiled_chain(lib, a, b, acc)


def fma_chain(a: np.ndarray, b: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """acc + a @ b in float32 as the compiled code's FMA loop: ``acc = fma(a[:, k], b[k, :], acc)``
    for k in order, each rounded once (program axis first; the operands' may be 1 or B long)."""
    chain = compiled_chain()
    if chain is not None:
        return chain(a, b, acc)
    return (torch_chain if nx.hardware_fma() is not None else numpy_chain)(a, b, acc)
