"""Pallas on the CPU: tilescope's engine vs Pallas's own ``interpret=True`` mode, on the tutorial kernels
of ``tests/frontends/pallas/kernels.py``.

* ``tilescope``: ``tilescope.trace(wrapper)(*args)`` (no clients: outputs computed), and with the
  sanitizer and race detector (``clients="sanitizer,racecheck"``, addresses only);
* ``interpret``: ``jax.jit(wrapper)(*args)``, JAX's interpreter compiled by XLA (its grid loop a
  ``while_loop``), the reference the tests compare with; it checks nothing.

First call (tracing, compiling) and the median of warm calls, wall seconds, side by side in one
process (CPU time is no measure here: XLA's worker threads add their spinning to the process's CPU
time); every tilescope result is compared with the interpret-mode result.

    .venv/bin/python benchmarks/pallas_speed.py               # appends to benchmarks/RESULTS.md
    .venv/bin/python benchmarks/pallas_speed.py --no-append --rounds 3
    .venv/bin/python benchmarks/pallas_speed.py --baseline /tmp/old   # also an older tilescope

``--baseline DIR`` times tilescope as it was in a source tree ``DIR`` (``DIR/src``, e.g. ``git
archive OLD src | tar -x -C DIR``) in a child process run between the interpret-mode and the
current tilescope timings of each kernel, so before and after are measured in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from report import commit, machine, publish, rounds_arguments

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _workloads(rng):
    import jax.numpy as jnp

    from tests.frontends.pallas import kernels as pk

    def f32(*shape):
        return jnp.asarray(rng.standard_normal(shape).astype("float32"))

    return {
        "vector add 2^20 (blocks of 4096)": (
            lambda x, y: pk.add_vectors(x, y, block=4096),
            (f32(2**20), f32(2**20)),
        ),
        "softmax 4096x256 (8 rows a step)": (pk.softmax, (f32(4096, 256),)),
        "matmul 256^3, k-accumulated (64^3 blocks)": (
            lambda x, y: pk.matmul_acc(x, y, 64, 64, 64),
            (f32(256, 256), f32(256, 256)),
        ),
        "flash attention 1024x64 (64-row blocks)": (
            lambda q, k, v: pk.flash_attention(q, k, v, 64, 64),
            (f32(1024, 64), f32(1024, 64), f32(1024, 64)),
        ),
        "layer norm 1024x512 (a row a step)": (pk.layer_norm, (f32(1024, 512), f32(512), f32(512))),
    }


def _time(call, args, rounds: int) -> tuple[float, float, object]:
    """Wall seconds of the first call and the median of ``rounds`` warm calls; the last result."""
    import jax

    started = time.perf_counter()
    out = jax.block_until_ready(call(*args))
    first = time.perf_counter() - started
    warm = []
    for _ in range(rounds):
        started = time.perf_counter()
        out = jax.block_until_ready(call(*args))
        warm.append(time.perf_counter() - started)
    return first, statistics.median(warm), out


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--baseline", type=Path, help="a source tree of an older tilescope to time too")
    parser.add_argument(
        "--only", help="time tilescope on this kernel alone and print JSON (the baseline's run)"
    )


def _baseline(tree: Path, name: str, rounds: int) -> tuple[float, float]:
    """(first, warm) wall seconds of tilescope from the source tree ``tree`` on kernel ``name``."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    out = subprocess.run(
        [sys.executable, __file__, "--only", name, "--rounds", str(rounds)],
        env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    found = json.loads(out.stdout.strip().splitlines()[-1])
    return found["first"], found["warm"]


def main() -> None:
    import jax
    import numpy as np

    import tilescope

    args = rounds_arguments(__doc__, 5, _options)
    workloads = _workloads(np.random.default_rng(0))
    if args.only:
        wrapper, inputs = workloads[args.only]
        first, warm, _ = _time(tilescope.trace(wrapper), inputs, args.rounds)
        print(json.dumps({"first": first, "warm": warm, "tilescope": tilescope.__file__}))
        return
    load = os.getloadavg()
    rows = []
    for name, (wrapper, inputs) in workloads.items():
        i_first, i_warm, expected = _time(jax.jit(wrapper), inputs, args.rounds)
        before = _baseline(args.baseline, name, args.rounds) if args.baseline else None
        t_first, t_warm, got = _time(tilescope.trace(wrapper), inputs, args.rounds)
        s_first, s_warm, _ = _time(
            tilescope.trace(wrapper, clients="sanitizer,racecheck"), inputs, args.rounds
        )
        error = float(np.max(np.abs(np.asarray(got, np.float64) - np.asarray(expected, np.float64))))
        rows.append((name, i_first, i_warm, before, t_first, t_warm, s_warm, error))
    lines = [
        "## Pallas frontend (issue 16)",
        "",
        f"{time.strftime('%Y-%m-%d')}, commit {commit()}, {machine()}, Python {sys.version.split()[0]}, "
        f"jax {jax.__version__}. Wall seconds of the first call and the median of "
        f"{args.rounds} warm calls, side by side in one process"
        + (f"; `before`: the tilescope of `{args.baseline}`, in a child process." if args.baseline else "."),
        "",
        f"`uname -a`: {' '.join(platform.uname())}; nproc {os.cpu_count()}; load average at the start "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}.",
        "",
    ]
    head = ["kernel", "interpret first", "interpret warm"]
    if args.baseline:
        head += ["before first", "before warm", "interpret / before (warm)"]
    head += [
        "tilescope first",
        "tilescope warm",
        "interpret / tilescope (first)",
        "interpret / tilescope (warm)",
    ]
    head += ["sanitizer+racecheck warm", "max abs diff vs interpret"]
    lines += ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for name, i_first, i_warm, before, t_first, t_warm, s_warm, error in rows:
        cells = [name, f"{i_first:.3f}", f"{i_warm:.4f}"]
        if before is not None:
            cells += [f"{before[0]:.3f}", f"{before[1]:.4f}", f"{i_warm / before[1]:.2f}"]
        cells += [f"{t_first:.3f}", f"{t_warm:.4f}", f"{i_first / t_first:.1f}", f"{i_warm / t_warm:.2f}",
                  f"{s_warm:.4f}", f"{error:.1e}"]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    publish("\n".join(lines) + "\n", not args.no_append)


if __name__ == "__main__":
    main()
