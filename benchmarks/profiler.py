"""Profiler overhead (issue 13): a profiled launch against a plain engine run of the same launch.

Each configuration runs in its own fresh process and times its second launch (the first one
prepares the kernel and, for the profiler, compiles it offline for the H200: Triton caches that
compile per kernel and signature, in memory and on disk). The plain run computes the outputs; the
profiler alone needs addresses and masks only. Prints a table and appends it to benchmarks/RESULTS.md.
Usage: python benchmarks/profiler.py [--no-append]
"""

from __future__ import annotations

import datetime
import json
import platform
import subprocess
import sys

from report import commit, machine, publish

WORKLOADS = {
    "vector add 2^22 fp32": "add",
    "matmul 1024^3 fp32": "matmul",
    "softmax 8192x1024 fp32": "softmax",
    "column gather 2^20x6 fp32": "columns",
}

CHILD = r"""
import json, sys, time
import numpy as np
import torch
import tilescope
import profiler_gpu as g
from workloads import add_kernel, matmul_kernel

workload, clients = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
if workload == "add":
    n = 1 << 22
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    kernel, grid, args, meta = add_kernel, (n // 1024,), (x, y, np.empty_like(x), n), {"BLOCK": 1024}
elif workload == "matmul":
    n = 1024
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    kernel, grid = matmul_kernel, (n // 64, n // 64)
    args = (a, b, np.empty((n, n), np.float32), n, n, n, n, 1, n, 1, n, 1)
    meta = {"BM": 64, "BN": 64, "BK": 32}
elif workload == "softmax":
    x = torch.from_numpy(rng.standard_normal((8192, 1024), dtype=np.float32))
    kernel, grid, args = g.row_softmax_kernel, (8192 // 8,), (x, torch.empty_like(x), x.stride(0))
    meta = {"ROWS": 8, "COLS": 1024}
else:
    m = torch.from_numpy(rng.standard_normal((1 << 20, 6), dtype=np.float32))
    kernel, grid = g.gather_columns_kernel, (6, (1 << 20) // 1024)
    args, meta = (m, torch.empty(6, 1 << 20), 1 << 20, *m.stride()), {"BLOCK": 1024}
launcher = tilescope.trace(kernel, clients=None if clients == "none" else clients)
launcher[grid](*args, **meta)
start = time.perf_counter()
launcher[grid](*args, **meta)
print(json.dumps({"seconds": time.perf_counter() - start}))
"""


def measure(workload: str, clients: str) -> float:
    """Seconds of the second launch, in a fresh process."""
    out = subprocess.run([sys.executable, "-c", CHILD, workload, clients], capture_output=True, text=True,
                         check=True, cwd=__file__.rsplit("/", 1)[0])  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def main() -> None:
    lines = ["| workload | plain run (s) | profiled (s) | × plain |", "| --- | ---: | ---: | ---: |"]
    for label, workload in WORKLOADS.items():
        plain = measure(workload, "none")
        profiled = measure(workload, "profiler")
        lines.append(f"| {label} | {plain:.3f} | {profiled:.3f} | {profiled / plain:.2f} |")
        print(lines[-1], flush=True)
    header = (f"## Profiler overhead (issue 13)\n\n{datetime.date.today()}, commit {commit()}, {machine()}, "
              f"Python {platform.python_version()}. Second launch of each workload in a fresh process (the "
              "first prepares the kernel and compiles it offline for the H200, cached by Triton); plain = "
              "the engine computing outputs, no client. Target: profiled ≤ 2× plain.\n\n")
    publish(header + "\n".join(lines) + "\n", append="--no-append" not in sys.argv)


if __name__ == "__main__":
    main()
