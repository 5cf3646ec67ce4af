"""What a result was measured on: commit, Triton and torch versions, GPU, driver and clocks."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path
from typing import Any


def git_commit(where: Path | None = None) -> str:
    """The commit checked out at ``where`` (current directory by default), ``+dirty`` if modified; or ''."""
    cwd = str(where or Path.cwd())
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return head + ("+dirty" if dirty else "")


def nvidia_smi(fields: str) -> list[str]:
    """Values of the comma-separated ``fields`` of GPU 0 from ``nvidia-smi --query-gpu``; [] if none."""
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits", "-i", "0"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [v.strip() for v in out.strip().split(",")]


CLOCK_FIELDS = "clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw"


def clocks() -> dict[str, str]:
    """Current SM/memory clocks (MHz), max SM clock, temperature and power, as nvidia-smi reads them."""
    values = nvidia_smi(CLOCK_FIELDS)
    return dict(zip(CLOCK_FIELDS.split(","), values, strict=False)) if values else {}


def describe() -> dict[str, Any]:
    """The environment of this process: versions, GPU and driver (torch must see a CUDA device)."""
    import torch
    import triton

    props = torch.cuda.get_device_properties(0)
    driver = nvidia_smi("driver_version")
    return {
        "triton": triton.__version__,
        "torch": torch.__version__,
        "cuda": torch.version.cuda or "",
        "gpu": props.name,
        "sms": props.multi_processor_count,
        "l2_bytes": int(getattr(props, "L2_cache_size", 50 * 2**20)),
        "driver": driver[0] if driver else "",
        "host": platform.node(),
        "python": platform.python_version(),
    }
