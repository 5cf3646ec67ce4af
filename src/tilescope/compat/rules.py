"""Host-side check of the tensor-descriptor rules, to choose a lowering before a kernel compiles."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..engine.descriptor_rules import runtime_rules, static_rules


def _element_size(base: Any) -> int:
    if hasattr(base, "element_size"):  # torch.Tensor
        return int(base.element_size())
    if hasattr(base, "itemsize"):  # numpy.ndarray
        return int(base.itemsize)
    raise TypeError(f"cannot tell the element size of {type(base).__name__}; pass element_size=")


def _address(base: Any) -> int:
    if hasattr(base, "data_ptr"):
        return int(base.data_ptr())
    if hasattr(base, "ctypes"):
        return int(base.ctypes.data)
    raise TypeError(f"cannot tell the address of {type(base).__name__}")


def descriptor_violations(
    base: Any,
    strides: Sequence[int],
    block_shape: Sequence[int],
    element_size: int | None = None,
    base_offset: int = 0,
) -> list[str]:
    """Return why a tensor descriptor can't serve this block pointer (empty when it can).

    ``base`` is the tensor the kernel's pointer argument receives, ``strides`` and ``block_shape``
    are the block pointer's (in elements), ``base_offset`` is any element offset the kernel adds to
    the pointer before ``make_block_ptr``. The rules are the engine's (``engine/descriptor_rules``).
    """
    size = element_size or _element_size(base)
    broken = static_rules(strides, block_shape)
    broken += runtime_rules(_address(base) + base_offset * size, strides, block_shape, size)
    return [b.message for b in broken]


def descriptor_ok(
    base: Any,
    strides: Sequence[int],
    block_shape: Sequence[int],
    element_size: int | None = None,
    base_offset: int = 0,
) -> bool:
    """Return True when the tensor-descriptor lowering is valid for this block pointer.

    Meant for ``@triton.heuristics``, e.g.
    ``{"USE_DESC": lambda a: descriptor_ok(a["x_ptr"], (a["stride_xm"], 1), (a["BM"], a["BN"]))}``.
    """
    return not descriptor_violations(base, strides, block_shape, element_size, base_offset)
