"""``tilescope migrate``: rewrite block-pointer Triton code to tensor descriptors and tilescope.compat."""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from tilescope.migrate.codemod import MODES, migrate_source
from tilescope.migrate.oracle import DEFAULT_VENV, OracleError, ensure_oracle
from tilescope.migrate.sites import FileResult


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``migrate`` sub-command."""
    p = subparsers.add_parser(
        "migrate",
        help="migrate tl.make_block_ptr code to tensor descriptors / tilescope.compat",
        description=__doc__,
    )
    p.add_argument("paths", nargs="+", type=Path, help="Python files or folders (searched for *.py)")
    p.add_argument("--write", action="store_true", help="rewrite the files in place (default: print a diff)")
    p.add_argument(
        "--verify",
        action="store_true",
        help="run original (Triton 3.8) and migrated kernels on the same random inputs and compare",
    )
    p.add_argument("--json", action="store_true", help="print a JSON report instead of diff and summary")
    p.add_argument(
        "--mode",
        choices=MODES,
        default="auto",
        help="auto: descriptors where provable, compat elsewhere; compat-*: compat everywhere",
    )
    p.add_argument("--oracle-python", type=Path, help="a Python with Triton 3.8 (default: create one)")
    p.add_argument(
        "--oracle-venv",
        type=Path,
        default=DEFAULT_VENV,
        help=f"where to create the Triton 3.8 environment (default: {DEFAULT_VENV})",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs for --verify")
    p.set_defaults(func=run)


def _files(paths: list[Path]) -> list[Path]:
    out = []
    for path in paths:
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def _diff(result: FileResult) -> str:
    return "".join(
        difflib.unified_diff(
            result.original.splitlines(True),
            result.migrated.splitlines(True),
            f"a/{result.path}",
            f"b/{result.path}",
        )
    )


def _verify(results: list[FileResult], args: argparse.Namespace, workdir: Path) -> list[dict]:
    from tilescope.migrate.verify import migrated_engine, verify

    def log(message: str) -> None:
        print(f"tilescope migrate: {message}", file=sys.stderr, flush=True)

    oracle = ensure_oracle(args.oracle_python, args.oracle_venv, log)
    pairs = []
    for i, r in enumerate(results):
        if r.error or not r.changed:
            continue
        folder = workdir / f"f{i}"
        folder.mkdir()
        original, migrated = folder / "original" / Path(r.path).name, folder / "migrated" / Path(r.path).name
        for path, text in ((original, r.original), (migrated, r.migrated)):
            path.parent.mkdir()
            path.write_text(text)
        pairs.append((original, migrated))
    log(
        f"verifying {len(pairs)} files: originals under {oracle} (Triton 3.8 interpreter), "
        f"migrated on {migrated_engine()}"
    )
    names = {
        str(o): results_path
        for (o, _), results_path in zip(
            pairs, [r.path for r in results if not r.error and r.changed], strict=True
        )
    }
    checked = verify(pairs, oracle, workdir / "io", seed=args.seed) if pairs else []
    return [dict(asdict(c), path=names.get(c.path, c.path)) for c in checked]


def run(args: argparse.Namespace) -> int:
    """Migrate, print, optionally write and verify; return 1 when a file failed or a kernel disagreed."""
    results = []
    for path in _files(args.paths):
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            results.append(FileResult(str(path), "", "", error=f"{path}: cannot read: {exc}"))
            continue
        results.append(migrate_source(text, str(path), args.mode))
    verdicts: list[dict] = []
    if args.verify:
        with tempfile.TemporaryDirectory(prefix="tilescope-verify-") as tmp:
            (Path(tmp) / "io").mkdir()
            try:
                verdicts = _verify(results, args, Path(tmp))
            except OracleError as exc:
                print(f"tilescope migrate: error: {exc}", file=sys.stderr)
                return 1
    if args.write:
        for r in results:
            if r.changed and not r.error:
                Path(r.path).write_text(r.migrated)
    if args.json:
        print(json.dumps({"files": [r.to_json() for r in results], "verify": verdicts}, indent=1))
    else:
        if not args.write:
            sys.stdout.write("".join(_diff(r) for r in results))
        for r in results:
            print(r.summary())
        for v in verdicts:
            shape = ", ".join(f"{k}={val}" for k, val in v["shape"].items())
            print(
                f"verify {v['path']} [{shape}]: {v['status']}" + (f": {v['detail']}" if v["detail"] else "")
            )
        total = sum(len(r.sites) for r in results)
        print(
            f"{len(results)} files, {total} sites, {sum(r.changed for r in results)} changed"
            + (", written" if args.write else "")
        )
    failed = any(r.error for r in results) or any(v["status"] != "agree" for v in verdicts)
    return 1 if failed else 0
