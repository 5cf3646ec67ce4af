"""The engine's own dtypes: name, bits, kind and what a pointer points to; storage via NumPy/ml_dtypes.

Frontends map their DSL's types to these at the boundary (Triton's ``tl.float8e4nv`` is
:data:`FP8E4M3FN`). Names are neutral and stable: they appear in op records, traces and reports.

Storage: integers and fp16/fp32/fp64 as NumPy's own types, bf16 as ``ml_dtypes.bfloat16``, every
fp8 format as its raw ``uint8`` bits (conversions go through tables in :mod:`numerics`, so formats
``ml_dtypes`` lacks take the same path), pointers as ``uint64`` byte addresses.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np


@functools.cache
def bf16_storage() -> np.dtype:
    """NumPy's dtype for bf16 values (``ml_dtypes.bfloat16``; the extension loads on first use)."""
    import ml_dtypes  # ~15 ms to load: only kernels that touch bf16 pay it

    return np.dtype(ml_dtypes.bfloat16)


@dataclass(frozen=True)
class DType:
    """A scalar type of the engine: ``kind`` is "bool", "int", "uint", "float", "pointer" or "void"."""

    name: str
    bits: int
    kind: str
    pointee: DType | None = None

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"DType({self.name})"

    @property
    def itemsize(self) -> int:
        """Bytes one element occupies in memory (int1 takes one byte)."""
        return max(1, self.bits // 8)

    @functools.cached_property
    def storage(self) -> np.dtype:
        """The NumPy dtype the engine stores values of this type in."""
        return _storage(self)

    @property
    def is_float(self) -> bool:
        """True for every floating-point format."""
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        """True for signed and unsigned integers and bool."""
        return self.kind in ("int", "uint", "bool")

    @property
    def is_signed(self) -> bool:
        """True for signed integers (floats are signed too, but this is about integer arithmetic)."""
        return self.kind == "int"

    @property
    def is_pointer(self) -> bool:
        """True for pointer types."""
        return self.kind == "pointer"

    @property
    def is_bool(self) -> bool:
        """True for the 1-bit boolean."""
        return self.kind == "bool"

    @property
    def is_fp8(self) -> bool:
        """True for every 8-bit float format."""
        return self.kind == "float" and self.bits == 8

    @property
    def is_low_float(self) -> bool:
        """True for floats narrower than fp32 (their arithmetic runs in fp32 and rounds once)."""
        return self.kind == "float" and self.bits < 32


@dataclass(frozen=True)
class BlockType:
    """A block of ``element`` with a per-program ``shape`` (how frontends name a tile's type)."""

    element: DType
    shape: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.element}[{', '.join(map(str, self.shape))}]"


BOOL = DType("int1", 1, "bool")
INT8 = DType("int8", 8, "int")
INT16 = DType("int16", 16, "int")
INT32 = DType("int32", 32, "int")
INT64 = DType("int64", 64, "int")
UINT8 = DType("uint8", 8, "uint")
UINT16 = DType("uint16", 16, "uint")
UINT32 = DType("uint32", 32, "uint")
UINT64 = DType("uint64", 64, "uint")
FP16 = DType("fp16", 16, "float")
BF16 = DType("bf16", 16, "float")
FP32 = DType("fp32", 32, "float")
FP64 = DType("fp64", 64, "float")
#: OCP e4m3 (NVIDIA's fp8e4m3: no infinities, one NaN code)
FP8E4M3FN = DType("fp8e4m3fn", 8, "float")
#: OCP e5m2 (IEEE-like, with infinities)
FP8E5M2 = DType("fp8e5m2", 8, "float")
#: e4m3 with exponent bias 15 and no NaN (Triton's fp8e4b15)
FP8E4M3B15 = DType("fp8e4m3b15", 8, "float")
#: AMD's e4m3 and e5m2 "fnuz" formats (no negative zero; 0x80 is NaN)
FP8E4M3FNUZ = DType("fp8e4m3fnuz", 8, "float")
FP8E5M2FNUZ = DType("fp8e5m2fnuz", 8, "float")
VOID = DType("void", 0, "void")

SCALARS: tuple[DType, ...] = (
    BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64,
    FP16, BF16, FP32, FP64, FP8E4M3FN, FP8E5M2, FP8E4M3B15, FP8E4M3FNUZ, FP8E5M2FNUZ, VOID,
)  # fmt: skip
FP8: tuple[DType, ...] = (FP8E4M3FN, FP8E5M2, FP8E4M3B15, FP8E4M3FNUZ, FP8E5M2FNUZ)
_BY_NAME = {t.name: t for t in SCALARS}

_STORAGE = {
    "int1": np.bool_,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "fp16": np.float16,
    "fp32": np.float32,
    "fp64": np.float64,
}


def _storage(ty: DType) -> np.dtype:
    if ty.kind == "pointer":
        return np.dtype(np.uint64)
    if ty.is_fp8:
        return np.dtype(np.uint8)
    if ty.name == "bf16":
        return bf16_storage()
    found = _STORAGE.get(ty.name)
    if found is None:
        raise TypeError(f"the engine has no storage for values of type {ty}")
    return np.dtype(found)


@functools.cache
def pointer(to: DType) -> DType:
    """The pointer type to ``to`` (``pointer<fp32>``); one object per pointee."""
    return DType(f"pointer<{to.name}>", 64, "pointer", to)


def named(name: str) -> DType:
    """The scalar dtype called ``name`` (``fp32``, ``int1``, ``pointer<bf16>``)."""
    if name.startswith("pointer<") and name.endswith(">"):
        return pointer(named(name[len("pointer<") : -1]))
    found = _BY_NAME.get(name)
    if found is None:
        raise KeyError(f"no engine dtype is called {name!r}")
    return found


def element(ty: DType | BlockType) -> DType:
    """The scalar type of a scalar or block type."""
    return ty.element if isinstance(ty, BlockType) else ty


def integer(bits: int, signed: bool) -> DType:
    """The integer dtype of ``bits`` bits (8, 16, 32, 64) and signedness."""
    return named(f"{'' if signed else 'u'}int{bits}")


def of_storage(dtype: np.dtype) -> DType:
    """The engine dtype of a NumPy storage dtype (bool, ints, fp16/32/64, bfloat16)."""
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16" and dtype == bf16_storage():  # such an array means ml_dtypes is loaded
        return BF16
    for name, storage in _STORAGE.items():
        if np.dtype(storage) == dtype:
            return _BY_NAME[name]
    raise TypeError(f"NumPy dtype {dtype} has no engine dtype")
