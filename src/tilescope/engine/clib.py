"""The engine's small C kernels: built at install (optional extensions in ``setup.py``, no Python
API), loaded with ctypes, and used only where, checked once per process, they give the NumPy path's
bits.

The check's inputs and the NumPy path's bits on them are stored with the package
(``data/NAME_check/*.npy``, written by ``tests/engine/make_check_data.py``; a test keeps them equal to
a fresh NumPy run), so a process's first launch runs only the C kernel on them, not the slow NumPy
path."""

from __future__ import annotations

import ctypes
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

Library = TypeVar("Library")
_DATA = Path(__file__).parent / "data"


def built(module: str) -> str | None:
    """The path of the shared library the install built as ``module`` (a dotted name), or None where
    it built none (no C compiler)."""
    spec = importlib.util.find_spec(module)
    return spec.origin if spec is not None and spec.origin else None


def checked(module: str, load: Callable[[str], Library], agrees: Callable[[Library], bool]) -> Library | None:
    """``load(path)`` of the library built as ``module``, where it was built, loads here and
    ``agrees`` (floating-point warnings off); else None, and the caller keeps its NumPy path."""
    path = built(module)
    if path is None:
        return None
    try:
        lib = load(path)
        with np.errstate(all="ignore"):
            return lib if agrees(lib) else None
    except OSError:  # a library that does not load here
        return None


def same_bits(x: np.ndarray, y: np.ndarray) -> bool:
    """Equal bit for bit, NaNs of any payload counting as equal (a NaN's payload is the CPU's)."""
    same = (x.view(np.uint32) == y.view(np.uint32)) | (np.isnan(x) & np.isnan(y))
    return x.shape == y.shape and x.dtype == y.dtype and bool(np.all(same))


def declare(lib: ctypes.CDLL, signatures: dict[str, tuple[list, object]]) -> ctypes.CDLL:
    """``lib`` with each named function's (argument types, result type) declared."""
    for name, (argtypes, restype) in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = argtypes, restype
    return lib


def check_dir(name: str) -> Path:
    """The folder of the stored check of C kernel ``name`` (``fma_chain``, ``sfu``, ``tree_sum``;
    ``hardware_fma``: torch's FMA): one ``.npy``
    an array (plain files: an ``.npz`` costs a zip reader and a codec import on first use)."""
    return _DATA / f"{name}_check"


def check_data(name: str) -> dict[str, np.ndarray]:
    """The stored check of C kernel ``name``: its inputs and the NumPy path's bits on them."""
    folder = check_dir(name)
    return {f[: -len(".npy")]: np.load(folder / f) for f in os.listdir(folder) if f.endswith(".npy")}


def packed(arrays: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Float32 arrays as a stored check holds them (3 files, not one each: a first use loads them):
    ``values``, flattened one after another; ``shapes``, theirs (leading ones padding each to the
    largest rank); ``ranks``."""
    rank = max((x.ndim for x in arrays), default=0)
    return {
        "values": np.concatenate([np.asarray(x, np.float32).ravel() for x in arrays]),
        "shapes": np.array([(1,) * (rank - x.ndim) + x.shape for x in arrays], np.int64).reshape(-1, rank),
        "ranks": np.array([x.ndim for x in arrays], np.int64),
    }


def unpacked(stored: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The arrays of :func:`packed`, in order."""
    shapes = stored["shapes"]
    parts = np.split(stored["values"], np.cumsum(np.prod(shapes, axis=-1))[:-1])
    return [
        part.reshape(tuple(shape[len(shape) - rank :]))
        for part, shape, rank in zip(parts, shapes.tolist(), stored["ranks"].tolist(), strict=True)
    ]
