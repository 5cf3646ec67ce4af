"""Build an engine C kernel as its portable default clone alone, to test the code path a CPU without
AVX2 runs (the install's build dispatches to the widest clone the CPU has)."""

from __future__ import annotations

import platform
import shutil
import subprocess
from pathlib import Path

import pytest


def default_clone(source: Path, out: Path) -> str:
    """``source`` compiled at ``out`` with setup.py's flags, one plain function each (``-DCLONES=``)
    and, on x86-64, no AVX or FMA instructions; skips the test where there is no gcc."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc to build the default clone with")
    flags = ["-O3", "-ffp-contract=off", "-fno-math-errno", "-DCLONES=", "-fPIC", "-shared"]
    if platform.machine() in ("x86_64", "AMD64"):
        flags += ["-mno-fma", "-mno-avx"]  # the baseline: no FMA instruction, no vector gathers
    subprocess.run([gcc, *flags, "-o", str(out), str(source), "-lm"], check=True)
    return str(out)
