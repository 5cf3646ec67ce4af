"""``tilescope run``: run an unmodified script (or ``-m module``) with every Triton kernel on the engine.

Exit status: the script's own when it fails; else 1 when a client reported an error (unless
``--no-fail``); else 0. Reports go to stderr as text, or to stdout as JSON with ``--json`` (the
script's own output then goes to stderr, so stdout holds one JSON document).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .clients.base import Report, merge_by_client
from .clients.tracer.layout import TraceError, prepare
from .engine.memory import BOUNDS
from .errors import TilescopeError
from .gpu import BENCH_POINTS_ENV, SPECS, GPUSpec, bench_points, modelled_gpu, resolve_gpu
from .progress import LaunchProgress
from .render import console
from .scripts import RUN_ENV, run_target
from .session import current


def register(subparsers: Any) -> None:
    """Add ``tilescope run`` to the command line."""
    p = subparsers.add_parser(
        "run", help="run a Python script with every Triton kernel on the CPU engine",
        description="Run a script (or -m module) unmodified; every @triton.jit kernel it launches runs on "
                    "tilescope's CPU engine under the chosen clients. No GPU and no TRITON_INTERPRET needed.")
    p.add_argument("-c", "--clients", default=None, metavar="NAMES",
                   help="comma-separated clients, e.g. tracer,sanitizer (default: $TILESCOPE_CLIENTS)")
    add_target_arguments(p)
    p.set_defaults(func=main)


def add_target_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``tilescope run`` after ``--clients``: tracer, modelled GPU, output, the target."""
    p.add_argument("--trace-dir", default="tilescope-trace", metavar="DIR",
                   help="where the tracer writes (default: ./tilescope-trace)")
    p.add_argument("--values", choices=("off", "sample", "all"), default="off",
                   help="tracer: record loaded/stored values (default: off)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--append", action="store_true", help="tracer: add launches to an existing trace")
    mode.add_argument("--force", action="store_true", help="tracer: replace an existing trace")
    p.add_argument("--gpu", default=None, metavar="NAME",
                   help="on a machine without a GPU, CUDA tensors live on the CPU and device queries "
                        "(torch.cuda, Triton's driver) answer as this GPU: h200 (default), h100, a100, "
                        "mi300x, or off (default: $TILESCOPE_GPU); kernels run on the engine either way")
    p.add_argument("--bench-points", default=None, metavar="N",
                   help="under the modelled GPU, measure only the first N points of each triton.testing "
                        "perf_report sweep (default: all; $TILESCOPE_BENCH_POINTS)")
    p.add_argument("--bounds", choices=BOUNDS, default=None,
                   help="how far a pointer may reach past its argument's view: warn (default: inside the "
                        "view's storage it runs as on the GPU and is a warning), view (an error), storage "
                        "(fine) (default: $TILESCOPE_BOUNDS)")
    p.add_argument("--json", action="store_true", help="print the reports as JSON on stdout")
    p.add_argument("--no-fail", action="store_true", help="exit 0 even when a client reports an error")
    p.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE ...",
                   help="run a library module as a script, e.g. -m pytest tests/")
    p.add_argument("script", nargs="?", help="the Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")


def main(args: argparse.Namespace, client_options: dict[str, Any] | None = None,
         command: str = "run") -> int:  # fmt: skip
    """Run the target with every launch intercepted; print the reports; return the exit status.

    ``client_options`` go to the clients that declare them; ``command`` names the sub-command in
    messages (``tilescope profile`` runs through here too).
    """
    if not args.module and not args.script:
        print(f"tilescope {command}: give a script (tilescope {command} script.py) or a module "
              f"(tilescope {command} -m pytest)", file=sys.stderr)  # fmt: skip
        return 2
    names = _client_names(args.clients)
    options: dict[str, Any] = dict(client_options or {})
    if args.bounds is not None:
        options["bounds"] = args.bounds
    try:
        if "tracer" in names:
            prepare(args.trace_dir, append=args.append, force=args.force)
            options.update(trace_dir=args.trace_dir, values=args.values, append=True)
        progress = LaunchProgress()
        interceptor = current().intercept(args.clients, progress=progress.for_kernel, **options)
        gpu = resolve_gpu(args.gpu)
        if args.bench_points is not None:
            os.environ[BENCH_POINTS_ENV] = args.bench_points  # for this process and the ones it starts
        bench_points()
    except (ValueError, TraceError, TilescopeError) as exc:
        print(f"tilescope {command}: error: {exc}", file=sys.stderr)
        return 2
    module, rest = (args.module[0], args.module[1:]) if args.module else (None, args.args)
    output = contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext()
    with tempfile.TemporaryDirectory(prefix="tilescope-run-") as folder:
        with _child_request(args.clients, options, folder, gpu), output, interceptor, modelled_gpu(gpu):
            status = run_target(args.script, module, rest)
        progress.close()
        reports = merge_by_client(interceptor.reports + _child_reports(folder))
    if "tracer" in names:  # findings beside the trace, for tilescope view
        from .viewer.findings import write_reports

        write_reports(args.trace_dir, [r for r in reports if r.client != "tracer"])
    if args.json:
        print(json.dumps({"status": status, "reports": [json.loads(r.to_json()) for r in reports]}, indent=2))
    else:
        err = console(stderr=True)
        for report in reports:
            err.print(report)
    errors = sum(len(r.errors) for r in reports)
    if status == 0 and errors and not args.no_fail:
        plural = "s" if errors != 1 else ""
        print(f"tilescope {command}: {errors} error finding{plural} (exit 1; --no-fail to ignore)",
              file=sys.stderr)  # fmt: skip
        return 1
    return status


@contextlib.contextmanager
def _child_request(clients: str | None, options: dict, folder: str, gpu: GPUSpec | None) -> Iterator[None]:
    """Ask the Python processes the target starts (xdist workers) to intercept, reporting to ``folder``.

    The pytest plug-in of such a process reads the request (``TILESCOPE_RUN``) and writes its merged
    reports there when its session ends.
    """
    request = {"pid": os.getpid(), "clients": clients, "options": {**options, "compute_outputs": True},
               "reports": folder, "gpu": _gpu_name(gpu)}  # fmt: skip
    saved = os.environ.get(RUN_ENV)
    os.environ[RUN_ENV] = json.dumps(request)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(RUN_ENV, None)
        else:
            os.environ[RUN_ENV] = saved


def _gpu_name(gpu: GPUSpec | None) -> str:
    return next((name for name, spec in SPECS.items() if spec is gpu), "off")


def _child_reports(folder: str) -> list[Report]:
    """The reports child processes left in ``folder``."""
    found = []
    for path in sorted(Path(folder).glob("reports-*.json")):
        found += [Report.from_json(d) for d in json.loads(path.read_text(encoding="utf-8"))]
    return found


def _client_names(spec: str | None) -> list[str]:
    spec = spec if spec is not None else os.environ.get("TILESCOPE_CLIENTS", "")
    return [s.strip() for s in spec.split(",") if s.strip()]
