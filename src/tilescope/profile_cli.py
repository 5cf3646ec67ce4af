"""``tilescope profile``: run a script with the profiler on every Triton kernel, and print the profile.

The same as ``tilescope run -c profiler`` (every option of ``run`` works, other clients stack with
``-c``), plus ``--wave`` (programs per wave) and ``--output`` (the profiler's JSON report, schema in
``docs/profiler.md``). The GPU modelled by ``--gpu`` (H200 by default) is also the one profiled for.
"""

from __future__ import annotations

import argparse
from typing import Any

from . import run_cli


def register(subparsers: Any) -> None:
    """Add ``tilescope profile`` to the command line."""
    p = subparsers.add_parser(
        "profile", help="profile every Triton kernel a script launches (memory efficiency, masks, reuse, "
                        "roofline, compiled resources), on the CPU",
        description="Run a script (or -m module) unmodified with the profiler client on every kernel it "
                    "launches: per source line, how a warp issues each access (sectors per request, "
                    "efficiency), mask utilisation and provably redundant masks, reuse and the L2 "
                    "footprint of one wave, FLOPs and the roofline, and the registers, spills and "
                    "occupancy of an offline compile. Deterministic; no GPU needed.")  # fmt: skip
    p.add_argument("-c", "--clients", default=None, metavar="NAMES",
                   help="more clients to run beside the profiler, e.g. sanitizer")
    p.add_argument("--wave", type=int, default=None, metavar="N",
                   help="programs in one wave (default: the GPU's SM count)")
    p.add_argument("-o", "--output", default=None, metavar="FILE", help="write the profiler's report as JSON")
    run_cli.add_target_arguments(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Run the target under the profiler (and any other clients); print the profile."""
    extra = [c.strip() for c in (args.clients or "").split(",") if c.strip() and c.strip() != "profiler"]
    args.clients = ",".join(["profiler", *extra])
    options: dict[str, Any] = {"wave": args.wave}
    if args.gpu and args.gpu.strip().lower() not in ("off", "none", "0"):
        options["gpu"] = args.gpu
    if args.output:
        options["profile_path"] = args.output
    return run_cli.main(args, options, command="profile")
