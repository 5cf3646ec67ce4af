"""What "gpu" numerics (the default) cost over "ideal" on the benchmark workloads, batched engine.

Each workload runs with both modes, interleaved, several times on fresh inputs, the same for both
modes of a round (each result checked against its float64 reference); the table gives the fewest
CPU seconds of each and the slowdown.

    .venv/bin/python benchmarks/numerics_cost.py            # appends to benchmarks/RESULTS.md
    .venv/bin/python benchmarks/numerics_cost.py --only softmax flash --no-append
    .venv/bin/python benchmarks/numerics_cost.py --sfu    # "gpu" with each gpu_sfu source too
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from report import add_only, commit, machine, publish, selected
from workloads import WORKLOADS

import tilescope

#: mode -> its tilescope.trace options
MODES = {"ideal": {"numerics": "ideal"}, "gpu": {"numerics": "gpu"}}
#: with --sfu: "gpu" numerics with each source of the approximate instructions' results
SFU_MODES = {f"gpu, {sfu}": {"numerics": "gpu", "gpu_sfu": sfu} for sfu in ("model", "tables")}


def measure(workload, repeats: int, modes: dict[str, dict]) -> dict[str, float]:
    """Fewest CPU seconds per mode (modes interleaved, a warm-up run of each first; every mode of a
    round gets the same inputs, since a divergent workload's work depends on them)."""
    times: dict[str, list[float]] = {m: [] for m in modes}
    for i in range(repeats + 1):
        for mode, options in modes.items():
            prepared = workload.prepare(np.random.default_rng(i))
            start = time.process_time()  # CPU seconds: waiting for a busy shared machine does not count
            prepared.launch(lambda k, options=options: tilescope.trace(k, **options))
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
    add_only(parser)
    parser.add_argument(
        "--sfu", action="store_true", help='also time "gpu" with gpu_sfu="model" and "tables"'
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-append", action="store_true", help="print only; do not touch RESULTS.md")
    args = parser.parse_args(argv)
    modes = {**MODES, **(SFU_MODES if args.sfu else {})}
    slower = [m for m in modes if m != "ideal"]
    rows = []
    for w in WORKLOADS:
        if selected(w.name, args.only):
            t = measure(w, args.repeats, modes)
            cells = [f"{t[m]:.3f}" for m in modes] + [f"{t[m] / t['ideal'] - 1:+.1%}" for m in slower]
            rows.append(f"| {w.name} | {' | '.join(cells)} |")
            print(rows[-1], flush=True)
    header = [f"{m} CPU s" for m in modes] + [f"{m} slowdown" for m in slower]
    text = (
        f'## Numerics: "gpu" (default) vs "ideal" ({machine()}, {time.strftime("%Y-%m-%d")}, {commit()})\n\n'
        f"Batched engine, fewest CPU seconds of {args.repeats} interleaved runs each "
        "(a shared 2-core machine: differences under about 20 % are noise).\n\n"
        f"| workload | {' | '.join(header)} |\n|---|{'---:|' * len(header)}\n" + "\n".join(rows) + "\n"
    )
    publish(text, not args.no_append)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
