"""Register, spill and memory figures of a compiled kernel, read from the compiler's own reports.

NVIDIA: the ``ptxas -v`` log Triton's own ptxas run writes (so the figures come from exactly the
flags Triton used), plus SASS from ``cuobjdump -sass`` on the cubin. AMD: the AMDGPU metadata in the
AMDGCN assembly (``.vgpr_count``, ``.sgpr_count``, spill counts, scratch). Shared memory is Triton's
own figure (``metadata.shared``) on both. Standard library only: this runs in the environment under test.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

_PTXAS_REGS = re.compile(r"Used (\d+) registers")
_PTXAS_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_AMD_KEYS = {
    "vgprs": "vgpr_count",
    "sgprs": "sgpr_count",
    "agprs": "agpr_count",
    "vgpr_spills": "vgpr_spill_count",
    "sgpr_spills": "sgpr_spill_count",
    "scratch_bytes": "private_segment_fixed_size",
}


def from_ptxas_log(log: str) -> dict[str, int]:
    """``registers``, ``stack_bytes``, ``spill_store_bytes``, ``spill_load_bytes`` from a ``ptxas -v`` log."""
    out: dict[str, int] = {}
    regs = _PTXAS_REGS.findall(log)
    if regs:
        out["registers"] = int(regs[-1])
    frame = _PTXAS_FRAME.findall(log)
    if frame:
        stack, stores, loads = (int(x) for x in frame[-1])
        out.update(stack_bytes=stack, spill_store_bytes=stores, spill_load_bytes=loads)
    return out


def from_amdgcn(asm: str) -> dict[str, int]:
    """VGPR/SGPR/AGPR counts, spill counts and scratch bytes from the AMDGPU metadata of ``asm``."""
    out = {}
    for name, key in _AMD_KEYS.items():
        found = re.findall(rf"^\s*(?:-\s+)?\.{key}:\s*(\d+)", asm, flags=re.MULTILINE)
        if found:
            out[name] = int(found[-1])
    return out


def _cuobjdump(cubin: bytes, cuobjdump: str, flag: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        return subprocess.run(
            [cuobjdump, flag, str(path)], capture_output=True, text=True, check=True, timeout=120
        ).stdout


def sass(cubin: bytes, cuobjdump: str) -> str:
    """The SASS disassembly of ``cubin`` (``cuobjdump -sass``); raises CalledProcessError on failure."""
    return _cuobjdump(cubin, cuobjdump, "-sass")


_USAGE = re.compile(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)")


def from_cubin(cubin: bytes, cuobjdump: str) -> dict[str, int]:
    """``registers``, ``stack_bytes``, ``static_shared_bytes``, ``local_bytes`` of the (first) kernel in
    ``cubin``, as ``cuobjdump --dump-resource-usage`` reports them (what the driver reads on load)."""
    found = _USAGE.search(_cuobjdump(cubin, cuobjdump, "--dump-resource-usage"))
    if not found:
        return {}
    regs, stack, shared, local = (int(x) for x in found.groups())
    return {"registers": regs, "stack_bytes": stack, "static_shared_bytes": shared, "local_bytes": local}
