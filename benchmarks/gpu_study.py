"""Issue 6 on a real GPU: suite table, bad-input checks, a CLI compare, and the A/A + injected-slowdown study.

Run from the repository root on the GPU machine (it only collects raw data; the statistics are
computed afterwards by ``benchmarks/gpu_study_report.py``, on any machine):

    PYTHONPATH=src python3 benchmarks/gpu_study.py --out OUTDIR --phases suite,bad,compare,study \
        --study-seconds 240 --deadline-seconds 560

Study design: four arms run as separate worker processes, interleaved in blocks that hold each arm
once in a shuffled order: A and A2 (identical; the A/A arms), and B3, B10 (the same kernels with
their work dimension scaled by 1.03 and 1.10, i.e. variants doing ~3 % and ~10 % more work). Each
process measures every study kernel and reports its median latency; processes are the unit of
replication. Scheduling stops at ``--study-seconds``; everything stops at ``--deadline-seconds``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

STUDY_KERNELS = ["matmul_bf16", "rmsnorm", "topk_routing"]
ARMS = {"A": 1.0, "A2": 1.0, "B3": 1.03, "B10": 1.10}


def _cli(args: list[str], out: Path, name: str, budget: float) -> None:
    cmd = [sys.executable, "-m", "tilescope.cli", *args]
    print(f"\n$ tilescope {' '.join(args)}", flush=True)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=max(5.0, budget))
        text = proc.stdout + "\n[stderr]\n" + proc.stderr[-4000:] + f"\n[exit {proc.returncode}]\n"
    except subprocess.TimeoutExpired as exc:
        text = f"{exc.stdout or ''}\n[timed out after {budget:.0f}s]\n"
    (out / f"{name}.txt").write_text(text)
    print(text[-6000:], flush=True)


def _study(out: Path, seconds: float, seed: int) -> None:
    from tilescope.bench.compare import interleaved
    from tilescope.bench.procs import Side, run_schedule

    sides = [Side(name, scale=scale) for name, scale in ARMS.items()]
    schedule = [(s, {"benchmarks": STUDY_KERNELS, "reps": 30}) for s in interleaved(sides, 500, seed)]
    stop = time.monotonic() + seconds
    done = 0
    with (out / "study.jsonl").open("w") as fh:
        for outcome in run_schedule(schedule, prefetch=2):
            fh.write(
                json.dumps(
                    {
                        "index": outcome.index,
                        "side": outcome.side.name,
                        "scale": outcome.side.scale,
                        "env": outcome.env,
                        "clocks": outcome.clocks,
                        "failure": outcome.failure,
                        "results": [
                            {k: v for k, v in r.items() if k != "samples_ms"} for r in outcome.results
                        ],
                    }
                )
                + "\n"
            )
            fh.flush()
            done += 1
            if done % 20 == 0:
                print(f"study: {done} processes", flush=True)
            if time.monotonic() > stop and done % len(ARMS) == 0:
                break
    print(f"study: {done} processes in total", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--phases", default="suite,bad,compare,study")
    parser.add_argument("--study-seconds", type=float, default=200)
    parser.add_argument("--deadline-seconds", type=float, default=540)
    parser.add_argument("--seed", type=int, default=6)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("XDG_CACHE_HOME", str(args.out / "cache"))
    end = time.monotonic() + args.deadline_seconds
    phases = args.phases.split(",")
    db = str(args.out / "bench.sqlite")
    if "study" in phases:
        _study(args.out, min(args.study_seconds, end - time.monotonic() - 30), args.seed)
    if "suite" in phases:
        _cli(
            [
                "bench",
                "run",
                "--db",
                db,
                "--json",
                str(args.out / "suite.json"),
                "--reps",
                "100",
                "--prefetch",
                "2",
                "--label",
                "h200-suite",
            ],
            args.out,
            "suite",
            end - time.monotonic(),
        )
    if "bad" in phases:
        _cli(
            ["bench", "run", "--module", "tests/bench/fixtures/bad_suite.py", "--db", db, "--no-baseline"],
            args.out,
            "bad",
            end - time.monotonic(),
        )
        _cli(
            [
                "bench",
                "compare",
                "-k",
                "rmsnorm",
                "--head",
                "/nonexistent/venv",
                "--processes",
                "2",
                "--db",
                db,
            ],
            args.out,
            "unreachable",
            end - time.monotonic(),
        )
    if "compare" in phases:
        _cli(
            [
                "bench",
                "compare",
                "-k",
                "rmsnorm",
                "-k",
                "matmul_bf16",
                "--head-scale",
                "1.10",
                "--processes",
                "6",
                "--prefetch",
                "2",
                "--db",
                db,
                "--json",
                str(args.out / "compare.json"),
            ],
            args.out,
            "compare",
            end - time.monotonic(),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
