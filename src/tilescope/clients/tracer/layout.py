"""A trace directory on disk: the manifest, launch files, and who may write where.

A directory is taken for a new trace only when it is absent or empty; an existing trace is added
to with ``append`` or replaced with ``force``; anything else is an error that names the directory.
Launch numbers are claimed by creating ``launches/launch-NNNNNN.json`` exclusively, so several
processes appending to one trace never share a number.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from ...errors import TilescopeError
from .schema import FORMAT, LAUNCHES, MANIFEST, OPS, READABLE, VERSION, launch_stem


class TraceError(TilescopeError):
    """A trace directory or file that cannot be written or read; names the path."""


def prepare(directory: str | os.PathLike, *, append: bool = False, force: bool = False) -> Path:
    """Make ``directory`` ready for a trace (see the module docstring); returns its path."""
    path = Path(directory)
    try:
        entries = os.listdir(path)
    except FileNotFoundError:
        entries = []
    except NotADirectoryError:
        raise TraceError(f"trace directory {path} is a file; choose another --trace-dir") from None
    manifest = path / MANIFEST
    if entries:
        is_trace = manifest.is_file()
        if force and is_trace:
            shutil.rmtree(path)
        elif force:
            raise TraceError(f"{path} is not empty and not a tilescope trace; --force replaces traces only")
        elif append and is_trace:
            check_manifest(manifest, (VERSION,))
            return path
        elif append:
            raise TraceError(f"cannot append to {path}: it is not empty and has no {MANIFEST}")
        else:
            raise TraceError(f"trace directory {path} already exists and is not empty; pass append=True "
                             "(--append) to add launches to it or force=True (--force) to replace it")
    os.makedirs(path / LAUNCHES, exist_ok=True)
    os.makedirs(path / OPS, exist_ok=True)
    if not os.path.exists(manifest):
        write_json(manifest, {"format": FORMAT, "version": VERSION})
    return path


def check_manifest(manifest: Path, versions: tuple[int, ...] = READABLE) -> dict:
    """The manifest's content, after checking it names one of the trace format ``versions`` (by
    default those this tilescope reads; appending to a trace needs the version it writes)."""
    data = read_json(manifest)
    if data.get("format") != FORMAT:
        raise TraceError(f"{manifest} is not a tilescope trace manifest")
    if data.get("version") not in versions:
        doing = "reads" if versions == READABLE else "appends to"
        raise TraceError(f"{manifest}: trace format version {data.get('version')} is not supported "
                         f"(this tilescope {doing} version {' and '.join(map(str, versions))})")
    return data


def claim_launch(root: Path) -> tuple[int, Path]:
    """A launch number nobody else holds, and its launch file (created empty)."""
    number = max(_launch_numbers(os.listdir(root / LAUNCHES)), default=0) + 1
    while True:
        target = root / LAUNCHES / f"{launch_stem(number)}.json"
        try:
            with open(target, "x"):
                return number, target
        except FileExistsError:
            number += 1


def _launch_numbers(names: list[str]) -> list[int]:
    """The launch numbers of the launch files among ``names`` (``launch-NNNNNN.json``)."""
    stems = [n[7:-5] for n in names if n.startswith("launch-") and n.endswith(".json")]  # the NNNNNN
    return [int(stem) for stem in stems if stem.isdigit()]


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (a reader sees the old content or the new, never half); one line, which
    the C encoder writes (with ``indent`` Python's own encoder runs, about ten times slower)."""
    temp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.tmp")
    with open(temp, "wb") as f:
        f.write(json.dumps(data, default=str).encode())
    os.replace(temp, path)


def read_json(path: Path) -> Any:
    """JSON from ``path``, or a :class:`TraceError` naming the file."""
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TraceError(f"corrupt trace file {path}: {exc}") from None
