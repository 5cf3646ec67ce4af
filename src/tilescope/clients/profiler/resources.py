"""Compile-time resources against the GPU: how many programs fit on one SM, and what limits them.

The frontend serves the figures of an offline compile (``LaunchInfo.resources``: registers, spilled
bytes, shared memory and its buffers, warps, stages, global access widths per source location).
Occupancy follows NVIDIA's rules: registers are allocated per warp in units of 256, each program
(block) reserves 1 KiB of shared memory beside its own, an SM holds at most 32 blocks and
``max_threads_per_multi_processor`` threads. AMD targets get the figures without an occupancy.
"""

from __future__ import annotations

from ...gpu.specs import GPUSpec

REGISTER_UNIT = 256  #: registers are allocated per warp in multiples of this
SHARED_RESERVED = 1024  #: bytes of shared memory the driver reserves per block
MAX_BLOCKS_PER_SM = 32


def occupancy(resources: dict, spec: GPUSpec) -> dict:
    """``resources`` plus ``programs_per_sm``, ``occupancy`` (resident warps / the SM's most) and
    ``limited_by`` (registers, shared memory, threads or blocks); unchanged when they do not apply."""
    out = dict(resources)
    if "error" in out or spec.backend != "cuda" or not out.get("num_warps"):
        return out
    warps = out["num_warps"]
    per_warp = -(-max(out.get("registers", 0), 1) * spec.warp_size // REGISTER_UNIT) * REGISTER_UNIT
    limits = {  # in this order when two limits are equal: the hardware's caps first
        "threads": spec.max_threads_per_multi_processor // (warps * spec.warp_size),
        "blocks": MAX_BLOCKS_PER_SM,
        "registers": spec.regs_per_multiprocessor // per_warp // warps,
        "shared memory": spec.shared_memory_per_multiprocessor // (out.get("shared_bytes", 0)
                                                                  + SHARED_RESERVED),
    }
    if out.get("shared_bytes", 0) > spec.shared_memory_per_block_optin:
        limits["shared memory"] = 0
    limited_by = min(limits, key=lambda k: (limits[k], list(limits).index(k)))
    programs = limits[limited_by]
    most = spec.max_threads_per_multi_processor // spec.warp_size
    out.update(programs_per_sm=programs, occupancy=round(programs * warps / most, 4), limited_by=limited_by,
               limits=limits)  # fmt: skip
    return out

