"""The blast-radius compile worker: runs inside the environment under test, compiles, caches artifacts.

``python -m tilescope.blast.worker`` reads one JSON request from stdin::

    {"modules": [...], "options": {...}, "cache": DIR,
     "jobs": [{"id": "...", "bench": NAME, "spec": INDEX, "target": "sm_90a"}, ...]}

and for every job prints one line ``@@tilescope {"id", "key", "status", "message", "cached"}``. Artifacts
(text stages, SASS, resources, metadata) go to ``DIR/KEY.json``, where KEY hashes everything that
determines the output: Triton version and location, the kernel's source key, signature, constants,
options, target and the ``TRITON_*`` environment. A cached job is not compiled again. Imports only
the standard library, Triton and the corpus, since it runs in someone else's virtual environment.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

from tilescope.bench.errors import describe
from tilescope.bench.loading import load_all
from tilescope.bench.registry import CompileSpec, registered
from tilescope.bench.worker import PREFIX
from tilescope.blast import resources
from tilescope.blast.compiling import compile_spec

#: bump when the artifact layout changes, so old cache entries are not read as new ones
FORMAT = 1


#: TRITON_* variables tilescope itself sets for the build; they do not change the generated code
OWN_VARIABLES = frozenset({"TRITON_CACHE_DIR", "TRITON_ALWAYS_COMPILE", "TRITON_DUMP_PTXAS_LOG"})


def triton_environment() -> list[tuple[str, str]]:
    """The user's ``TRITON_*`` variables (which can change code generation), sorted."""
    return sorted((k, v) for k, v in os.environ.items() if k.startswith("TRITON_") and k not in OWN_VARIABLES)


def cache_key(spec: CompileSpec, target: str, options: dict[str, Any], env: list[tuple[str, str]]) -> str:
    """The hash naming ``spec`` compiled for ``target`` with ``options`` under this Triton and ``env``."""
    import triton

    parts = [
        FORMAT,
        triton.__version__,
        triton.__file__,
        spec.kernel.cache_key,
        sorted(spec.signature.items()),
        sorted((k, repr(v)) for k, v in spec.constexprs.items()),
        list(spec.divisible),
        sorted((k, repr(v)) for k, v in {**spec.options, **options}.items()),
        target,
        env,
    ]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:32]


def build(spec: CompileSpec, target: str, options: dict[str, Any]) -> dict[str, Any]:
    """Compile and collect every stage, resources and (NVIDIA) SASS for one job."""
    from triton import knobs

    knobs.nvidia.dump_ptxas_log = True  # Triton prints its own ptxas -v log: the exact flags it used
    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        out = compile_spec(spec, target, options)
    stages = dict(out["stages"])
    if "amdgcn" in stages:
        res = resources.from_amdgcn(stages["amdgcn"])
    else:
        res = resources.from_ptxas_log(log.getvalue())
        if out["binary"] is not None:
            stages["sass"] = resources.sass(out["binary"], knobs.nvidia.cuobjdump.path)
    res["shared_bytes"] = int(out["metadata"].get("shared", 0))
    return {"stages": stages, "resources": res, "metadata": out["metadata"], "triton": out["triton"]}


def serve(request: dict[str, Any]) -> None:
    """Answer one request (see the module docstring)."""
    load_all(request.get("modules", []))
    benches = registered()
    cache = Path(request["cache"])
    cache.mkdir(parents=True, exist_ok=True)
    options = request.get("options", {})
    env = triton_environment()  # read once: setting a Triton knob below also writes its variable
    for job in request["jobs"]:
        reply: dict[str, Any] = {"id": job["id"], "key": "", "status": "ok", "message": "", "cached": False}
        try:
            spec = benches[job["bench"]].compile_specs()[job["spec"]]
            reply["key"] = key = cache_key(spec, job["target"], options, env)
            path = cache / f"{key}.json"
            reply["cached"] = path.exists()
            if not reply["cached"]:
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps(build(spec, job["target"], options)))
                tmp.replace(path)
        except Exception as exc:  # one kernel failing to build is that kernel's result
            reply["status"], reply["message"] = "error", describe(exc)
        sys.stdout.write(PREFIX + json.dumps(reply) + "\n")
        sys.stdout.flush()


def main() -> int:
    """Read the request from stdin and serve it."""
    serve(json.loads(sys.stdin.readline()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
