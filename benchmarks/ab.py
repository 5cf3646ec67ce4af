"""A/B: the benchmark workloads on two checkouts of tilescope, interleaved in one run on one machine.

Checkout A (e.g. a worktree of the commit before a refactor: ``git worktree add ../base HEAD~5``)
and B (default: this checkout) run the same workloads as plain launches, sanitizer-only runs and
traced runs (values off). Every run is a fresh process that imports tilescope from the checkout's
``src``, then times ``import tilescope`` plus the first launch (what a user running a script sees:
imports, rewriting, first-touch costs) and a second, warm launch. Runs alternate A, B, A, B, ...
so that a noisy neighbour hits both; the table shows medians and B / A. Results are checked
against float64 references (workloads.py).

Checkout A needs its own C kernels (``engine/_fma_chain*.so``, ``engine/_sfu*.so``): a worktree or a
``git archive`` has none, and without them the engine falls back to torch's FMA chain (3-4x slower
on flash attention's warm launch). Build them there (``.venv/bin/python setup.py build_ext --inplace``
from A's root) or copy B's, when the C sources are the same on both sides.

    .venv/bin/python benchmarks/ab.py --a ../base            # appends to benchmarks/RESULTS.md
    .venv/bin/python benchmarks/ab.py --a ../base --only matmul --rounds 3 --no-append
    .venv/bin/python benchmarks/ab.py --a ../base --clock cpu   # CPU seconds: for a machine others load
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import add_only, commit, machine, publish, selected

HERE = Path(__file__).resolve().parent
SETUPS = ("plain", "sanitizer", "tracer")


def child(name: str, setup: str) -> dict:
    """One fresh-process run: the first and a warm launch of one workload under one setup."""
    sys.path.insert(0, str(HERE))
    import numpy as np
    import workloads

    clock = time.process_time if os.environ.get("AB_CLOCK") == "cpu" else time.perf_counter
    started = clock()
    import tilescope

    imported = clock() - started
    options: dict = {}
    if setup == "sanitizer":
        options = {"clients": "sanitizer"}
    folder = tempfile.mkdtemp(prefix="tilescope-ab-")
    workload = next(w for w in workloads.WORKLOADS if w.name == name)
    rng = np.random.default_rng(0)
    times, errors = [], []
    for i in range(2):
        if setup == "tracer":
            options = {"clients": "tracer", "trace_dir": f"{folder}/t{i}"}
        prepared = workload.prepare(rng)
        t0 = clock()
        prepared.launch(lambda kernel, o=options: tilescope.trace(kernel, **o))
        times.append(clock() - t0)
        errors.append(prepared.error() if setup != "sanitizer" else 0.0)
    ok = all(e <= workload.tolerance for e in errors)
    return {"import": imported, "first": imported + times[0], "warm": times[1], "ok": ok}


def _run(src: Path, name: str, setup: str, timeout: int, clock: str = "wall") -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "AB_CLOCK": clock}
    cmd = [sys.executable, __file__, "--child", name, setup]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout).strip().splitlines()[-1:] or ["?"]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(runs: list[dict], key: str) -> float | None:
    values = [r[key] for r in runs if key in r]
    return statistics.median(values) if values else None


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _ratio(b: float | None, a: float | None) -> str:
    return "-" if a is None or b is None else f"{b / a:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "SETUP"), help=argparse.SUPPRESS)
    parser.add_argument("--a", type=Path, help="checkout A (its src/ is imported)")
    parser.add_argument("--b", type=Path, default=HERE.parent, help="checkout B (default: this one)")
    parser.add_argument("--label-a", default=None, help="what A is, for the table (default: its commit)")
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per checkout and cell")
    add_only(parser)
    parser.add_argument("--dense", action="store_true", help="only workloads without divergent control")
    parser.add_argument("--setups", default=",".join(SETUPS))
    parser.add_argument("--timeout", type=int, default=600, help="seconds per run")
    parser.add_argument("--no-append", action="store_true", help="print only; do not touch RESULTS.md")
    parser.add_argument(
        "--clock", choices=("wall", "cpu"), default="wall",
        help="wall seconds, or the child's CPU seconds (steadier on a loaded machine)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    if args.a is None:
        parser.error("--a CHECKOUT is required")
    sys.path.insert(0, str(HERE))
    import workloads

    label_a = args.label_a or _commit_of(args.a)
    unit = "CPU seconds of the process" if args.clock == "cpu" else "seconds"
    rows = []
    for w in workloads.WORKLOADS:
        if not selected(w.name, args.only) or (args.dense and w.divergent):
            continue
        for setup in args.setups.split(","):
            runs: dict[str, list[dict]] = {"a": [], "b": []}
            for _ in range(args.rounds):
                for side, path in (("a", args.a), ("b", args.b)):
                    runs[side].append(_run(path.resolve() / "src", w.name, setup, args.timeout, args.clock))
            ok = all(r.get("ok") for side in runs.values() for r in side)
            fa, fb = _median(runs["a"], "first"), _median(runs["b"], "first")
            wa, wb = _median(runs["a"], "warm"), _median(runs["b"], "warm")
            print(f"{w.name:24s} {setup:10s} first {_fmt(fa)} -> {_fmt(fb)}  warm {_fmt(wa)} -> {_fmt(wb)}  "
                  f"ok={ok}", flush=True)  # fmt: skip
            rows.append(f"| {w.name} | {setup} | {_fmt(fa)} | {_fmt(fb)} | {_ratio(fb, fa)} | {_fmt(wa)} | "
                        f"{_fmt(wb)} | {_ratio(wb, wa)} | {'yes' if ok else 'NO'} |")  # fmt: skip
    text = "\n".join(
        [
            f"## A/B: {label_a} (A) vs {commit()} (B) — {time.strftime('%Y-%m-%d')}",
            "",
            f"Machine: {machine()}; Python {sys.version.split()[0]}. Median of {args.rounds} fresh processes "
            "per checkout and cell, run alternately. first: `import tilescope` plus the first launch in a "
            f"fresh process; warm: the second launch ({unit}).",
            "",
            "| workload | setup | first A s | first B s | B / A | warm A s | warm B s | B / A | correct |",
            "|---|---|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    publish(text + "\n", append=not args.no_append)
    return 0


def _commit_of(path: Path) -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=path)
    return out.stdout.strip() or str(path)


if __name__ == "__main__":
    sys.exit(main())
