"""Small helpers the suite's benchmarks share: seeded inputs and the torch import."""

from __future__ import annotations

from typing import Any


def torch() -> Any:
    """The torch module, imported on first use so kernel modules load without it."""
    import torch as _torch

    return _torch


def randn(shape: tuple[int, ...], dtype: Any, device: str, seed: int, scale: float = 1.0) -> Any:
    """Standard-normal values of ``shape`` drawn from a generator seeded with ``seed``, cast to ``dtype``."""
    t = torch()
    gen = t.Generator(device=device).manual_seed(seed)
    return (t.randn(shape, generator=gen, device=device, dtype=t.float32) * scale).to(dtype)


def next_pow2(n: int) -> int:
    """The smallest power of two at least ``n``."""
    return 1 << max(0, (n - 1).bit_length())
