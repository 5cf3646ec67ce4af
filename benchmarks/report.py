"""What every benchmark script records next to its figures: machine, commit, memory, and where they go."""

from __future__ import annotations

import argparse
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

RESULTS = Path(__file__).resolve().with_name("RESULTS.md")


def machine() -> str:
    """CPU model and core count of this machine."""
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores"


def commit() -> str:
    """Short hash of the checked-out commit ("?" outside a git checkout)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=RESULTS.parent
        )
    except OSError:
        return "?"
    return out.stdout.strip() or "?"


def rss_kib(field: str) -> int:
    """A memory figure of this process from /proc/self/status (e.g. ``VmHWM``, the peak RSS), in KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    return 0


def publish(text: str, append: bool) -> None:
    """Print a results section and, unless told not to, append it to ``benchmarks/RESULTS.md``."""
    print("\n" + text)
    if append:
        with open(RESULTS, "a") as fh:
            fh.write("\n" + text)


def rounds_arguments(
    doc: str, rounds: int, extra: Callable[[argparse.ArgumentParser], None] | None = None
) -> argparse.Namespace:
    """The command line of a benchmark that takes ``--rounds`` (default ``rounds``) and ``--no-append``
    (``extra(parser)`` adds a benchmark's own options)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--no-append", action="store_true")
    if extra is not None:
        extra(parser)
    return parser.parse_args()


def add_only(parser: argparse.ArgumentParser) -> None:
    """``--only SUBSTRING ...``: run only the workloads whose name contains one of the substrings."""
    parser.add_argument(
        "--only", nargs="+", default=[], metavar="SUBSTRING",
        help="run only workloads whose name contains one of these substrings (default: all)",
    )


def selected(name: str, only: list[str]) -> bool:
    """Whether workload ``name`` passes an ``--only`` filter (an empty filter passes everything; one
    quoted argument of several substrings, ``--only "flash paged"``, counts as each of them: no
    workload's name has a space)."""
    return not only or any(part in name for words in only for part in words.split())
