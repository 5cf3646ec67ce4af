"""What a fresh NumPy buffer costs here: the page faults of a first write, with NumPy's huge-page
advice on (its default) and off.

A launch's big temporaries (a 4096x1024 softmax's load, difference, exponential and quotient: 16 MiB
each) land in fresh memory, so their first write page-faults. NumPy advises the kernel to back
buffers of 4 MiB and more with huge pages (``madvise(MADV_HUGEPAGE)``); where the kernel's
``transparent_hugepage/defrag`` is ``madvise`` it then compacts memory in the faulting thread, which
on a fragmented machine can cost far more than 4 KiB faults. Each setting runs in its own fresh
process: ``--buffers`` copies of a 16 MiB array, all kept alive (every copy is fresh memory, as a
launch's results are); the table gives the least, median and largest copy time and the faults of one.

    .venv/bin/python benchmarks/page_faults.py                # appends to benchmarks/RESULTS.md
    .venv/bin/python benchmarks/page_faults.py --rounds 3 --no-append
"""

from __future__ import annotations

import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from report import commit, machine, publish, rounds_arguments

MIB = 1 << 20


def child(buffers: int) -> dict:
    """Copy a 16 MiB array ``buffers`` times, keeping every copy: each copy's seconds and faults
    (the advice is NumPy's documented switch, ``NUMPY_MADVISE_HUGEPAGE``, set by :func:`measure`)."""
    source = np.random.default_rng(0).standard_normal(4 * MIB).astype(np.float32)
    kept, seconds, faults = [], [], []
    for _ in range(buffers):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.perf_counter()
        kept.append(source.copy())
        seconds.append(time.perf_counter() - start)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    return {"seconds": seconds, "faults": faults}


def _setting(name: str) -> str:
    path = Path(f"/sys/kernel/mm/transparent_hugepage/{name}")
    try:
        return path.read_text().strip()
    except OSError:
        return "unknown"


def measure(advice: bool, buffers: int) -> dict:
    """One fresh process's copies under one setting."""
    env = {**os.environ, "NUMPY_MADVISE_HUGEPAGE": "1" if advice else "0"}
    out = subprocess.run([sys.executable, __file__, "--child", str(buffers)],
                         capture_output=True, text=True, check=True, env=env)  # fmt: skip
    return json.loads(out.stdout)


def table(runs: dict[bool, list[dict]]) -> str:
    """The results section: per setting, copy times over every process's copies."""
    lines = [
        f"## Fresh-buffer page faults — {datetime.date.today()}, commit {commit()}",
        "",
        f"Machine: {machine()}; transparent huge pages `enabled`: {_setting('enabled')}, "
        f"`defrag`: {_setting('defrag')}. `benchmarks/page_faults.py`: copies of a 16 MiB float32 "
        "array into fresh memory, all kept alive, each setting in its own fresh processes.",
        "",
        "| NumPy huge-page advice | copies | least ms | median ms | largest ms | faults per copy |",
        "|---|---|---|---|---|---|",
    ]
    for advice, results in runs.items():
        seconds = [s for r in results for s in r["seconds"]]
        faults = [f for r in results for f in r["faults"]]
        label = "on (NumPy default)" if advice else "off"
        lines.append(f"| {label} | {len(seconds)} | {1e3 * min(seconds):.1f} | "
                     f"{1e3 * statistics.median(seconds):.1f} | {1e3 * max(seconds):.1f} | "
                     f"{statistics.median(faults):.0f} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> None:
    """Run both settings ``--rounds`` times (alternating) and publish the table."""
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(child(int(sys.argv[2]))))
        return
    args = rounds_arguments(__doc__, rounds=3)
    runs: dict[bool, list[dict]] = {True: [], False: []}
    for _ in range(args.rounds):
        for advice in runs:
            runs[advice].append(measure(advice, buffers=12))
    publish(table(runs), append=not args.no_append)


if __name__ == "__main__":
    main()
