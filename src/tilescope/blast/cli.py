"""``tilescope blast-radius``: compile a corpus under two compilers (or option sets), report what changed."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tilescope.bench.assignments import parse_assignments
from tilescope.bench.loading import BUILTIN, load_all, python_files
from tilescope.bench.paths import cache_dir
from tilescope.bench.registry import select

DEFAULT_TARGETS = "sm_90a,sm_100a,gfx942"


def register(subparsers: Any) -> None:
    """Add the ``blast-radius`` sub-command."""
    p = subparsers.add_parser(
        "blast-radius",
        help="what a compiler change does to generated code (no GPU needed)",
        description=__doc__,
    )
    for side in ("base", "head"):
        p.add_argument(
            f"--{side}",
            default=sys.executable,
            metavar="ENV",
            help=f"{side} virtual environment or python (default: this interpreter)",
        )
        p.add_argument(
            f"--{side}-set",
            action="append",
            default=[],
            metavar="VAR=VALUE",
            help=f"environment variable for {side} compiles, e.g. a TRITON_* knob (repeatable)",
        )
        p.add_argument(
            f"--{side}-option",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help=f"compile option for {side}, e.g. num_stages=4 (repeatable)",
        )
    p.add_argument(
        "--corpus",
        type=Path,
        default=None,
        help="directory of .py files registering benchmarks with compile specs (default: the built-in suite)",
    )
    p.add_argument("--module", action="append", default=[], metavar="REF", help="a corpus module or .py file")
    p.add_argument("--filter", "-k", action="append", default=[], metavar="GLOB", help="benchmark name glob")
    p.add_argument("--targets", default=DEFAULT_TARGETS, help=f"comma-separated (default {DEFAULT_TARGETS})")
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="parallel compile processes")
    p.add_argument("--cache", type=Path, default=None, help="artifact cache (default: user cache dir)")
    p.add_argument("--markdown", type=Path, default=None, help="write the markdown report here too")
    p.add_argument("--json", type=Path, default=None, help="write the JSON report here")
    p.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    from tilescope.blast import build, radius, report
    from tilescope.blast.compiling import parse_target

    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    for t in targets:
        try:
            parse_target(t)
        except ValueError as exc:
            print(f"tilescope blast-radius: {exc}", file=sys.stderr)
            return 2
    try:
        modules = list(args.module) + (python_files(args.corpus) if args.corpus else [])
        benches = select(None, args.filter, load_all(modules))
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError) as exc:
        print(f"tilescope blast-radius: {exc}", file=sys.stderr)
        return 2
    if not benches:
        print(
            "tilescope blast-radius: the corpus registers no benchmark (matching the filter)", file=sys.stderr
        )
        return 2
    try:
        sides = [
            build.BuildSide(
                name,
                getattr(args, name),
                parse_assignments(getattr(args, f"{name}_set"), f"--{name}-set"),
                parse_assignments(getattr(args, f"{name}_option"), f"--{name}-option", json_values=True),
            )
            for name in ("base", "head")
        ]
    except ValueError as exc:
        print(f"tilescope blast-radius: {exc}", file=sys.stderr)
        return 2
    jobs = [
        build.Job(b.name, i, spec.name, t)
        for b in benches
        for i, spec in enumerate(b.compile_specs())
        for t in targets
    ]
    cache = args.cache or cache_dir() / "blast"
    start = time.monotonic()
    results = build.build_all(sides, modules, jobs, cache, args.jobs)
    changes = [radius.compare_job(j, results["base"][j.id], results["head"][j.id], cache) for j in jobs]
    summary = radius.summarize(changes, targets)
    meta = {
        "base": _side_meta(sides[0], results["base"], cache),
        "head": _side_meta(sides[1], results["head"], cache),
        "corpus": str(args.corpus)
        if args.corpus
        else (", ".join(args.module) or f"built-in suite ({BUILTIN})"),
        "kernels": len(jobs) // max(1, len(targets)),
        "targets": targets,
        "parallel": args.jobs,
        "seconds": time.monotonic() - start,
        "jobs_total": 2 * len(jobs),
        "cached": sum(o.cached for side in results.values() for o in side.values()),
    }
    text = report.markdown(meta, changes, summary)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(radius.as_json(meta, changes, summary), indent=1))
    return 0


def _side_meta(side: Any, outcomes: dict[str, Any], cache: Path) -> dict[str, Any]:
    from tilescope.blast.build import load_artifacts

    version = next(
        (load_artifacts(cache, o.key)["triton"] for o in outcomes.values() if o.status == "ok"), "?"
    )
    settings = ", ".join(f"{k}={v}" for k, v in {**side.variables, **side.options}.items())
    label = f"Triton {version}" + (f" ({settings})" if settings else "")
    return {
        "label": label,
        "triton": version,
        "python": side.env,
        "variables": side.variables,
        "options": side.options,
    }
