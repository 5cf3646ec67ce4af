"""Accuracy of a benchmark's output against its reference, as one error number.

The default error is the relative Frobenius norm ``||out - ref|| / ||ref||`` computed in float64;
integer outputs (indices) count the fraction of elements that differ. Any NaN or infinity in the
output makes the error infinite, so a kernel that leaves its poisoned output unwritten never passes.
"""

from __future__ import annotations

import math
from typing import Any


def relative_error(out: Any, ref: Any) -> float:
    """Error of ``out`` against ``ref`` (tensors, or equal-length tuples of tensors: the worst part)."""
    if isinstance(out, (tuple, list)):
        if not isinstance(ref, (tuple, list)) or len(out) != len(ref):
            raise ValueError("output and reference have different structure")
        return max((relative_error(o, r) for o, r in zip(out, ref, strict=True)), default=0.0)
    if tuple(out.shape) != tuple(ref.shape):
        return math.inf
    if not out.dtype.is_floating_point and not ref.dtype.is_floating_point:
        if out.numel() == 0:
            return 0.0
        return float((out.long() != ref.long()).double().mean())
    o = out.double()
    if not bool(o.isfinite().all()):
        return math.inf
    r = ref.double()
    denom = float(r.norm())
    num = float((o - r).norm())
    return num / denom if denom > 0 else num


def poison(inputs: dict[str, Any]) -> None:
    """Fill every output buffer (keys starting with ``out``) with values no correct kernel leaves."""
    for key, value in inputs.items():
        if key.startswith("out"):
            value.fill_(math.nan if value.dtype.is_floating_point else -1)
