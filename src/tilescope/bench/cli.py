"""``tilescope bench``: run the suite on a GPU, compare two builds, check history for steps."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tilescope.bench import stats
from tilescope.bench.assignments import parse_assignments
from tilescope.bench.loading import load_all
from tilescope.bench.paths import default_db
from tilescope.bench.registry import Benchmark, select

NO_GPU = (
    "no CUDA GPU is visible here (torch.cuda.is_available() is False, or torch is not installed), so "
    "nothing can be timed. `tilescope bench run --dry-run` compiles every kernel for sm_90a on the CPU "
    "and checks accuracy on tilescope's CPU engine where it is available."
)


def register(subparsers: Any) -> None:
    """Add ``bench run``, ``bench compare`` and ``bench history``."""
    bench = subparsers.add_parser("bench", help="benchmark kernels on a GPU and compare builds")
    sub = bench.add_subparsers(dest="bench_command", metavar="ACTION")
    bench.set_defaults(func=lambda _args: (bench.print_help(), 2)[1])

    def selection(p: argparse.ArgumentParser) -> None:
        p.add_argument("suite", nargs="?", default=None, help="suite name (default: every registered one)")
        p.add_argument(
            "--filter", "-k", action="append", default=[], metavar="GLOB", help="benchmark name glob"
        )
        p.add_argument(
            "--module",
            action="append",
            default=[],
            metavar="REF",
            help="module or .py file registering benchmarks (default: the built-in suite)",
        )
        p.add_argument("--db", type=Path, default=None, help=f"results database (default {default_db()})")
        p.add_argument("--json", type=Path, default=None, help="also write the results as JSON here")
        p.add_argument("--reps", type=int, default=50, help="timed graph replays per process (default 50)")
        p.add_argument(
            "--prefetch", type=int, default=1, help="worker processes starting up ahead (default 1)"
        )

    run = sub.add_parser("run", help="time the suite on this machine's GPU and store the results")
    selection(run)
    run.add_argument("--processes", type=int, default=1, help="processes per benchmark (default 1)")
    run.add_argument("--no-baseline", action="store_true", help="do not time the torch baselines")
    run.add_argument("--label", default="", help="a free-form label stored with the session")
    run.add_argument("--scale", type=float, default=1.0, help="multiply each benchmark's work dimension")
    run.add_argument("--remeasure-roofline", action="store_true", help="measure the roofline again")
    run.add_argument(
        "--dry-run", action="store_true", help="no GPU: compile for sm_90a and check on the CPU engine"
    )
    run.set_defaults(func=_run)

    cmp = sub.add_parser("compare", help="A/B test two environments, commits or option sets")
    selection(cmp)
    for side in ("base", "head"):
        cmp.add_argument(
            f"--{side}", default=None, metavar="ENV", help=f"{side} virtual environment or python"
        )
        cmp.add_argument(
            f"--{side}-commit", default=None, metavar="REV", help=f"{side} commit of this repository"
        )
        cmp.add_argument(
            f"--{side}-set",
            action="append",
            default=[],
            metavar="VAR=VALUE",
            help=f"environment variable for {side} workers (an option set; repeatable)",
        )
        cmp.add_argument(
            f"--{side}-scale", type=float, default=1.0, help=f"{side} work scale (injected slowdown)"
        )
    cmp.add_argument("--processes", type=int, default=8, help="processes per side and benchmark (default 8)")
    cmp.add_argument(
        "--threshold", type=float, default=stats.THRESHOLD, help="ratio threshold (default 0.02)"
    )
    cmp.add_argument("--alpha", type=float, default=stats.ALPHA, help="rank test significance (default 0.01)")
    cmp.add_argument("--seed", type=int, default=0, help="seed of the interleaving order")
    cmp.set_defaults(func=_compare)

    hist = sub.add_parser(
        "history", help="flag steps in the newest run against a rolling median/MAD baseline"
    )
    hist.add_argument("--db", type=Path, default=None, help=f"results database (default {default_db()})")
    hist.add_argument("--filter", "-k", default="*", metavar="GLOB", help="benchmark name glob")
    hist.add_argument("--window", type=int, default=10, help="runs in the rolling baseline (default 10)")
    hist.add_argument("--k", type=float, default=5.0, help="scaled MADs that make a step (default 5)")
    hist.add_argument(
        "--threshold", type=float, default=stats.THRESHOLD, help="minimum ratio change (default 0.02)"
    )
    hist.set_defaults(func=_history)


def _benchmarks(args: argparse.Namespace) -> list[Benchmark]:
    try:
        chosen = select(args.suite, args.filter, load_all(args.module))
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise SystemExit(f"tilescope bench: {exc}") from None
    if not chosen:
        raise SystemExit(f"tilescope bench: no benchmark matches suite={args.suite!r} filter={args.filter}")
    return chosen


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def _run(args: argparse.Namespace) -> int:
    from tilescope.bench import procs, report, store
    from tilescope.bench.environment import git_commit

    benches = _benchmarks(args)
    if args.dry_run:
        return _dry_run(benches)
    if not _cuda_available():
        print(f"tilescope bench run: {NO_GPU}", file=sys.stderr)
        return 2
    request = {"modules": args.module, "reps": args.reps, "baseline": not args.no_baseline}
    side = procs.Side("run", scale=args.scale)
    # one process per benchmark: a kernel that faults the GPU cannot take the others down with it
    schedule = [(side, {**request, "benchmarks": [b.name]}) for _ in range(args.processes) for b in benches]
    schedule[0][1]["remeasure_roofline"] = (
        args.remeasure_roofline
    )  # the first worker measures, the rest reuse
    conn = store.connect(args.db or default_db())
    session = store.new_session(conn, "run", args.label, git_commit(), sys.argv)
    results: list[dict[str, Any]] = []
    failed = 0
    for outcome in procs.run_schedule(schedule, prefetch=args.prefetch):
        store.add_outcome(conn, session, outcome)
        _progress(outcome, len(schedule))
        failed += bool(outcome.failure)
        results.extend(outcome.results)
    print(report.results_table(_merge_processes(results)))
    if args.json:
        args.json.write_text(json.dumps({"session": session, "results": results}, indent=1))
    bad = [r for r in results if r["status"] != "ok"]
    return 1 if bad or failed else 0


def _progress(outcome: Any, total: int) -> None:
    """One stderr line per finished worker process, so a long session shows where it is."""
    if outcome.failure:
        print(
            f"[{outcome.index + 1}/{total}] {outcome.side.name}: failed: {outcome.failure}", file=sys.stderr
        )
        return
    parts = [
        f"{r['bench']} {r['variant']} "
        + (f"{r['median_ms']:.4f} ms" if r["status"] == "ok" and r.get("median_ms") else r["status"])
        for r in outcome.results
    ]
    print(f"[{outcome.index + 1}/{total}] {outcome.side.name}: {'; '.join(parts)}", file=sys.stderr)


def _merge_processes(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (bench, shape, variant): with several processes, the one with the median latency."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault((r["bench"], r["shape"], r["variant"]), []).append(r)
    merged = []
    for rows in groups.values():
        bad = [r for r in rows if r["status"] != "ok"]
        if bad:
            merged.append(bad[0])
            continue
        rows.sort(key=lambda r: r["median_ms"])
        merged.append(rows[(len(rows) - 1) // 2])
    return merged


def _dry_run(benches: list[Benchmark]) -> int:
    from tilescope.bench.dryrun import DRY_TARGET, dry_run, engine_launcher
    from tilescope.bench.report import table

    launcher = engine_launcher()
    if launcher is None:
        print(
            "note: the CPU execution engine (tilescope.trace) is not available in this build; "
            f"the dry run only compiles for {DRY_TARGET}.",
            file=sys.stderr,
        )
    rows = dry_run(benches, launcher)
    print(
        table(
            ["benchmark", "step", "status", "detail"], [(r.bench, r.step, r.status, r.detail) for r in rows]
        )
    )
    return 1 if any(r.status in ("error", "wrong") for r in rows) else 0


def _side(args: argparse.Namespace, name: str) -> Any:
    from tilescope.bench import procs

    env_ref = getattr(args, name)
    commit = getattr(args, f"{name}_commit")
    variables = parse_assignments(getattr(args, f"{name}_set"), f"--{name}-set")
    python = env_ref if env_ref else sys.executable
    source = procs.source_of_commit(commit) if commit else procs.SOURCE_ROOT
    return procs.Side(name, python=python, source=source, env=variables, scale=getattr(args, f"{name}_scale"))


def _compare(args: argparse.Namespace) -> int:
    from tilescope.bench import compare, procs, report, store
    from tilescope.bench.environment import git_commit

    benches = _benchmarks(args)
    if not _cuda_available():
        print(f"tilescope bench compare: {NO_GPU}", file=sys.stderr)
        return 2
    try:
        base, head = _side(args, "base"), _side(args, "head")
    except ValueError as exc:
        print(f"tilescope bench compare: {exc}", file=sys.stderr)
        return 2
    if args.processes < 2:
        print(
            "tilescope bench compare: --processes must be at least 2 (processes are the unit of replication)",
            file=sys.stderr,
        )
        return 2
    request = {"modules": args.module, "reps": args.reps, "baseline": False}
    schedule = [
        (side, {**request, "benchmarks": [b.name]})
        for b in benches
        for side in compare.interleaved([base, head], args.processes, args.seed)
    ]
    conn = store.connect(args.db or default_db())
    session = store.new_session(conn, "compare", "", git_commit(), sys.argv)
    outcomes = []
    for outcome in procs.run_schedule(schedule, prefetch=args.prefetch):
        store.add_outcome(conn, session, outcome)
        _progress(outcome, len(schedule))
        outcomes.append(outcome)
    medians, failures = compare.per_process_medians(outcomes)
    items = compare.verdicts(medians, "base", "head", threshold=args.threshold, alpha=args.alpha)
    shapes = {(b.name, i): b.shape_label(s) for b in benches for i, s in enumerate(b.shapes)}
    for title, kind in (
        ("Regressions", "regression"),
        ("Improvements", "improvement"),
        ("No verdict", "no change"),
    ):
        chosen = [v for v in items if v.comparison.verdict == kind]
        print(f"\n## {title} ({len(chosen)})\n")
        if chosen:
            print(report.verdict_table(chosen, shapes))
    print(
        f"\nverdict = ratio beyond {args.threshold:.1%} AND two-sided Mann-Whitney p < {args.alpha:g}; "
        "ratio = Hodges-Lehmann estimate of B/A latency over per-process medians."
    )
    if failures:
        print(f"\n## Failures ({len(failures)})\n")
        for key, message in sorted(failures.items()):
            print(f"- {key}: {message}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "session": session,
                    "failures": failures,
                    "verdicts": [
                        {
                            "bench": v.bench,
                            "case_index": v.case_index,
                            "variant": v.variant,
                            **v.comparison.as_dict(),
                        }
                        for v in items
                    ],
                },
                indent=1,
            )
        )
    return 1 if any(v.comparison.verdict == "regression" for v in items) or failures else 0


def _history(args: argparse.Namespace) -> int:
    from tilescope.bench import report, store

    path = args.db or default_db()
    if not path.exists():
        print(
            f"tilescope bench history: no results database at {path}; run `tilescope bench run` first",
            file=sys.stderr,
        )
        return 2
    series = store.run_series(store.connect(path), args.filter)
    rows = []
    for key, points in sorted(series.items()):
        judged = stats.rolling_steps(
            [p["median_ms"] for p in points], window=args.window, k=args.k, threshold=args.threshold
        )
        rows.append((key, judged[-1], len(points)))
    print(report.history_table(rows))
    return 1 if any(p.step == "slower" for _, p, _ in rows) else 0
