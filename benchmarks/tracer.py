"""Tracer overhead (issue 3): traced (values off / all) vs untraced engine runs, time and peak RSS.

Each configuration runs in its own subprocess (a fresh process, so peak RSS is its own), reading
peak RSS from /proc/self/status (VmHWM). Prints a table and appends it to benchmarks/RESULTS.md.
Usage: python benchmarks/tracer.py [--no-append]
"""

from __future__ import annotations

import datetime
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

from report import commit, machine, publish

WORKLOADS = {
    "matmul 1024^3 fp32": "matmul",
    "vector add 2^22 fp32": "add",
}
CONFIGS = {"untraced": None, "traced, values off": "off", "traced, values all": "all"}

CHILD = r"""
import json, sys, time
import numpy as np
import triton
import tilescope
from tilescope.examples.matmul import matmul_kernel
from tilescope.examples.vector_add import add_kernel

workload, values, trace_dir = sys.argv[1], sys.argv[2], sys.argv[3]
options = {} if values == "none" else {"clients": "tracer", "trace_dir": trace_dir, "values": values}
rng = np.random.default_rng(0)
if workload == "matmul":
    n = 1024
    a = rng.random((n, n), dtype=np.float32); b = rng.random((n, n), dtype=np.float32)
    c = np.empty((n, n), np.float32)
    grid = (n // 64, n // 64)
    args = (a, b, c, n, n, n, n, 1, n, 1, n, 1)
    meta = dict(BM=64, BN=64, BK=32)
    kernel = matmul_kernel
else:
    n = 1 << 22
    x = rng.random(n, dtype=np.float32); y = rng.random(n, dtype=np.float32); out = np.empty_like(x)
    grid = (n // 1024,)
    args = (x, y, out, n)
    meta = dict(BLOCK=1024)
    kernel = add_kernel
launcher = tilescope.trace(kernel, **options)
start = time.perf_counter()
launcher[grid](*args, **meta)
seconds = time.perf_counter() - start
hwm = [int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM")][0] / 1024
rows = launcher.reports[0].summary["rows"] if options else 0
print(json.dumps({"seconds": seconds, "peak_mib": hwm, "rows": rows}))
"""


def measure(workload: str, values: str | None) -> dict:
    """One configuration in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([sys.executable, "-c", CHILD, workload, values or "none", f"{tmp}/trace"],
                             capture_output=True, text=True, check=True)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        result["trace_mib"] = sum(p.stat().st_size for p in Path(tmp).rglob("*") if p.is_file()) / 2**20
        return result


def main() -> None:
    lines = ["| workload | configuration | time (s) | × untraced | peak RSS (MiB) | Δ RSS (MiB) | rows "
             "| trace (MiB) |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for label, workload in WORKLOADS.items():
        base = None
        for name, values in CONFIGS.items():
            r = measure(workload, values)
            base = base or r
            lines.append(f"| {label} | {name} | {r['seconds']:.2f} | {r['seconds'] / base['seconds']:.2f} | "
                         f"{r['peak_mib']:.0f} | {r['peak_mib'] - base['peak_mib']:+.0f} | {r['rows']:,} | "
                         f"{r['trace_mib']:.1f} |")
            print(lines[-1], flush=True)
    header = (f"## Tracer overhead (issue 3)\n\n{datetime.date.today()}, commit {commit()}, "
              f"{machine()}, Python {platform.python_version()}. "
              "Targets: values-off time ≤ 2× untraced, Δ peak RSS ≤ 64 MiB.\n\n")
    publish(header + "\n".join(lines) + "\n", append="--no-append" not in sys.argv)


if __name__ == "__main__":
    main()
