"""Profiler overhead (issue 13): a profiled launch against a plain engine run of the same launch.

Every workload of ``workloads.py`` (dense, attention, gathers, the divergent ones of
``divergent.py``) plus the profiler's own: the column gather and the 8-rows-per-program softmax of
``profiler_gpu.py`` and Triton's tutorial matmul with ``GROUP_SIZE_M = 8`` (a 1-D grid mapped to
tiles). Each workload runs in its own fresh process with two launchers of the same kernel, one
plain (no client: the engine computes the outputs, checked against float64 once every turn is
timed) and one with the profiler (addresses and masks only); both are warmed once (the first
launch prepares the kernel and, for the profiler, compiles it offline for the H200, which Triton
caches), then timed in turns,
``ROUNDS`` times each, on fresh inputs; the figure is the least CPU time (``time.process_time``) of
each, so the ratio is measured side by side on this shared machine.
Usage: python benchmarks/profiler.py [--no-append] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

from report import commit, publish

ROUNDS = 3

CHILD = r"""
import json, sys, time
import numpy as np
import tilescope
import profiler
from workloads import WORKLOADS

name, rounds = sys.argv[1], int(sys.argv[2])
workload = {w.name: w for w in [*WORKLOADS, *profiler.extra_workloads()]}[name]
rng = np.random.default_rng(0)
launchers = {"none": {}, "profiler": {}}

def wrapper(clients):
    def wrap(kernel):
        cache = launchers[clients]
        if kernel not in cache:
            cache[kernel] = tilescope.trace(kernel, clients=None if clients == "none" else clients)
        return cache[kernel]
    return wrap

best, plain = {}, []
for turn in range(rounds + 1):
    for clients in ("none", "profiler"):
        prepared = workload.prepare(rng)
        start = time.process_time()
        prepared.launch(wrapper(clients))
        spent = time.process_time() - start
        if clients == "none":
            plain.append(prepared)
        if turn:  # the first turn warms up
            best[clients] = min(best.get(clients, spent), spent)
# checked after the timing: the float64 reference leaves torch's worker threads spinning, CPU time
# that would count against the next launch timed
for prepared in plain:
    error = prepared.error()
    assert error <= workload.tolerance, (name, error)
print(json.dumps(best))
"""


def extra_workloads() -> list:
    """The profiler's own workloads beside ``workloads.WORKLOADS``."""
    import numpy as np
    import profiler_gpu as g
    import torch
    from workloads import Workload

    def columns(rng):
        rows = 1 << 20
        m = torch.from_numpy(rng.standard_normal((rows, 6)).astype(np.float32))
        out = torch.full((6, rows), float("nan"))
        launch = lambda wrap: wrap(g.gather_columns_kernel)[(6, rows // 1024)](  # noqa: E731
            m, out, rows, *m.stride(), BLOCK=1024
        )
        return launch, lambda: float((out - m.T).abs().max()), lambda: np.ascontiguousarray(m.numpy().T)

    def row_softmax(rng):
        rows, cols = 8192, 1024
        x = torch.from_numpy(rng.standard_normal((rows, cols)).astype(np.float32))
        out = torch.full_like(x, float("nan"))
        launch = lambda wrap: wrap(g.row_softmax_kernel)[(rows // 8,)](  # noqa: E731
            x, out, x.stride(0), ROWS=8, COLS=cols
        )
        return launch, lambda: float((out.double() - torch.softmax(x.double(), 1)).abs().max()), lambda: None

    def grouped_matmul(rng):
        n, block = 512, 64
        a = torch.from_numpy(rng.standard_normal((n, n)).astype(np.float16))
        b = torch.from_numpy(rng.standard_normal((n, n)).astype(np.float16))
        c = torch.full((n, n), float("nan"), dtype=torch.float16)
        launch = lambda wrap: wrap(g.matmul_kernel)[((n // block) ** 2,)](  # noqa: E731
            a,
            b,
            c,
            n,
            n,
            n,
            *a.stride(),
            *b.stride(),
            *c.stride(),
            BLOCK_M=block,
            BLOCK_N=block,
            BLOCK_K=32,
            GROUP_SIZE_M=8,
        )
        ref = a.double() @ b.double()
        return launch, lambda: float(((c.double() - ref).abs() / (ref.abs() + 1)).max()), lambda: None

    return [
        Workload("column_gather_2^20x6", columns, 0.0),
        Workload("row_softmax_8192x1024", row_softmax, 1e-6),
        Workload("matmul_fp16_512_group8", grouped_matmul, 1e-2),
    ]


def measure(name: str) -> dict:
    """Least CPU seconds of a plain and a profiled launch of workload ``name``, in a fresh process."""
    out = subprocess.run([sys.executable, "-c", CHILD, name, str(ROUNDS)], capture_output=True, text=True,
                         check=True, cwd=os.path.dirname(os.path.abspath(__file__)))  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    from workloads import WORKLOADS

    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="workload names to run (default: all)")
    parser.add_argument("--no-append", action="store_true", help="print only; do not touch RESULTS.md")
    args = parser.parse_args()
    names = [w.name for w in [*WORKLOADS, *extra_workloads()]]
    if args.only:
        names = [n for n in names if n in args.only]
    lines = ["| workload | plain run (CPU s) | profiled (CPU s) | × plain |", "| --- | ---: | ---: | ---: |"]
    ratios = []
    for name in names:
        found = measure(name)
        ratios.append(found["profiler"] / found["none"])
        lines.append(f"| {name} | {found['none']:.4f} | {found['profiler']:.4f} | {ratios[-1]:.2f} |")
        print(lines[-1], flush=True)
    worst = max(ratios)
    uname = " ".join(platform.uname())
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    now = datetime.datetime.now(datetime.timezone.utc)
    header = (f"## Profiler overhead (issue 13)\n\n{now:%Y-%m-%d %H:%M} UTC, commit {commit()}, `{uname}`, "
              f"nproc {os.cpu_count()}, load {load}, Python {platform.python_version()}. "
              f"Each workload in a fresh process: a plain launcher (no client, "
              f"outputs computed and checked) and a profiler launcher of the same kernel, both warmed once "
              f"(the profiler's first launch compiles offline for the H200), then {ROUNDS} timed turns each "
              f"on fresh inputs; least CPU time of each. Target: profiled ≤ 2× plain on every workload; "
              f"worst here {worst:.2f}×.\n\n")  # fmt: skip
    publish(header + "\n".join(lines) + "\n", append=not args.no_append)


if __name__ == "__main__":
    main()
