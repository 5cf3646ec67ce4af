"""Sanitizer speed: tilescope's sanitizer vs Triton's interpreter plain run vs TileLens's sanitizer.

One run over the shared workloads (``workloads.py``). Every (workload, runner) pair runs in its own
subprocess:

* ``interpreter``: ``TRITON_INTERPRET=1``, the kernel launched plainly (no checking); its result is
  checked against a float64 reference.
* ``tilescope``: ``tilescope.trace(kernel, clients="sanitizer")``, demand-driven (addresses, masks
  and what feeds them); every program is executed. Correct means: no finding (the workloads are
  clean kernels).
* ``tilelens``: ``tilelens.trace("sanitizer")(kernel)`` from PyPI ``tilelens``, installed by this
  script into ``.venvs/tilelens`` with Triton pinned to 3.8.0 (the newest its interpreter calls
  match) and the CPU build of torch; skipped with a note when it cannot be installed. Correct
  means: it finished without reporting an error.

Each process first launches a tiny unrelated kernel through the same tool (imports, patching and
other one-time costs are paid there), then times one launch of the workload on fresh inputs. One
launch, because TileLens caches its result per (kernel, grid, arguments) and does not check a repeated
launch again; tilescope checks every launch.

    .venv/bin/python benchmarks/sanitizer.py              # everything; appends to benchmarks/RESULTS.md
    .venv/bin/python benchmarks/sanitizer.py --only matmul --runners tilescope,tilelens --no-append
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import triton
import triton.language as tl
from report import add_only, commit, machine, publish, rss_kib, selected

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUNNERS = ("interpreter", "tilescope", "tilelens")
TILELENS_VENV = ROOT / ".venvs" / "tilelens"
TILELENS_PINS = ("tilelens==3.1.1", "triton==3.8.0", "torch==2.13.0", "numpy")


@triton.jit
def warmup_copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


def _warmup(wrap) -> None:
    """One launch of a tiny kernel that no workload uses: pays the tool's one-time costs."""
    import torch

    wrap(warmup_copy)[(1,)](torch.ones(16), torch.zeros(16), BLOCK=16)


def _wrapper(runner: str):
    """(wrap, findings) for a runner: how to wrap a kernel, and how many problems the run reported."""
    if runner == "interpreter":
        return (lambda kernel: kernel), (lambda: 0)
    if runner == "tilelens":
        import tilelens

        return (lambda kernel: tilelens.trace("sanitizer")(kernel)), (lambda: 0)
    import tilescope

    launchers = []

    def wrap(kernel):
        launchers.append(tilescope.trace(kernel, clients="sanitizer"))
        return launchers[-1]

    return wrap, (lambda: sum(len(r.findings) for launcher in launchers for r in launcher.reports))


def run_one(name: str, runner: str) -> dict:
    """Run one workload with one runner in this process; return time, memory and correctness."""
    sys.path.insert(0, str(HERE))
    import numpy as np
    import workloads

    wrap, findings = _wrapper(runner)
    _warmup(wrap)
    workload = next(w for w in workloads.WORKLOADS if w.name == name)
    prepared = workload.prepare(np.random.default_rng(0))
    base = rss_kib("VmHWM")
    t0 = time.perf_counter()
    prepared.launch(wrap)
    seconds = time.perf_counter() - t0
    err = prepared.error() if runner == "interpreter" else 0.0
    found = findings()
    ok = found == 0 and (runner != "interpreter" or err <= workload.tolerance)
    return {"workload": name, "runner": runner, "seconds": seconds,
            "peak_mib": (rss_kib("VmHWM") - base) / 1024, "findings": found, "error": err, "ok": ok}


