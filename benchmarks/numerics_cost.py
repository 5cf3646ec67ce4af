"""What "gpu" numerics (the default) cost over "ideal" on the benchmark workloads, batched engine.

Each workload runs with both modes, interleaved, several times on fresh inputs, the same for both
modes of a round (each result checked against its float64 reference); the table gives the fewest
CPU seconds of each and the slowdown.

    .venv/bin/python benchmarks/numerics_cost.py            # appends to benchmarks/RESULTS.md
    .venv/bin/python benchmarks/numerics_cost.py --only softmax --no-append
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from report import commit, machine, publish  # benchmarks/report.py (script dir on sys.path)
from workloads import WORKLOADS

import tilescope

MODES = ("ideal", "gpu")


def measure(workload, repeats: int) -> dict[str, float]:
    """Fewest CPU seconds per mode (modes interleaved, a warm-up run of each first; both modes of a
    round get the same inputs, since a divergent workload's work depends on them)."""
    times: dict[str, list[float]] = {m: [] for m in MODES}
    for i in range(repeats + 1):
        for mode in MODES:
            prepared = workload.prepare(np.random.default_rng(i))
            start = time.process_time()  # CPU seconds: waiting for a busy shared machine does not count
            prepared.launch(lambda k, mode=mode: tilescope.trace(k, numerics=mode))
            elapsed = time.process_time() - start
            error = prepared.error()
            if error > workload.tolerance:
                raise AssertionError(f"{workload.name} ({mode}): error {error:.3g} > {workload.tolerance}")
            if i:
                times[mode].append(elapsed)
    return {m: min(t) for m, t in times.items()}  # the least disturbed run: the machine is shared


def main(argv: list[str] | None = None) -> int:
    """Command line: time every workload in both modes and print (and append) the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="substring filter on workload names")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-append", action="store_true", help="print only; do not touch RESULTS.md")
    args = parser.parse_args(argv)
    rows = []
    for w in WORKLOADS:
        if args.only in w.name:
            t = measure(w, args.repeats)
            rows.append(
                f"| {w.name} | {t['ideal']:.3f} | {t['gpu']:.3f} | {t['gpu'] / t['ideal'] - 1:+.1%} |"
            )
            print(rows[-1], flush=True)
    text = (
        f'## Numerics: "gpu" (default) vs "ideal" ({machine()}, {time.strftime("%Y-%m-%d")}, {commit()})\n\n'
        f"Batched engine, fewest CPU seconds of {args.repeats} interleaved runs each "
        "(a shared 2-core machine: differences under about 20 % are noise).\n\n"
        "| workload | ideal CPU s | gpu CPU s | slowdown |\n|---|---:|---:|---:|\n" + "\n".join(rows) + "\n"
    )
    publish(text, not args.no_append)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
