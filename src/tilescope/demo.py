"""``tilescope demo``: the bundled vector-add kernel run on the CPU engine and checked against float64."""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np


def register(subparsers: Any) -> None:
    """Add ``tilescope demo`` to the command line."""
    p = subparsers.add_parser("demo", help="run the bundled example kernel on the CPU and check it",
                              description="Run tilescope/examples/vector_add.py's @triton.jit kernel on the "
                                          "CPU engine (no GPU, no TRITON_INTERPRET); compare with float64.")
    p.add_argument("-n", type=int, default=98_432, help="number of elements (default: 98432)")
    p.set_defaults(func=main)


def run_demo(n: int = 98_432, block: int = 1024) -> tuple[float, float, int]:
    """Run the example on ``n`` random float32 elements; (max abs error, seconds, programs)."""
    import triton

    from . import trace
    from .examples.vector_add import add_kernel

    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.empty_like(x)
    programs = triton.cdiv(n, block)
    start = time.perf_counter()
    trace(add_kernel)[(programs,)](x, y, out, n, BLOCK=block)
    seconds = time.perf_counter() - start
    error = float(np.max(np.abs(out.astype(np.float64) - (x.astype(np.float64) + y.astype(np.float64)))))
    return error, seconds, programs


def main(args: argparse.Namespace) -> int:
    """Print what ran and whether it matched; exit 1 if it did not."""
    error, seconds, programs = run_demo(args.n)
    # x + y rounded once to float32: off by at most half an ulp of a value below 2
    bound = float(np.finfo(np.float32).eps)
    ok = error <= bound
    print("tilescope demo: add_kernel (tilescope/examples/vector_add.py) on the CPU engine")
    print(f"  {args.n:,} float32 elements, {programs} programs, {seconds * 1e3:.0f} ms")
    print(f"  max |out - float64 reference| = {error:.3g} (bound {bound:.3g}: one float32 rounding) -> "
          f"{'OK' if ok else 'MISMATCH'}")
    print("next: tilescope run -c tracer,sanitizer your_script.py   (see tilescope run --help)")
    return 0 if ok else 1
