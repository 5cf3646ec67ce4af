"""Shared by the frontends' tests: the line a test kernel marks as faulty with a ``# BUG <tag>``
comment, and ``tilescope run -c sanitizer --json`` of a user's script."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def bug_line(fn, tag: str) -> int:
    """The line of Python function ``fn`` marked ``# BUG <tag>``."""
    lines, first = inspect.getsourcelines(fn)
    for offset, text in enumerate(lines):
        if text.rstrip().endswith(f"# BUG {tag}"):
            return first + offset
    raise AssertionError(f"no '# BUG {tag}' line in {fn.__name__}")


def sanitizer_run(
    script: Path, timeout: int, in_repo: bool = True
) -> tuple[subprocess.CompletedProcess, list]:
    """``tilescope run -c sanitizer --json script``: the finished process and its reports. ``in_repo``:
    run from the repository root with it on ``PYTHONPATH`` (the script imports ``tests.*`` kernels),
    else from the script's folder with the environment as it is."""
    cwd, env = (ROOT, {**os.environ, "PYTHONPATH": str(ROOT)}) if in_repo else (script.parent, None)
    run = subprocess.run([sys.executable, "-m", "tilescope.cli", "run", "-c", "sanitizer", "--json", script],
                         cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)  # fmt: skip
    reports = json.loads(run.stdout[: run.stdout.rindex("}") + 1])["reports"] if "}" in run.stdout else []
    return run, reports
