"""The tensor-descriptor (TMA) rules, in one place: the engine, ``compat`` and ``migrate`` use them.

A descriptor needs a 16-byte aligned base, a last stride of 1, every other stride a multiple of
16 bytes, a block whose last dimension spans at least 16 bytes, rank 1 to 5 and block dimensions
of at most 256. Checks take plain ints (host side) or per-program NumPy arrays (the engine); a
broken rule comes back with the lanes that break it, a message and the usual fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

ALIGN_BYTES = 16
MIN_BLOCK_BYTES = 16  # the block's last dimension
MAX_RANK = 5
MAX_BOX_DIM = 256


@dataclass(frozen=True)
class Broken:
    """One broken rule: which (``bad``: a bool or a per-program array), why, and the fix."""

    rule: str
    message: str
    fix: str
    bad: Any


def _value(x: Any) -> str:
    """A number for a message: the value itself, or the first bad one of an array."""
    arr = np.asarray(x).reshape(-1)
    return str(int(arr[0])) if arr.size else "?"


def runtime_rules(
    base: Any, strides: Sequence[Any], block_shape: Sequence[int], itemsize: int
) -> list[Broken]:
    """Rules that depend on runtime values: base alignment, strides, and the inner block's bytes.

    ``base`` is the byte address of element 0 and ``strides`` are in elements (ints or arrays).
    """
    broken = []
    misaligned = np.asarray(base) % ALIGN_BYTES != 0
    if np.any(misaligned):
        broken.append(
            Broken(
                "base-alignment",
                f"base address is not {ALIGN_BYTES}-byte aligned",
                f"allocate with {ALIGN_BYTES}-byte alignment or slice at a multiple of {ALIGN_BYTES} bytes",
                misaligned,
            )
        )
    if strides:
        last = np.asarray(strides[-1])
        if np.any(last != 1):
            broken.append(
                Broken(
                    "last-stride",
                    f"last stride is {_value(last[last != 1])}, not 1",
                    "make the last dimension contiguous",
                    last != 1,
                )
            )
    for dim, stride in enumerate(strides[:-1]):
        s = np.asarray(stride)
        bad = (s * itemsize) % ALIGN_BYTES != 0
        if np.any(bad):
            broken.append(
                Broken(
                    "stride-alignment",
                    f"stride {_value(s[bad])} of dimension {dim} is not a multiple of {ALIGN_BYTES} bytes",
                    f"pad the row length so every row starts {ALIGN_BYTES}-byte aligned",
                    bad,
                )
            )
    if block_shape and block_shape[-1] * itemsize < MIN_BLOCK_BYTES:
        broken.append(
            Broken(
                "block-bytes",
                f"last block dimension is {block_shape[-1] * itemsize} bytes, under {MIN_BLOCK_BYTES}",
                f"use a block of at least {MIN_BLOCK_BYTES} bytes in the last dimension",
                True,
            )
        )
    return broken


def static_rules(strides: Sequence[Any], block_shape: Sequence[int]) -> list[Broken]:
    """Rules of the descriptor's shape alone: rank, one stride per dimension, the TMA box limit."""
    rank = len(block_shape)
    broken = []
    if not 1 <= rank <= MAX_RANK:
        broken.append(Broken("rank", f"rank {rank} is outside 1..{MAX_RANK}", "use 1 to 5 dimensions", True))
    if len(strides) != rank:
        broken.append(
            Broken(
                "stride-count",
                f"{len(strides)} strides for a rank-{rank} block",
                "give one stride per dimension",
                True,
            )
        )
    for dim, extent in enumerate(block_shape):
        if extent > MAX_BOX_DIM:
            broken.append(
                Broken(
                    "box-dim",
                    f"block dimension {dim} is {extent}, over the TMA box limit {MAX_BOX_DIM}",
                    f"use blocks of at most {MAX_BOX_DIM} per dimension",
                    True,
                )
            )
    return broken
