"""Statistics of the GPU study (``benchmarks/gpu_study.py``): A/A false alarms and power, as markdown.

    python benchmarks/gpu_study_report.py STUDY.jsonl [STUDY2.jsonl ...] [--processes 8] [--trials 4000]

For every study kernel: the process-to-process spread of each arm; the A/A false-alarm rate of the
``bench compare`` verdict (n vs n processes drawn without replacement from the pooled A and A2
processes and split at random, and A against A2 as they were run); and the rate at which the ~3 % and
~10 % slowdown arms are called regressions (power), each with an exact 95 % Clopper-Pearson interval.
The intervals are Monte-Carlo intervals conditional on the recorded processes, which are the unit of
resampling. The pooled split treats the A and A2 processes as the one population they are (same
build, randomised order); "A vs A2 arms as run" keeps the split the run happened to make, so it also
carries that split's own luck.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from tilescope.bench import stats
from tilescope.bench.report import table


def load(paths: list[Path]) -> tuple[dict[tuple[str, str], list[float]], list[dict]]:
    """Per (kernel, arm): each process's median latency; and the raw process records."""
    per: dict[tuple[str, str], list[float]] = defaultdict(list)
    records = []
    for path in paths:
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            records.append(rec)
            for res in rec["results"]:
                if res["status"] == "ok":
                    per[(res["bench"], rec["side"])].append(res["median_ms"])
    return per, records


def _rate(e: stats.RateEstimate) -> str:
    return f"{e.verdicts}/{e.trials} = {100 * e.rate:.2f} % [{100 * e.lo:.2f}, {100 * e.hi:.2f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", nargs="+", type=Path)
    parser.add_argument("--processes", type=int, default=8, help="processes per side in one comparison")
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--threshold", type=float, default=stats.THRESHOLD)
    parser.add_argument("--alpha", type=float, default=stats.ALPHA)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    per, records = load(args.study)
    rng = np.random.default_rng(args.seed)
    kernels = sorted({k for k, _ in per})
    n = args.processes
    kw = {"threshold": args.threshold, "alpha": args.alpha}
    failed = sum(1 for r in records if r["failure"])
    print(
        f"{len(records)} processes ({failed} failed); n = {n} vs {n} processes per comparison, "
        f"{args.trials} resampled comparisons per cell; verdict = ratio beyond {args.threshold:.0%} and "
        f"two-sided Mann-Whitney p < {args.alpha:g}; 95 % Clopper-Pearson intervals.\n"
    )
    spread_rows, rate_rows = [], []
    for k in kernels:
        a_pool = per[(k, "A")] + per[(k, "A2")]
        base = float(np.median(a_pool))
        for arm in ("A", "A2", "B3", "B10"):
            v = np.asarray(per[(k, arm)])
            spread_rows.append(
                [
                    k,
                    arm,
                    len(v),
                    f"{np.median(v):.5f}",
                    f"{100 * v.std(ddof=1) / v.mean():.2f}",
                    f"{v.min():.5f}–{v.max():.5f}",
                    f"{np.median(v) / base:.4f}",
                ]
            )
        alarm = ("regression", "improvement")
        aa_pool_any = stats.verdict_rate(a_pool, None, n, args.trials, want=alarm, rng=rng, **kw)
        aa_pool = stats.verdict_rate(a_pool, None, n, args.trials, want=("regression",), rng=rng, **kw)
        aa_arms = stats.verdict_rate(per[(k, "A")], per[(k, "A2")], n, args.trials, want=alarm, rng=rng, **kw)
        p3 = stats.verdict_rate(a_pool, per[(k, "B3")], n, args.trials, want=("regression",), rng=rng, **kw)
        p10 = stats.verdict_rate(a_pool, per[(k, "B10")], n, args.trials, want=("regression",), rng=rng, **kw)
        eff3 = np.median(per[(k, "B3")]) / base - 1
        eff10 = np.median(per[(k, "B10")]) / base - 1
        rate_rows.append(
            [
                k,
                _rate(aa_pool_any),
                _rate(aa_pool),
                _rate(aa_arms),
                f"{100 * eff3:+.1f} %: {_rate(p3)}",
                f"{100 * eff10:+.1f} %: {_rate(p10)}",
            ]
        )
    print(table(["kernel", "arm", "processes", "median ms", "CV %", "range ms", "vs pooled A"], spread_rows))
    print()
    print(
        table(
            [
                "kernel",
                "A/A: any verdict (pooled split)",
                "A/A: regression (pooled split)",
                "A/A: any verdict (A vs A2 arms as run)",
                "power, +3 % work (measured effect)",
                "power, +10 % work (measured effect)",
            ],
            rate_rows,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
