"""Compile-time resources against the GPU: how many programs fit on one SM, and what limits them.

The frontend serves the figures of an offline compile (``LaunchInfo.resources``: registers, spilled
bytes, shared memory and its buffers, warps, stages, global access widths per source location).
Occupancy follows NVIDIA's rules on CUDA targets: registers are allocated per warp in units of 256,
each program (block) reserves 1 KiB of shared memory beside its own, an SM holds at most 32 blocks
and ``max_threads_per_multi_processor`` threads. On AMD's CDNA3 (gfx942, MI300X) it follows the
rules LLVM's AMDGPU backend computes with: a compute unit has 4 SIMDs of at most 8 waves each; a
SIMD lane has 512 registers shared by VGPRs and AGPRs, allocated per wave in granules of 8; 800
SGPRs per SIMD in granules of 16; 64 KiB of LDS per CU; a program's waves are spread over the 4
SIMDs.
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
    if "error" in out or not out.get("num_warps"):
        return out
    if spec.backend == "hip":
        return _cdna(out, spec)
    if spec.backend != "cuda":
        return out
    warps = out["num_warps"]
    per_warp = -(-max(out.get("registers", 0), 1) * spec.warp_size // REGISTER_UNIT) * REGISTER_UNIT
    limits = {  # in this order when two limits are equal: the hardware's caps first
        "threads": spec.max_threads_per_multi_processor // (warps * spec.warp_size),
        "blocks": MAX_BLOCKS_PER_SM,
        "registers": spec.regs_per_multiprocessor // per_warp // warps,
        "shared memory": spec.shared_memory_per_multiprocessor
        // (out.get("shared_bytes", 0) + SHARED_RESERVED),
    }
    if out.get("shared_bytes", 0) > spec.shared_memory_per_block_optin:
        limits["shared memory"] = 0
    limited_by = min(limits, key=lambda k: (limits[k], list(limits).index(k)))
    programs = limits[limited_by]
    most = spec.max_threads_per_multi_processor // spec.warp_size
    out.update(programs_per_sm=programs, occupancy=round(programs * warps / most, 4), limited_by=limited_by,
               limits=limits)  # fmt: skip
    return out


SIMDS_PER_CU = 4
WAVES_PER_SIMD = 8
VGPRS_PER_LANE = 512  #: unified VGPR + AGPR file of one SIMD lane (gfx90a, gfx942)
VGPR_GRANULE = 8
SGPRS_PER_SIMD = 800
SGPR_GRANULE = 16
LDS_PER_CU = 65_536


def _cdna(out: dict, spec: GPUSpec) -> dict:
    """``out`` plus CDNA3 occupancy: ``waves_per_simd`` (of at most 8), ``programs_per_cu``,
    ``occupancy`` (waves per SIMD / 8), ``limited_by`` and ``limits`` (waves per SIMD each allows)."""
    warps = out["num_warps"]
    vgprs = max(out.get("vgprs") or out.get("registers", 0), 1)
    sgprs = max(out.get("sgprs", 0), 1)
    lds = out.get("shared_bytes", 0)
    per_simd = -(-warps // SIMDS_PER_CU)  # a program's waves on each SIMD
    limits = {  # waves per SIMD; in this order when two limits are equal
        "waves": WAVES_PER_SIMD,
        "registers": VGPRS_PER_LANE // (-(-vgprs // VGPR_GRANULE) * VGPR_GRANULE),
        "scalar registers": SGPRS_PER_SIMD // (-(-sgprs // SGPR_GRANULE) * SGPR_GRANULE),
        "shared memory": (LDS_PER_CU // lds) * per_simd if lds else WAVES_PER_SIMD,
    }
    if lds > spec.shared_memory_per_block_optin:
        limits["shared memory"] = 0
    limited_by = min(limits, key=lambda k: (limits[k], list(limits).index(k)))
    waves = min(limits[limited_by], WAVES_PER_SIMD)
    programs = waves * SIMDS_PER_CU // warps
    out.update(waves_per_simd=waves, programs_per_sm=programs, programs_per_cu=programs,
               occupancy=round(waves / WAVES_PER_SIMD, 4), limited_by=limited_by, limits=limits)  # fmt: skip
    return out
