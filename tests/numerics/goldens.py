"""Read the H200 numerics goldens and measure how far another executor lands from them, in ulps."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

GOLDEN = Path(__file__).resolve().parent / "golden"
_TORCH_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def manifest() -> dict:
    """The recording's manifest: GPU, driver, versions, date, and one entry per case."""
    return json.loads((GOLDEN / "manifest.json").read_text())


def load(name: str) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """(inputs, outputs) of case ``name`` as CPU torch tensors with the recorded bits."""
    with np.load(GOLDEN / f"{name}.npz", allow_pickle=False) as data:
        meta = json.loads(str(data["__meta__"]))
        tensors = {}
        for key, dtype in meta["dtypes"].items():
            raw = np.ascontiguousarray(data[key])
            signed = raw.view(np.dtype(f"int{8 * raw.itemsize}")) if raw.itemsize > 1 else raw
            t = torch.from_numpy(signed.copy()).view(_TORCH_BITS[raw.itemsize])
            tensors[key] = t.view(getattr(torch, dtype))
    inputs = {k.split(".", 1)[1]: v for k, v in tensors.items() if k.startswith("in.")}
    outputs = {k.split(".", 1)[1]: v for k, v in tensors.items() if k.startswith("out.")}
    return inputs, outputs


def ordinal(t: torch.Tensor) -> np.ndarray:
    """Float bits mapped to integers that count representable values (adjacent floats differ by 1)."""
    raw = t.contiguous().view(_TORCH_BITS[t.element_size()]).numpy().astype(np.int64)
    bits = 8 * t.element_size()
    return np.where(raw < 0, -(raw & ((1 << (bits - 1)) - 1)), raw)


def ulps(got: torch.Tensor, want: torch.Tensor) -> np.ndarray:
    """Per-element distance in units in the last place of the output's dtype (0: identical bits);
    NaN against NaN counts 0, NaN against a number a huge distance. Integers: absolute difference."""
    if not got.dtype.is_floating_point:
        return np.abs(got.numpy().astype(np.int64) - want.numpy().astype(np.int64))
    dist = np.abs(ordinal(got) - ordinal(want))
    g, w = got.float().numpy(), want.float().numpy()
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    return np.where(nan_g & nan_w, 0, np.where(nan_g | nan_w, 1 << 40, dist))


def significant(t) -> np.ndarray:
    """Elements at least 2**-8 of the largest finite magnitude of ``t`` (all of an integer ``t``)."""
    if not t.dtype.is_floating_point:
        return np.ones(t.shape, dtype=bool)
    mag = np.abs(t.float().numpy())
    finite = mag[np.isfinite(mag)]
    return ~np.isfinite(mag) | (mag >= (finite.max() if finite.size else 0) * 2.0**-8)


def max_ulps(got, want) -> int:
    """Largest ulp distance over the significant elements of ``want``."""
    return int(ulps(got, want)[significant(want)].max())
