"""Where tilescope keeps its per-user files: the results database and the roofline cache."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/tilescope`` (``~/.cache/tilescope`` by default), created if missing."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    path = root / "tilescope"
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_db() -> Path:
    """The default results database."""
    return cache_dir() / "bench.sqlite"
