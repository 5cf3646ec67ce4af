"""The NeuronCore's tile rules, checked on every tile an NKI kernel makes, reported as ``tile rule`` faults.

The numbers are those AWS documents for ``nki.language.tile_size`` (NeuronCore-v2/v3): 128
partitions, a PSUM bank of 2 KiB per partition (512 fp32), matmul operands of at most 128
(stationary) and 512 (moving) free elements. A broken rule is a compile error on Neuron; here it
is a fault at the user's line (a sanitizer finding, or an error when nothing handles it), and the
kernel goes on running so that every other problem is found too.
"""

from __future__ import annotations

import numpy as np

from ...engine.access import fault
from ...ir import FaultKind
from ..running import current


class tile_size:  # noqa: N801 - NKI's spelling
    """Hardware tile size constants (``nl.tile_size``)."""

    pmax = 128  # partitions of SBUF and PSUM: a tile's first dimension at most
    psum_fmax = 512  # fp32 elements per partition of one PSUM bank
    psum_fmax_bytes = 2048
    gemm_stationary_fmax = 128  # free size of a matmul's stationary operand
    gemm_moving_fmax = 512  # free size of a matmul's moving operand


def broken(rule: str, message: str, fix: str) -> None:
    """Report a broken tile rule at the current line for every program of the batch."""
    launch = current().launch
    fault(
        launch,
        FaultKind.TILE_RULE,
        bad=np.ones((launch.pids.shape[0],), dtype=bool),
        message=message,
        attrs={"rule": rule, "fix": fix},
    )


def check_tile(shape: tuple[int, ...], buffer: str, what: str, itemsize: int = 4) -> None:
    """The partition-dimension rule for a tile in ``buffer``, and the PSUM bank size for PSUM tiles."""
    partitions = shape[0] if shape else 1
    if partitions > tile_size.pmax:
        broken(
            "partition dimension",
            f"{what} has a partition dimension (first dimension) of {partitions}, more than the "
            f"{tile_size.pmax} partitions of {buffer.upper()}",
            f"split the first dimension into tiles of at most {tile_size.pmax} (nl.tile_size.pmax)",
        )
    if buffer == "psum":
        free_bytes = int(np.prod(shape[1:], dtype=np.int64)) * itemsize
        if free_bytes > tile_size.psum_fmax_bytes:
            broken(
                "psum bank",
                f"{what} needs {free_bytes} bytes per partition in PSUM, more than one bank's "
                f"{tile_size.psum_fmax_bytes}",
                f"keep a PSUM tile's free size at most {tile_size.psum_fmax} fp32 (nl.tile_size.psum_fmax)",
            )


def check_matmul(stationary: tuple[int, ...], moving: tuple[int, ...], buffers: tuple) -> None:
    """The Tensor Engine's operand rules: SBUF operands, contraction over equal partitions, free sizes."""
    if stationary[0] != moving[0]:
        raise ValueError(
            f"matmul contracts over the partition dimension: stationary {stationary} and moving {moving} "
            "have different partition sizes"
        )
    if "psum" in buffers:
        broken(
            "matmul operand in PSUM",
            "a matmul operand is a PSUM tile; the Tensor Engine reads its operands from SBUF",
            "copy the tile to SBUF first (nl.copy / nisa.tensor_copy)",
        )
    check_tile(stationary, "sbuf", "the matmul's stationary operand")
    if len(stationary) > 1 and stationary[1] > tile_size.gemm_stationary_fmax:
        broken(
            "matmul stationary size",
            f"the matmul's stationary operand has a free size of {stationary[1]}, more than "
            f"{tile_size.gemm_stationary_fmax}",
            "tile the output rows by at most 128 (nl.tile_size.gemm_stationary_fmax)",
        )
    if len(moving) > 1 and moving[1] > tile_size.gemm_moving_fmax:
        broken(
            "matmul moving size",
            f"the matmul's moving operand has a free size of {moving[1]}, more than "
            f"{tile_size.gemm_moving_fmax}",
            "tile the output columns by at most 512 (nl.tile_size.gemm_moving_fmax)",
        )


def check_reduce_axes(axes: tuple[int, ...], ndim: int) -> None:
    """NKI reduces along free dimensions only (not the partition dimension 0)."""
    if 0 in axes or (ndim and -ndim in axes):
        broken(
            "reduction over partitions",
            "a reduction along axis 0 (the partition dimension); NKI reduces along free dimensions only",
            "transpose the tile first (nl.transpose) or reduce across partitions with a matmul by ones",
        )
