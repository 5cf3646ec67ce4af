"""Helion on the CPU: tilescope's engine vs Helion's own CPU paths, on Helion example kernels.

* ``tilescope``: ``tilescope.trace(kernel)(*args)``, the generated Triton code on the engine;
* ``interpreter``: the same generated code under Triton's interpreter (``TRITON_INTERPRET=1``, in a
  subprocess, since Triton reads the variable at import);
* ``eager``: Helion's reference mode (``ref_mode=helion.RefMode.EAGER``: the kernel body run as
  PyTorch eager code, tile by tile).

Times are medians of warm calls (seconds) after one warm-up call; every result is checked against
a float64 reference.

    .venv/bin/python benchmarks/helion_speed.py               # appends to benchmarks/RESULTS.md
    .venv/bin/python benchmarks/helion_speed.py --no-append --rounds 3
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from report import commit, machine, publish, rounds_arguments

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORKLOADS = {
    "add 2^20": ("add", lambda torch: (torch.randn(2**20), torch.randn(2**20)), lambda x, y: x + y),
    "softmax 4096x256": ("softmax", lambda torch: (torch.randn(4096, 256),), lambda x: x.softmax(dim=1)),
    "matmul 256^3": ("matmul", lambda torch: (torch.randn(256, 256), torch.randn(256, 256)),
                     lambda a, b: a @ b),
}


def run(kernel_name: str, workload: str, how: str, rounds: int) -> dict:
    """Time one workload one way in this process; the median and whether the result is right."""
    import helion
    import torch

    import tilescope
    from tests.frontends.helion import kernels as hk

    torch.manual_seed(0)
    _, make, reference = WORKLOADS[workload]
    args = make(torch)
    kernel = getattr(hk, kernel_name)
    if how == "tilescope":
        call = tilescope.trace(kernel)
    elif how == "eager":
        call = helion.kernel(kernel.fn, ref_mode=helion.RefMode.EAGER)
    else:
        call = kernel  # under TRITON_INTERPRET=1: Helion's launcher runs Triton's interpreter
    out = call(*args)
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        out = call(*args)
        times.append(time.perf_counter() - started)
    ref = reference(*(a.double() for a in args))
    correct = bool(torch.allclose(out.double(), ref, rtol=1e-3, atol=1e-3 * float(ref.abs().max())))
    return {"seconds": statistics.median(times), "correct": correct}


def in_subprocess(kernel_name: str, workload: str, how: str, rounds: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if how == "interpreter":
        env["TRITON_INTERPRET"] = "1"
    code = (
        f"import sys, json; sys.path.insert(0, {str(Path(__file__).parent)!r}); import helion_speed as h; "
        f"print(json.dumps(h.run({kernel_name!r}, {workload!r}, {how!r}, {rounds})))"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=1800,
                          cwd=ROOT)  # fmt: skip
    if proc.returncode != 0:
        lines = proc.stderr.splitlines()
        errors = [line for line in lines if "Error" in line] or lines[-1:]
        return {"seconds": float("nan"), "correct": False, "error": errors[-1:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _cell(result: dict) -> str:
    """Seconds, or why that way failed."""
    if "error" in result:
        return "fails: " + " ".join(result["error"])[:90].replace("|", "/")
    return f"{result['seconds']:.4f}"


def main() -> None:
    args = rounds_arguments(__doc__, 3)
    rows = []
    for workload, (kernel_name, *_) in WORKLOADS.items():
        row = {"workload": workload}
        for how in ("tilescope", "interpreter", "eager"):
            row[how] = in_subprocess(kernel_name, workload, how, args.rounds)
        rows.append(row)
    lines = [
        "## Helion frontend (issue 15)",
        "",
        f"{time.strftime('%Y-%m-%d')}, commit {commit()}, {machine()}, Python {sys.version.split()[0]}. "
        f"Median of {args.rounds} warm calls (seconds); each way in its own process.",
        "",
        "| kernel | tilescope s | Triton interpreter s | interpreter / tilescope | Helion eager s "
        "| correct |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        t, i, e = r["tilescope"], r["interpreter"], r["eager"]
        ratio = f"{i['seconds'] / t['seconds']:.1f}" if "error" not in i else "-"
        ran = [how for how in ("tilescope", "interpreter", "eager") if "error" not in r[how]]
        correct = ", ".join(f"{how}: {'yes' if r[how]['correct'] else 'no'}" for how in ran)
        lines.append(f"| {r['workload']} | {_cell(t)} | {_cell(i)} | {ratio} | {_cell(e)} | {correct} |")
    publish("\n".join(lines) + "\n", not args.no_append)


if __name__ == "__main__":
    main()
