"""Work and arithmetic intensity of a launch, placed on a GPU's roofline.

FLOPs come from the engine's compute counts (what the compute records would say, one
:class:`~tilescope.ir.ComputeCount` per distinct op): a ``dot`` of an ``(M, N)`` result over ``k`` is
``2 M N k`` per program; a float ``elementwise`` op one per element (``fma`` two; casts and selects
none); a float ``reduce``/``scan`` one per input element. Bytes are the distinct 32-byte sectors the launch
touches (each moved from device memory once: a perfect L2), and the sectors every request moves
(no cache at all) as the other bound.
"""

from __future__ import annotations

import math

import numpy as np

from ...gpu.specs import Roof
from ...ir import ComputeCount, OpKind

_FLOATS = ("fp16", "bf16", "fp32", "fp64")
_NOT_FLOPS = frozenset({"cast", "select", "bitcast", "where"})


def roof_of(count: ComputeCount) -> str:
    """The compute roof an op's FLOPs run on (tensor cores for dots, by operand type)."""
    if count.kind is OpKind.DOT:
        operand = count.operands[0][0] if count.operands else count.dtype
        if operand.startswith("fp8"):
            return "fp8"
        if operand in ("fp16", "bf16"):
            return operand
        if operand == "fp32" and str(dict(count.attrs).get("precision", "ieee")).startswith("tf32"):
            return "tf32"
        return "fp64" if operand == "fp64" else "fp32"
    return "fp64" if count.dtype == "fp64" else "fp32"


def flops(count: ComputeCount) -> int:
    """FLOPs of one compute op over all the programs that ran it."""
    programs = count.programs
    attrs = dict(count.attrs)
    if count.kind is OpKind.DOT:
        k = int(attrs.get("k") or (count.operands[0][1][-1] if count.operands else 0))
        return 2 * math.prod(count.shape) * k * programs
    if count.dtype not in _FLOATS:
        return 0
    if count.kind is OpKind.ELEMENTWISE:
        op = attrs.get("op", "")
        if op in _NOT_FLOPS:
            return 0
        return (2 if op == "fma" else 1) * math.prod(count.shape) * programs
    if count.kind in (OpKind.REDUCE, OpKind.SCAN) and count.operands:
        return math.prod(count.operands[0][1]) * programs
    return 0


def place(work: dict[str, int], dram_bytes: int, request_bytes: int, roof: Roof) -> dict:
    """The launch against ``roof``: intensity, the ridge point, the bound and the floor times."""
    total = sum(work.values())
    main = max(sorted(work), key=lambda r: work[r]) if total else "fp32"
    compute_s = sum(n / roof.peak(r) for r, n in work.items())
    memory_s = dram_bytes / roof.bandwidth
    intensity = total / dram_bytes if dram_bytes else math.inf
    ridge = roof.peak(main) / roof.bandwidth
    return {
        "flops": total,
        "flops_by_roof": dict(sorted(work.items())),
        "dram_bytes": dram_bytes,
        "request_bytes": request_bytes,
        "intensity": _round(intensity),
        "roof": main,
        "ridge": _round(ridge),
        "bound": "memory" if memory_s >= compute_s else "compute",
        "floor_us": {"memory": _round(memory_s * 1e6), "compute": _round(compute_s * 1e6)},
        "attainable_tflops": _round(min(roof.peak(main), intensity * roof.bandwidth) / 1e12),
    }


def _round(x: float) -> float | None:
    """Four significant digits (JSON has no infinity: None)."""
    if not np.isfinite(x):
        return None
    return float(f"{x:.4g}")