def ensure_tilelens() -> tuple[Path | None, str]:
    """The Python of TileLens's own venv (created and filled on first use), or None and why not."""
    python = TILELENS_VENV / "bin" / "python"
    probe = [str(python), "-c", "import tilelens, triton, torch; assert triton.__version__ == '3.8.0'"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python, ""
    steps = [[sys.executable, "-m", "venv", str(TILELENS_VENV)],
             [str(python), "-m", "pip", "install", "-q", *TILELENS_PINS]]
    for step in steps:
        out = subprocess.run(step, capture_output=True, text=True)
        if out.returncode != 0:
            lines = [ln for ln in (out.stderr or out.stdout).splitlines() if not ln.startswith("WARNING")]
            return None, f"`{' '.join(step[-len(TILELENS_PINS):])}` failed: {(lines or ['?'])[-1]}"
    if subprocess.run(probe, capture_output=True).returncode != 0:
        return None, "tilelens installed but does not import with Triton 3.8.0"
    return python, ""


def _measure(name: str, runner: str, timeout: int, python: str) -> dict:
    cmd = [python, __file__, "--child", name, runner]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if runner in ("interpreter", "tilelens"):
        env["TRITON_INTERPRET"] = "1"
    if runner == "tilelens":
        env["ENABLE_SANITIZER"] = "1"
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"workload": name, "runner": runner, "seconds": math.inf, "ok": False,
                "error": f"timeout (> {timeout} s)", "timeout": timeout}
    if out.returncode != 0:
        tail = (out.stderr or out.stdout).strip().splitlines()[-1:] or ["?"]
        return {"workload": name, "runner": runner, "seconds": math.inf, "ok": False, "error": tail[0][:120]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cell(r: dict | None) -> str:
    if not r:
        return "skipped"
    if not math.isfinite(r.get("seconds", math.inf)):
        return f"fail: {r.get('error')}"
    text = f"{r['seconds']:.3f}"
    return text if r.get("ok") else f"{text} (NOT ok: {r.get('findings', 0)} findings, err {r.get('error')})"


def _table(results: dict) -> list[str]:
    lines = ["| workload | interpreter plain s | tilescope sanitizer s | TileLens sanitizer s | "
             "tilescope / interpreter (target ≤ 0.3) | TileLens / tilescope (target ≥ 1) |",
             "|---|---|---|---|---|---|"]
    for name, per in results.items():
        i, t, lens = per.get("interpreter"), per.get("tilescope"), per.get("tilelens")
        t_s = t["seconds"] if t and t.get("ok") else math.inf
        vs_interp = f"{t_s / i['seconds']:.3f}" if i and i.get("ok") and math.isfinite(t_s) else "-"
        if lens is None or not math.isfinite(t_s):
            vs_lens = "-"
        elif math.isfinite(lens.get("seconds", math.inf)):
            vs_lens = f"{lens['seconds'] / t_s:.1f}×"
        elif lens.get("timeout"):
            vs_lens = f"> {lens['timeout'] / t_s:.0f}×"
        else:
            vs_lens = "TileLens fails"
        lines.append(f"| {name} | {_cell(i)} | {_cell(t)} | {_cell(lens)} | {vs_interp} | {vs_lens} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "RUNNER"), help=argparse.SUPPRESS)
    add_only(parser)
    parser.add_argument("--runners", default=",".join(RUNNERS))
    parser.add_argument("--timeout", type=int, default=600, help="seconds per pair")
    parser.add_argument("--no-append", action="store_true", help="print only; do not touch RESULTS.md")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child[0], args.child[1])))
        return 0
    sys.path.insert(0, str(HERE))
    import workloads

    runners = args.runners.split(",")
    pythons = {r: sys.executable for r in runners}
    note = ""
    if "tilelens" in runners:
        lens_python, why = ensure_tilelens()
        if lens_python is None:
            runners.remove("tilelens")
            note = f"TileLens skipped: {why}."
        else:
            pythons["tilelens"] = str(lens_python)
    results: dict[str, dict] = {}
    for w in workloads.WORKLOADS:
        if not selected(w.name, args.only):
            continue
        results[w.name] = {}
        for runner in runners:
            r = _measure(w.name, runner, args.timeout, pythons[runner])
            results[w.name][runner] = r
            print(f"{w.name:24s} {runner:12s} {r.get('seconds', math.inf):9.3f} s  ok={r.get('ok')}"
                  f"  {'' if r.get('ok') else r.get('error')}", flush=True)
    header = [f"## Sanitizer (issue 4) — {time.strftime('%Y-%m-%d')}, commit {commit()}", "",
              f"Machine: {machine()}; Python {sys.version.split()[0]}, Triton {triton.__version__} "
              f"(TileLens: {' '.join(TILELENS_PINS[:3])}). Each pair in its own process, warmed up on a tiny "
              "unrelated kernel, then one timed launch. tilescope checks every program demand-driven (no "
              "outputs computed); the interpreter runs plainly and checks nothing.", ""]
    if note:
        header += [note, ""]
    publish("\n".join(header + _table(results)) + "\n", append=not args.no_append)
    return 0


if __name__ == "__main__":
    sys.exit(main())
