"""Engine speed as a user sees it: first launch in a fresh process, a warm launch, and the NumPy floor.

For every workload of ``workloads.py`` (dense and divergent), each in its own fresh process:

* ``interpreter``: ``TRITON_INTERPRET=1``, the first launch of the kernel;
* ``plain``: ``tilescope.trace(kernel)``: ``import tilescope``, the first launch, a warm launch (the
  same kernel again on fresh inputs of the same shapes), and in the same process the workload's
  NumPy floor (vectorized NumPy/BLAS computing the same result: the bytes the kernel must move);
* ``sanitizer`` and ``tracer`` (values off): first and warm launch.

Every result is checked against a float64 reference (sanitizer runs: no finding on these clean
kernels); a wrong one is reported and left out of the ratios. Bytecode caching is on in the children
(``.pyc`` files, as on a user's machine; a throwaway process writes them first). A tilescope cell is
the median of ``--repeat`` fresh processes (default 3: a single first launch varies by tens of ms with
the kernel's page-fault cost); the interpreter's, seconds to minutes long, is one.

    .venv/bin/python benchmarks/speed.py                         # everything; appends to RESULTS.md
    .venv/bin/python benchmarks/speed.py --only spmv --setups plain,interpreter --no-append
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import add_only, commit, machine, publish, rss_kib, selected

HERE = Path(__file__).resolve().parent
SETUPS = ("interpreter", "plain", "sanitizer", "tracer")


def child(name: str, setup: str) -> dict:
    """One fresh-process measurement of one workload under one setup."""
    if setup == "interpreter":
        os.environ["TRITON_INTERPRET"] = "1"
    sys.path.insert(0, str(HERE))
    import numpy as np
    import workloads

    started = time.perf_counter()
    if setup != "interpreter":
        import tilescope
    imported = time.perf_counter() - started
    workload = next(w for w in workloads.WORKLOADS if w.name == name)
    rng = np.random.default_rng(0)
    folder = tempfile.mkdtemp(prefix="tilescope-speed-")
    base = rss_kib("VmHWM")
    out: dict = {"import": imported}
    launchers: list = []
    for label in ("first", "warm"):
        if setup == "interpreter" and label == "warm":
            break
        prepared = workload.prepare(rng)

        def wrap(kernel, label=label):
            if setup == "interpreter":
                return kernel
            options = {
                "sanitizer": {"clients": "sanitizer"},
                "tracer": {"clients": "tracer", "trace_dir": f"{folder}/{label}"},
            }.get(setup, {})
            launchers.append(tilescope.trace(kernel, **options))
            return launchers[-1]

        t0 = time.perf_counter()
        prepared.launch(wrap)
        out[label] = time.perf_counter() - t0
        if setup == "sanitizer":
            findings = sum(len(r.findings) for launcher in launchers for r in launcher.reports)
            out["ok"] = out.get("ok", True) and findings == 0
        else:
            out["ok"] = out.get("ok", True) and prepared.error() <= workload.tolerance
    out["peak_mib"] = (rss_kib("VmHWM") - base) / 1024
    if setup == "plain":
        floors = []
        for _ in range(3):
            prepared = workload.prepare(rng)
            t0 = time.perf_counter()
            prepared.floor()
            floors.append(time.perf_counter() - t0)
        out["floor"] = min(floors)
    return out


def _measure(name: str, setup: str, timeout: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "PYTHONDONTWRITEBYTECODE")}
    cmd = [sys.executable, __file__, "--child", name, setup]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"> {timeout} s", "timeout": timeout}
    if out.returncode != 0:
        return {"error": ((out.stderr or out.stdout).strip().splitlines() or ["?"])[-1][:100]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(runs: list[dict]) -> dict:
    """One cell from several fresh-process runs of it: each figure's median (an error if any run failed;
    wrong if any run was wrong)."""
    failed = [r for r in runs if "error" in r]
    if failed:
        return failed[0]
    keys = {k for r in runs for k, v in r.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    cell = {k: statistics.median([r[k] for r in runs if k in r]) for k in keys}
    cell["ok"] = all(r.get("ok", True) for r in runs)
    return cell


def _s(r: dict, key: str) -> str:
    if "error" in r:
        return r["error"]
    value = r.get(key)
    return "-" if value is None else f"{value:.3f}" + ("" if r.get("ok", True) else " (WRONG)")


def _ratio(a: dict, ka: str, b: dict, kb: str) -> float | None:
    """a[ka] / b[kb] when both ran correctly (a timed-out ``a`` gives a lower bound)."""
    if "error" in b or not b.get("ok", True) or b.get(kb) is None:
        return None
    if "timeout" in a:
        return a["timeout"] / b[kb]
    if "error" in a or not a.get("ok", True) or a.get(ka) is None:
        return None
    return a[ka] / b[kb]


def _fmt(x: float | None, bound: bool = False) -> str:
    return "-" if x is None else (f"> {x:.0f}" if bound else f"{x:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "SETUP"), help=argparse.SUPPRESS)
    add_only(parser)
    parser.add_argument("--dense", action="store_true", help="only workloads without divergent control")
    parser.add_argument("--setups", default=",".join(SETUPS))
    parser.add_argument("--timeout", type=int, default=600, help="seconds per run")
    parser.add_argument(
        "--repeat", type=int, default=3, help="fresh processes per tilescope cell; the median is reported"
    )
    parser.add_argument("--no-append", action="store_true", help="print only; do not touch RESULTS.md")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    sys.path.insert(0, str(HERE))
    import triton
    import workloads

    setups = args.setups.split(",")
    _measure(workloads.WORKLOADS[0].name, "plain", args.timeout)  # writes the .pyc files
    rows, speedups = [], []
    for w in workloads.WORKLOADS:
        if not selected(w.name, args.only) or (args.dense and w.divergent):
            continue
        runs = {s: 1 if s == "interpreter" else args.repeat for s in setups}
        got = {s: _median([_measure(w.name, s, args.timeout) for _ in range(n)]) for s, n in runs.items()}
        interp, plain = got.get("interpreter", {"error": "-"}), got.get("plain", {"error": "-"})
        san, tracer = got.get("sanitizer", {"error": "-"}), got.get("tracer", {"error": "-"})
        speedup = _ratio(interp, "first", plain, "first")
        if speedup is not None:
            speedups.append(speedup)
        cells = [
            w.name, "yes" if w.divergent else "no", _s(interp, "first"), _s(plain, "first"),
            _fmt(speedup, "timeout" in interp), _s(plain, "warm"), _s(plain, "floor"),
            _fmt(_ratio(plain, "first", plain, "floor")), _fmt(_ratio(plain, "warm", plain, "floor")),
            _s(san, "first"), _s(san, "warm"), _s(tracer, "warm"),
            _fmt(_ratio(tracer, "warm", plain, "warm")),
            f"{plain.get('peak_mib', 0):.0f}",
        ]  # fmt: skip
        rows.append("| " + " | ".join(cells) + " |")
        print(rows[-1], flush=True)
    geo = math.exp(sum(map(math.log, speedups)) / len(speedups)) if speedups else None
    text = "\n".join(
        [
            f"## Engine speed, first and warm launches (issue 11) — {time.strftime('%Y-%m-%d')}, "
            f"commit {commit()}",
            "",
            f"Machine: {machine()}; Python {sys.version.split()[0]}, Triton {triton.__version__}. Each "
            f"tilescope cell is the median of {args.repeat} fresh processes, the interpreter's of one "
            "(bytecode cached): `first` is the first launch after the imports, "
            "`warm` the same kernel again on fresh inputs; the floor is vectorized NumPy/BLAS computing "
            "the same result in the same process. × interp compares first launches.",
            "",
            "| workload | divergent | interpreter first s | tilescope first s | × interp | warm s | "
            "floor s | first / floor | warm / floor | sanitizer first s | sanitizer warm s | "
            "tracer warm s | tracer / plain (warm) | peak MiB |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            f"Geometric mean of × interp: **{_fmt(geo)}×** over {len(speedups)} workloads"
            + (f" (slowest {min(speedups):.1f}×)." if speedups else "."),
        ]
    )
    publish(text + "\n", append=not args.no_append)
    return 0


if __name__ == "__main__":
    sys.exit(main())
