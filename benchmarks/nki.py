"""NKI frontend speed: NKI tutorial kernels on the engine, batched vs one program at a time.

NKI's own CPU path (``nki.simulate_kernel`` from AWS's ``neuronx-cc``) is not installable from the
public registry (its ``nki`` and ``neuronx-cc`` packages are placeholders), so there is no DSL
baseline to run here. The table compares the engine's batched execution (every program of the
grid in one pass) with its serial mode (one program at a time, as a per-program simulator steps
a grid), a sanitizer-only run, and the float64 NumPy reference the tests check against, for
scale. Times are medians of warm launches after one warm-up launch; every output is checked
against the reference.

    .venv/bin/python benchmarks/nki.py               # appends to benchmarks/RESULTS.md
    .venv/bin/python benchmarks/nki.py --no-append --rounds 3
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from report import commit, machine, publish

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tilescope  # noqa: E402
from tests.frontends.nki import kernels as nk  # noqa: E402


@dataclass
class Workload:
    name: str
    kernel: object
    grid: tuple
    make: Callable[[np.random.Generator], tuple]
    reference: Callable[..., np.ndarray]
    rtol: float


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _rmsnorm(a, g):
    return a / np.sqrt((a**2).mean(axis=1, keepdims=True)) * g


def _attention(q, k, v):
    return _softmax(q.T @ k / math.sqrt(q.shape[0])) @ v


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


WORKLOADS = [
    Workload("tensor_add 2048x2048", nk.tensor_add, (16, 4),
             lambda r: (_f32(r, 2048, 2048), _f32(r, 2048, 2048)), lambda a, b: a + b, 1e-6),
    Workload("softmax 4096x512", nk.softmax, (32,), lambda r: (_f32(r, 4096, 512),), _softmax, 1e-5),
    Workload("matmul_tiled 512x512x1024", nk.matmul_tiled, (1,),
             lambda r: (_f32(r, 512, 512), _f32(r, 512, 1024)), lambda a, b: a.T @ b, 1e-4),
    Workload("rmsnorm 4000x512", nk.rmsnorm, (1,),
             lambda r: (_f32(r, 4000, 512), _f32(r, 512)), _rmsnorm, 1e-5),
    Workload("attention d64 seq512", nk.attention, (4,),
             lambda r: (_f32(r, 64, 512), _f32(r, 64, 512), _f32(r, 512, 64)), _attention, 1e-4),
]  # fmt: skip

SETUPS = {
    "batched": {},
    "serial": {"mode": "serial"},
    "sanitizer": {"clients": "sanitizer"},
}


def timed(fn: Callable[[], object], rounds: int) -> tuple[float, object]:
    fn()  # warm-up: first-launch costs are not the engine's speed
    times, result = [], None
    for _ in range(rounds):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def measure(w: Workload, rounds: int) -> dict:
    args = w.make(np.random.default_rng(0))
    ref = w.reference(*(a.astype(np.float64) for a in args))
    row = {"workload": w.name, "programs": int(np.prod(w.grid))}
    row["numpy"], _ = timed(lambda: w.reference(*(a.astype(np.float64) for a in args)), rounds)
    correct = True
    for setup, options in SETUPS.items():
        launcher = tilescope.trace(w.kernel, **options)
        seconds, out = timed(lambda launcher=launcher: launcher[w.grid](*args), rounds)
        row[setup] = seconds
        if setup == "sanitizer":
            correct &= not launcher.reports[0].findings
        else:
            correct &= bool(np.allclose(out, ref, rtol=w.rtol, atol=w.rtol * np.abs(ref).max()))
    row["correct"] = correct
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-append", action="store_true")
    args = parser.parse_args()
    rows = [measure(w, args.rounds) for w in WORKLOADS]
    lines = [
        "## NKI frontend (issue 15)",
        "",
        f"{time.strftime('%Y-%m-%d')}, commit {commit()}, {machine()}, Python {sys.version.split()[0]}. "
        f"Median of {args.rounds} warm launches (seconds). No NKI CPU path to compare with: AWS's simulator "
        "is not on the public registry. serial: one program at a time; sanitizer: addresses only.",
        "",
        "| kernel | programs | batched s | serial s | serial / batched | sanitizer s | NumPy fp64 s "
        "| correct |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['workload']} | {r['programs']} | {r['batched']:.4f} | {r['serial']:.4f} | "
            f"{r['serial'] / r['batched']:.1f} | {r['sanitizer']:.4f} | {r['numpy']:.4f} | "
            f"{'yes' if r['correct'] else 'NO'} |"
        )
    publish("\n".join(lines) + "\n", not args.no_append)


if __name__ == "__main__":
    main()
