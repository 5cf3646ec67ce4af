"""The ``tilescope`` command line: one sub-command per surface, each registered by its own module.

A sub-command module exposes ``register(subparsers) -> None``, which adds its parser and sets
``func`` (called with the parsed namespace; its return value is the exit code). Modules are
imported lazily so that ``tilescope migrate`` does not pay for importing the engine.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: sub-command name -> module that registers it
SUBCOMMANDS: dict[str, str] = {
    "demo": "tilescope.demo",
    "run": "tilescope.run_cli",
    "profile": "tilescope.profile_cli",
    "show": "tilescope.show_cli",
    "view": "tilescope.viewer.cli",
    "sweep": "tilescope.sweep.cli",
    "migrate": "tilescope.migrate.cli",
    "bench": "tilescope.bench.cli",
    "blast-radius": "tilescope.blast.cli",
}


def build_parser(names: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """Return the top-level parser with every available sub-command registered."""
    parser = argparse.ArgumentParser(
        prog="tilescope",
        description="Run, check and understand Triton kernels on the CPU; benchmark them on a GPU.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in names or SUBCOMMANDS:
        module_name = SUBCOMMANDS[name]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue  # not built yet in this checkout
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tilescope`` command; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    wanted = [argv[0]] if argv and argv[0] in SUBCOMMANDS else None
    parser = build_parser(wanted)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
