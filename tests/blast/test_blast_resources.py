"""Resource figures parsed from the compilers' own reports."""

from __future__ import annotations

from tilescope.blast.resources import from_amdgcn, from_ptxas_log

PTXAS_LOG = """ptxas info    : 11 bytes gmem
ptxas info    : Compiling entry function 'matmul_kernel' for 'sm_90a'
ptxas info    : Function properties for matmul_kernel
    160 bytes stack frame, 152 bytes spill stores, 148 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers, 160 bytes cumulative stack size
ptxas info    : Compile time = 356.849 ms
"""

AMDGCN = """\t.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     4
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 104
    .sgpr_count:     35
    .sgpr_spill_count: 2
    .vgpr_count:     232
    .vgpr_spill_count: 25
...
\t.end_amdgpu_metadata
"""


def test_ptxas_log() -> None:
    assert from_ptxas_log(PTXAS_LOG) == {
        "registers": 168,
        "stack_bytes": 160,
        "spill_store_bytes": 152,
        "spill_load_bytes": 148,
    }
    assert from_ptxas_log("") == {}


def test_amdgcn_metadata() -> None:
    assert from_amdgcn(AMDGCN) == {
        "vgprs": 232,
        "sgprs": 35,
        "agprs": 4,
        "vgpr_spills": 25,
        "sgpr_spills": 2,
        "scratch_bytes": 104,
    }
