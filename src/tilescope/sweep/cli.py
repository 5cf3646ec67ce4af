"""``tilescope sweep SPEC``: every cell of a spec's matrix, on local processes or a Ray cluster, and
one merged report.

Exit status: 2 when the spec or the results folder is unusable; 1 when a cell did not end ``ok``
or a client reported an error (unless ``--no-fail``); else 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from .cell import OK, STATUSES, CellResult


def register(subparsers: Any) -> None:
    """Add ``tilescope sweep`` to the command line."""
    p = subparsers.add_parser(
        "sweep", help="run kernels over a matrix of shapes, dtypes, constexprs and configs; one report",
        description="Run every cell of a sweep spec (TOML; see docs/sweep.md) under the spec's clients, "
                    "on local worker processes or a Ray cluster, and merge the cells' reports into one.")
    p.add_argument("spec", help="the sweep spec (TOML)")
    p.add_argument("-j", "--workers", type=int, default=None, metavar="N",
                   help="local worker processes (default: every core); 0: in this process, without "
                        "isolation (for a debugger; a crashing cell ends the sweep)")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="run the cells as Ray tasks on this cluster (auto, local, HOST:PORT, "
                        "ray://HOST:PORT); needs the sweep extra (pip install 'tilescope[sweep]')")
    p.add_argument("--ray-retries", type=int, default=2, metavar="N",
                   help="Ray: times a task is retried when its worker or node is lost (default: 2)")
    p.add_argument("-o", "--results", default=None, metavar="DIR",
                   help="results folder: one JSON per cell and report.json (default: ./<spec name>-sweep)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--resume", action="store_true",
                      help="run only the cells not already in the results folder")
    mode.add_argument("--fresh", action="store_true", help="remove earlier cell results first")
    p.add_argument("--sarif", default=None, metavar="PATH",
                   help="also write the merged findings as SARIF 2.1.0")
    p.add_argument("--json", action="store_true", help="print the merged report as JSON on stdout")
    p.add_argument("--list", action="store_true", help="print the cells, one per line; run nothing")
    p.add_argument("--no-fail", action="store_true",
                   help="exit 0 even when a cell did not end ok or a client reported an error")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Run the sweep, print (or write) the merged report, return the exit status."""
    from .runner import ResultsError, local_backend, ray_backend, sweep
    from .spec import SpecError, load

    console = Console(stderr=True)
    try:
        spec = load(args.spec)
        if args.list:
            for cell in spec.cells():
                print(cell.id)
            return 0
        if args.ray is not None:
            try:
                import ray  # noqa: F401
            except ImportError:
                raise SpecError("--ray needs Ray: pip install 'tilescope[sweep]'") from None
            backend = ray_backend(args.ray, args.ray_retries)
        else:
            if args.workers is not None and args.workers < 0:
                raise SpecError(f"--workers must be 0 or more (got {args.workers})")
            backend = local_backend(args.workers)
        bar = _Bar(console, spec.name)
        with bar:
            report = sweep(spec, args.results or f"{spec.name}-sweep", backend, resume=args.resume,
                           fresh=args.fresh, progress=bar.advance, started=bar.start)
    except (SpecError, ResultsError) as exc:
        print(f"tilescope sweep: error: {exc}", file=sys.stderr)
        return 2
    if args.sarif:
        report.write_sarif(args.sarif)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        console.print(report)
    if report.errors and not args.no_fail:
        return 1
    return 0


class _Bar:
    """The sweep's progress bar: cells done of all, and how many ended each way."""

    def __init__(self, console: Console, name: str):
        self.progress = Progress(TextColumn(f"[bold]sweep {name}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[tally]}"), TimeElapsedColumn(),
                                 TimeRemainingColumn(), console=console, disable=not console.is_terminal)
        self.tally = dict.fromkeys(STATUSES, 0)
        self.task: Any = None

    def __enter__(self) -> _Bar:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def start(self, done: int, total: int) -> None:
        self.task = self.progress.add_task("cells", total=total, completed=done, tally=self._text())

    def advance(self, result: CellResult) -> None:
        self.tally[result.status] += 1
        self.progress.update(self.task, advance=1, tally=self._text())

    def _text(self) -> str:
        return "  ".join(f"{'[red]' if s != OK else ''}{n} {s}{'[/]' if s != OK else ''}"
                         for s, n in self.tally.items() if n)
