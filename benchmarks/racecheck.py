"""Racecheck cost: time and peak memory of a racecheck run against a plain engine run, per workload.

Every (workload, runner) pair runs in its own subprocess over the shared workloads
(``workloads.py``, all race-free kernels):

* ``plain``: ``tilescope.trace(kernel)`` with no client (outputs computed), checked against the
  workload's float64 reference;
* ``racecheck``: ``tilescope.trace(kernel, clients="racecheck")``; correct means the outputs match
  the reference and there is no finding.

Each process first launches a tiny unrelated kernel (imports and one-time costs), then times one
launch of the workload. Peak memory is the growth of the process's peak RSS (VmHWM) during that
launch; "touched" is the size of the tensors the launch accessed. Targets (issue 12): racecheck
≤ 3× plain time, peak ≤ plain + touched.

    .venv/bin/python benchmarks/racecheck.py                # every workload; appends to RESULTS.md
    .venv/bin/python benchmarks/racecheck.py --only matmul --no-append
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import triton
import triton.language as tl
from report import add_only, commit, machine, publish, rss_kib, selected

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUNNERS = ("plain", "racecheck")


@triton.jit
def warmup_copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


def run_one(name: str, runner: str) -> dict:
    """Run one workload with one runner in this process; time, memory and correctness."""
    sys.path.insert(0, str(HERE))
    import numpy as np
    import torch
    import workloads

    import tilescope
    from tilescope.clients.racecheck import RaceCheck

    client = RaceCheck() if runner == "racecheck" else None
    clients = [client] if client is not None else []

    def wrap(kernel):
        return tilescope.trace(kernel, clients=clients)

    wrap(warmup_copy)[(1,)](torch.ones(16), torch.zeros(16), BLOCK=16)
    workload = next(w for w in workloads.WORKLOADS if w.name == name)
    prepared = workload.prepare(np.random.default_rng(0))
    base = rss_kib("VmHWM")
    t0 = time.perf_counter()
    prepared.launch(wrap)
    seconds = time.perf_counter() - t0
    peak = (rss_kib("VmHWM") - base) / 1024
    err = prepared.error()
    found = len(client.report().findings) if client is not None else 0
    return {"workload": name, "runner": runner, "seconds": seconds, "peak_mib": peak, "error": err,
            "findings": found, "ok": found == 0 and err <= workload.tolerance,
            "touched_mib": client.touched_bytes / 2**20 if client is not None else 0.0,
            "shadow_mib": client.peak_shadow_bytes / 2**20 if client is not None else 0.0}


def _measure(name: str, runner: str, timeout: int) -> dict:
    cmd = [sys.executable, __file__, "--child", name, runner]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"workload": name, "runner": runner, "seconds": math.inf, "ok": False,
                "error": f"timeout (> {timeout} s)"}
    if out.returncode != 0:
        tail = (out.stderr or out.stdout).strip().splitlines()[-1:] or ["?"]
        return {"workload": name, "runner": runner, "seconds": math.inf, "ok": False, "error": tail[0][:120]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _row(name: str, plain: dict, race: dict) -> str:
    def cell(r: dict) -> str:
        if not math.isfinite(r.get("seconds", math.inf)):
            return f"fail: {r.get('error')}"
        text = f"{r['seconds']:.3f}"
        return text if r.get("ok") else f"{text} (NOT ok: {r.get('findings')} findings, err {r.get('error')})"

    both = math.isfinite(plain.get("seconds", math.inf)) and math.isfinite(race.get("seconds", math.inf))
    ratio = f"{race['seconds'] / plain['seconds']:.2f}×" if both else "-"
    memory = (f"{plain['peak_mib']:.0f} | {race['peak_mib']:.0f} | {race['touched_mib']:.0f} | "
              f"{race['shadow_mib']:.0f}") if both else "- | - | - | -"
    return f"| {name} | {cell(plain)} | {cell(race)} | {ratio} | {memory} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "RUNNER"), help=argparse.SUPPRESS)
    add_only(parser)
    parser.add_argument("--timeout", type=int, default=600, help="seconds per pair")
    parser.add_argument("--no-append", action="store_true", help="print only; do not touch RESULTS.md")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(*args.child)))
        return 0
    sys.path.insert(0, str(HERE))
    import workloads

    rows = ["| workload | plain s | racecheck s | racecheck / plain (target ≤ 3×) | plain peak MiB | "
            "racecheck peak MiB | touched MiB | shadow MiB |", "|---|---|---|---|---|---|---|---|"]
    for w in workloads.WORKLOADS:
        if not selected(w.name, args.only):
            continue
        plain, race = (_measure(w.name, runner, args.timeout) for runner in RUNNERS)
        rows.append(_row(w.name, plain, race))
        print(rows[-1], flush=True)
    header = [f"## Racecheck (issue 12) — {time.strftime('%Y-%m-%d')}, commit {commit()}", "",
              f"Machine: {machine()}; Python {sys.version.split()[0]}, Triton {triton.__version__}. "
              "Each pair in its own process, warmed up on a tiny unrelated kernel, then one timed "
              "launch with outputs computed. Peak: growth of the process's peak RSS during the launch; "
              "touched: the tensors the launch accessed; shadow: racecheck's own arrays at their "
              "largest. Target: peak ≤ plain + touched.", ""]
    publish("\n".join(header + rows) + "\n", append=not args.no_append)
    return 0


if __name__ == "__main__":
    sys.exit(main())
