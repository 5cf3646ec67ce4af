"""Host-side check of the tensor-descriptor rules, to choose a lowering before a kernel compiles."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: TMA's rules, as Triton states them for ``tl.make_tensor_descriptor``.
ALIGN_BYTES = 16
MAX_RANK = 5
MAX_BOX_DIM = 256


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
    the pointer before ``make_block_ptr``.
    """
    size = element_size or _element_size(base)
    rank = len(block_shape)
    problems = []
    if not 1 <= rank <= MAX_RANK:
        problems.append(f"rank {rank} is outside 1..{MAX_RANK}")
    if len(strides) != rank:
        problems.append(f"{len(strides)} strides for a rank-{rank} block")
    if (_address(base) + base_offset * size) % ALIGN_BYTES:
        problems.append(f"base address is not {ALIGN_BYTES}-byte aligned")
    if strides and strides[-1] != 1:
        problems.append(f"last stride is {strides[-1]}, not 1")
    for dim, stride in enumerate(strides[:-1]):
        if (stride * size) % ALIGN_BYTES:
            problems.append(f"stride {stride} of dimension {dim} is not a multiple of {ALIGN_BYTES} bytes")
    if block_shape and block_shape[-1] * size < ALIGN_BYTES:
        problems.append(f"last block dimension is {block_shape[-1] * size} bytes, under {ALIGN_BYTES}")
    for dim, extent in enumerate(block_shape):
        if extent > MAX_BOX_DIM:
            problems.append(f"block dimension {dim} is {extent}, over the TMA box limit {MAX_BOX_DIM}")
    return problems


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
