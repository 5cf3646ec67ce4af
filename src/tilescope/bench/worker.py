"""The benchmark worker: one process that measures a list of benchmarks when told to go.

Protocol (stdin/stdout, one JSON object per line, stdout lines prefixed with ``@@tilescope ``):
the parent writes a request; the worker imports and sets up, prints ``{"ready": ENV}``, waits for
a ``go`` line (so several workers can start up while another one holds the GPU), then prints one
``{"result": ...}`` per measurement and ``{"done": true}``. Run it as
``python -m tilescope.bench.worker``; it needs only this package on ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

PREFIX = "@@tilescope "


def emit(obj: dict[str, Any], out: TextIO) -> None:
    """Write one protocol message."""
    out.write(PREFIX + json.dumps(obj) + "\n")
    out.flush()


def serve(request: dict[str, Any], inp: TextIO, out: TextIO) -> None:
    """Answer one request (see the module docstring)."""
    import torch

    from tilescope.bench import environment, roofline
    from tilescope.bench.loading import load_all
    from tilescope.bench.registry import registered
    from tilescope.bench.runner import Result, measure

    load_all(request.get("modules", []))
    benches = registered()
    torch.cuda.init()
    env = environment.describe()
    emit({"ready": env}, out)
    if inp.readline().strip() != "go":
        return
    roof_path = request.get("roofline_path")
    roof = roofline.load_or_measure(
        env, Path(roof_path) if roof_path else None, remeasure=bool(request.get("remeasure_roofline"))
    )
    emit(
        {
            "roofline": {"copy_bytes_per_s": roof.copy_bytes_per_s, "flops_per_s": roof.flops_per_s},
            "clocks_before": environment.clocks(),
        },
        out,
    )
    scale = float(request.get("scale", 1.0))
    for name in request["benchmarks"]:
        bench = benches.get(name)
        if bench is None:
            emit(
                {"result": Result(name, "", "triton", "error", message="not registered here").as_dict()}, out
            )
            continue
        for case, shape in enumerate(bench.shapes):
            shape = bench.scaled(shape, scale) if scale != 1.0 else dict(shape)
            for res in measure(
                bench,
                shape,
                reps=int(request.get("reps", 50)),
                roofline=roof,
                l2_bytes=env["l2_bytes"],
                baseline=bool(request.get("baseline")),
                seed=int(request.get("seed", 0)),
                case=case,
            ):
                emit({"result": res.as_dict()}, out)
    emit({"done": True, "clocks_after": environment.clocks()}, out)


def main() -> int:
    """Read the request from stdin and serve it."""
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    request = json.loads(sys.stdin.readline())
    serve(request, sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
