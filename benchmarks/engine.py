"""Engine speed: tilescope batched and serial vs Triton's interpreter (TRITON_INTERPRET=1), one run.

Every (workload, runner) pair runs in its own subprocess, so peak memory is measured per pair and
Triton's interpreter gets the environment variable it needs before ``import triton``. Each result
is checked against a float64 reference; a wrong answer is reported and excluded from the ratios.

    .venv/bin/python benchmarks/engine.py            # everything, appends to benchmarks/RESULTS.md
    .venv/bin/python benchmarks/engine.py --only matmul --no-append
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

from report import add_only, commit, machine, publish, rss_kib, selected

HERE = Path(__file__).resolve().parent
RUNNERS = ("interpreter", "serial", "batched")


def run_one(name: str, runner: str, repeats: int) -> dict:
    """Run one workload with one runner in this process; return time, memory and error."""
    if runner == "interpreter":
        os.environ["TRITON_INTERPRET"] = "1"
    sys.path.insert(0, str(HERE))
    import numpy as np
    import workloads

    if runner == "interpreter":

        def wrap(kernel):
            return kernel
    else:
        import tilescope

        def wrap(kernel):
            return tilescope.trace(kernel, mode=runner)

    workload = next(w for w in workloads.WORKLOADS if w.name == name)
    rng = np.random.default_rng(0)
    base = rss_kib("VmHWM")
    times, err = [], None
    for _ in range(repeats):
        prepared = workload.prepare(rng)
        t0 = time.perf_counter()
        prepared.launch(wrap)
        times.append(time.perf_counter() - t0)
        err = prepared.error()
        if times[-1] > 2.0:
            break
    return {
        "workload": name,
        "runner": runner,
        "seconds": min(times),
        "runs": len(times),
        "peak_mib": (rss_kib("VmHWM") - base) / 1024,
        "error": err,
        "ok": bool(err <= workload.tolerance),
    }


def _measure(name: str, runner: str, repeats: int, timeout: int) -> dict:
    cmd = [sys.executable, __file__, "--child", name, runner, "--repeats", str(repeats)]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"workload": name, "runner": runner, "seconds": math.inf, "ok": False, "error": "timeout"}
    if out.returncode != 0:
        tail = (out.stderr or out.stdout).strip().splitlines()[-1:] or ["?"]
        return {"workload": name, "runner": runner, "seconds": math.inf, "ok": False, "error": tail[0]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _seconds(result: dict) -> str:
    """A result's time, or why it has none."""
    if not result:
        return "-"
    if math.isfinite(result.get("seconds", math.inf)):
        return f"{result['seconds']:.3f}"
    return f"fail ({result.get('error')})"


def _ratio(slow: dict, fast: dict) -> float | None:
    """slow / fast time when both runs are correct."""
    if slow.get("ok") and fast.get("ok"):
        return slow["seconds"] / fast["seconds"]
    return None


def _table(results: dict) -> list[str]:
    lines = [
        "| workload | interpreter s | serial s | batched s | batched × | serial × | batched peak MiB | "
        "interp peak MiB | correct |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    ratios = []
    for name, per in results.items():
        i, s, b = (per.get(r, {}) for r in RUNNERS)
        ok = all(x.get("ok") for x in (i, s, b) if x)
        sb, ss = _ratio(i, b), _ratio(i, s)
        if sb:
            ratios.append(sb)
        lines.append(
            f"| {name} | {_seconds(i)} | {_seconds(s)} | {_seconds(b)} | "
            f"{f'{sb:.1f}' if sb else '-'} | {f'{ss:.1f}' if ss else '-'} | "
            f"{b.get('peak_mib', 0):.0f} | {i.get('peak_mib', 0):.0f} | {'yes' if ok else 'NO'} |"
        )
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        lines.append(
            f"\nGeometric mean speed-up of batched over the interpreter: **{geo:.1f}×** "
            f"(slowest {min(ratios):.1f}×, {len(ratios)} workloads)."
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "RUNNER"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs per pair (min is kept; runs over 2 s: one)"
    )
    add_only(parser)
    parser.add_argument("--runners", default=",".join(RUNNERS))
    parser.add_argument("--timeout", type=int, default=900, help="seconds per pair")
    parser.add_argument("--no-append", action="store_true", help="print only; do not touch RESULTS.md")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child[0], args.child[1], args.repeats)))
        return 0
    sys.path.insert(0, str(HERE))
    import workloads

    results: dict[str, dict] = {}
    for w in workloads.WORKLOADS:
        if not selected(w.name, args.only):
            continue
        results[w.name] = {}
        for runner in args.runners.split(","):
            r = _measure(w.name, runner, args.repeats, args.timeout)
            results[w.name][runner] = r
            print(
                f"{w.name:24s} {runner:12s} {r.get('seconds', math.inf):9.3f} s  ok={r.get('ok')}", flush=True
            )
    import triton

    header = [
        f"## Engine speed (issue 2) — {time.strftime('%Y-%m-%d')}, commit {commit()}",
        "",
        f"Machine: {machine()}; Python {sys.version.split()[0]}, Triton {triton.__version__}. "
        "One run per pair (best of up to 3 when a run is under 2 s), each in its own process; "
        "peak MiB is the rise of the process high-water mark during the run.",
        "",
    ]
    publish("\n".join(header + _table(results)) + "\n", append=not args.no_append)
    return 0


if __name__ == "__main__":
    sys.exit(main())
