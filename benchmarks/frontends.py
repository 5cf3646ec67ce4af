"""Frontend speed: NKI tutorial and cuTile sample kernels on the engine, batched vs one program at a time.

Neither DSL has a CPU path to compare with: NKI's simulator (``nki.simulate_kernel`` from AWS's
``neuronx-cc``) is not on the public registry (its ``nki`` and ``neuronx-cc`` packages are
placeholders), and cuTile's package compiles on the CPU but runs only on a GPU. The table compares
the engine's batched execution (every program of the grid in one pass) with its serial mode (one
program at a time, as a per-program simulator steps a grid), a sanitizer-only run, and the
float64 NumPy reference the tests check against, for scale. "first" is the first launch of a new
launcher (for cuTile it includes cuTile's own compile to typed IR); the other times are medians
of warm launches. Every output is checked against the reference.

    .venv/bin/python benchmarks/frontends.py               # appends to benchmarks/RESULTS.md
    .venv/bin/python benchmarks/frontends.py --no-append --rounds 3
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
from tests.frontends.cutile import kernels as ck  # noqa: E402
from tests.frontends.nki import kernels as nk  # noqa: E402


@dataclass
class Workload:
    """A kernel, its grid, inputs, float64 reference and tolerance; ``output``: which argument it writes
    (None: it returns its output); ``scalars``: trailing non-array arguments."""

    name: str
    kernel: object
    grid: tuple
    make: Callable[[np.random.Generator], tuple]
    reference: Callable[..., np.ndarray]
    rtol: float
    output: int | None = None
    scalars: tuple = ()


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
    Workload("cuTile vector_add 2^22", ck.vector_add, (4096,),
             lambda r: (_f32(r, 2**22), _f32(r, 2**22), np.zeros(2**22, np.float32)), lambda a, b, c: a + b,
             1e-6, output=2, scalars=(1024,)),
    Workload("cuTile softmax 4096x1000", ck.softmax_rows, (4096,),
             lambda r: (_f32(r, 4096, 1000), np.zeros((4096, 1000), np.float32)), lambda x, o: _softmax(x),
             1e-5, output=1, scalars=(1024,)),
    Workload("cuTile matmul fp32 512^3", ck.matmul, (8, 8),
             lambda r: (_f32(r, 512, 512), _f32(r, 512, 512), np.zeros((512, 512), np.float32)),
             lambda a, b, c: a @ b, 1e-4, output=2, scalars=(64, 64, 64)),
]  # fmt: skip

SETUPS = {
    "batched": {},
    "serial": {"mode": "serial"},
    "sanitizer": {"clients": "sanitizer"},
}


def timed(fn: Callable[[], object], rounds: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(rounds):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def measure(w: Workload, rounds: int) -> dict:
    arrays = w.make(np.random.default_rng(0))
    args = (*arrays, *w.scalars)
    ref = w.reference(*(a.astype(np.float64) for a in arrays))
    row = {"workload": w.name, "programs": int(np.prod(w.grid))}
    row["numpy"], _ = timed(lambda: w.reference(*(a.astype(np.float64) for a in arrays)), rounds)
    correct = True
    for setup, options in SETUPS.items():
        launcher = tilescope.trace(w.kernel, **options)
        started = time.perf_counter()
        launcher[w.grid](*args)
        if setup == "batched":
            row["first"] = time.perf_counter() - started
        seconds, out = timed(lambda launcher=launcher: launcher[w.grid](*args), rounds)
        out = arrays[w.output] if w.output is not None else out
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
        "## NKI and cuTile frontends (issue 15)",
        "",
        f"{time.strftime('%Y-%m-%d')}, commit {commit()}, {machine()}, Python {sys.version.split()[0]}. "
        f"Median of {args.rounds} warm launches (seconds). No DSL CPU path to compare with (NKI's simulator "
        "is not on the public registry; cuTile runs only on a GPU). first: a new launcher's first launch "
        "(cuTile: with its typed-IR compile); serial: one program at a time; sanitizer: addresses only.",
        "",
        "| kernel | programs | first s | batched s | serial s | serial / batched | sanitizer s "
        "| NumPy fp64 s | correct |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['workload']} | {r['programs']} | {r['first']:.4f} | {r['batched']:.4f} | "
            f"{r['serial']:.4f} | "
            f"{r['serial'] / r['batched']:.1f} | {r['sanitizer']:.4f} | {r['numpy']:.4f} | "
            f"{'yes' if r['correct'] else 'NO'} |"
        )
    publish("\n".join(lines) + "\n", not args.no_append)


if __name__ == "__main__":
    main()
