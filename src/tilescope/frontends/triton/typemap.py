"""Triton's types as the engine's dtypes (by name: Triton's pointer types are not hashable)."""

from __future__ import annotations

from functools import cache
from typing import Any

import triton.language as tl

from ...engine import dtypes
from ...engine.dtypes import DType

#: Triton's scalar type names -> engine dtypes
_NAMES = {
    "int1": dtypes.BOOL,
    "int8": dtypes.INT8,
    "int16": dtypes.INT16,
    "int32": dtypes.INT32,
    "int64": dtypes.INT64,
    "uint8": dtypes.UINT8,
    "uint16": dtypes.UINT16,
    "uint32": dtypes.UINT32,
    "uint64": dtypes.UINT64,
    "fp16": dtypes.FP16,
    "bf16": dtypes.BF16,
    "fp32": dtypes.FP32,
    "fp64": dtypes.FP64,
    "fp8e4nv": dtypes.FP8E4M3FN,
    "fp8e5": dtypes.FP8E5M2,
    "fp8e4b15": dtypes.FP8E4M3B15,
    "fp8e4b8": dtypes.FP8E4M3FNUZ,
    "fp8e5b16": dtypes.FP8E5M2FNUZ,
    "void": dtypes.VOID,
}
_BACK = {v.name: k for k, v in _NAMES.items()}


@cache
def _by_name(name: str) -> DType:
    if name.startswith("pointer<") and name.endswith(">"):
        return dtypes.pointer(_by_name(name[len("pointer<") : -1]))
    found = _NAMES.get(name)
    if found is None:
        raise TypeError(f"tilescope has no engine type for Triton type {name}")
    return found


def to_engine(ty: Any) -> DType:
    """The engine dtype of a Triton scalar or pointer type (a block type gives its element's)."""
    if isinstance(ty, tl.block_type):
        ty = ty.element_ty
    return _by_name(str(ty))


def to_triton(ty: DType) -> Any:
    """The Triton type of an engine dtype."""
    if ty.is_pointer:
        return tl.pointer_type(to_triton(ty.pointee))
    return tl.dtype(_BACK[ty.name])
