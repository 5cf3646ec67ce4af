"""The config a previous GPU run's autotuning chose, read back from Triton's on-disk autotune cache.

With ``TRITON_CACHE_AUTOTUNING=1`` (or ``@triton.autotune(..., cache_results=True)``), Triton writes
``<cache dir>/<hash>/<kernel>.autotune.json`` holding the tuning key (the ``key=`` arguments' values
and the tensor arguments' dtypes) and every config's timing. The hash folds in the Triton version
and the GPU backend, so it never matches on a CPU machine running another Triton: the files are
found by kernel name and matched by their tuning key instead. A directory copied from the GPU
machine is named with ``TILESCOPE_AUTOTUNE_CACHE``; else Triton's own cache directory is searched.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

#: a directory holding a GPU machine's Triton cache (``~/.triton/cache`` copied from there)
CACHE_ENV = "TILESCOPE_AUTOTUNE_CACHE"
_FIELDS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def cache_dirs() -> list[Path]:
    """Where autotune results are looked for, in order."""
    named = [os.environ.get(CACHE_ENV), os.environ.get("TRITON_CACHE_DIR")]
    dirs = [Path(d) for d in named if d]
    dirs.append(Path.home() / ".triton" / "cache")
    return [d for d in dict.fromkeys(dirs) if d.is_dir()]


def tuning_key(tuner: Any, bound: dict) -> list:
    """Triton's tuning key for a launch with parameters ``bound``, as JSON stores it."""
    args = {k: v for k, v in bound.items() if k in tuner.arg_names}
    key = [args[k] for k in tuner.keys if k in args]
    key += [str(v.dtype) for v in args.values() if hasattr(v, "dtype")]
    return json.loads(json.dumps(key, default=str))


def _matches(config: Any, recorded: dict) -> bool:
    if dict(config.kwargs) != recorded.get("kwargs", {}):
        return False
    return all(recorded.get(f, getattr(config, f)) == getattr(config, f) for f in _FIELDS)


def cached_config(tuner: Any, name: str, bound: dict, dirs: list[Path] | None = None) -> Any:
    """The kernel's config that a cached GPU autotuning found fastest for this tuning key, or None.

    Only a config the kernel still lists is returned (a stale cache entry is ignored).
    """
    key = tuning_key(tuner, bound)
    for folder in cache_dirs() if dirs is None else dirs:
        for path in sorted(folder.glob(f"*/{name[:150]}.autotune.json")):
            try:
                entry = json.loads(path.read_text())
                timings = entry["configs_timings"]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if entry.get("key") != key or not timings:
                continue
            best = min(timings, key=lambda pair: pair[1])[0]
            for config in tuner.configs:
                if _matches(config, best):
                    return config
    return None
