"""Ctrl-C in the middle of launches, many times in one process: afterwards the process must be usable.

``python ctrl_c_trials.py TRIALS SEED FOLDER`` runs TRIALS launches (batched with divergent loops,
serial, concurrent with programs spinning on each other's flags, under the sanitizer, under the
tracer), each with a real SIGINT sent from a timer thread at a random moment within it (uniform
over the time an uninterrupted launch of that kind took here, so on any machine). After every
trial it checks that no kernel code is left running (no launch installed, no program thread alive),
that the interrupted launcher launches again with correct results, and that a fresh launch does.
It prints one JSON line (trials, interrupted, failures) and exits 1 when any check failed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import threading
import time

import torch
import triton
import triton.language as tl

import tilescope
from tilescope.frontends.triton.runtime import RUNTIME


@triton.jit
def repeat_rows(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for _ in range(0, row % 5 + 1):  # a per-program trip count: the batch diverges
        acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, acc, mask=cols < n_cols)


@triton.jit
def relay(flags_ptr, out_ptr):
    pid = tl.program_id(0)
    if pid > 0:
        while tl.atomic_add(flags_ptr + pid - 1, 0) == 0:  # wait for the previous program
            pass
    tl.store(out_ptr + pid, pid + 1)
    tl.atomic_xchg(flags_ptr + pid, 1)


def _rows_case(rows: int, **options):
    launcher = tilescope.trace(repeat_rows, **options)

    def run(n: int = rows) -> None:
        x = torch.randn(n, 40) + 2.0
        out = torch.zeros_like(x)
        launcher[(n,)](x, out, 40, BLOCK=64)
        if options.get("clients") != "sanitizer":  # the sanitizer alone computes no outputs
            expected = x.double() * (torch.arange(n).double() % 5 + 1)[:, None]
            torch.testing.assert_close(out.double(), expected, rtol=1e-6, atol=1e-5)

    return run


def _relay_case(programs: int):
    launcher = tilescope.trace(relay, mode="concurrent", slots=8)

    def run(n: int = programs) -> None:
        out = torch.zeros(n, dtype=torch.int32)
        launcher[(n,)](torch.zeros(n, dtype=torch.int32), out)
        assert torch.equal(out, torch.arange(1, n + 1, dtype=torch.int32))

    return run


def cases(folder: str) -> dict:
    """Launch makers by name; each returns a function that launches (full size, or ``n`` programs)."""
    return {
        "batched": lambda: _rows_case(1000, batch_size=64),
        "serial": lambda: _rows_case(100, mode="serial"),
        "concurrent": lambda: _relay_case(60),
        "sanitizer": lambda: _rows_case(1000, clients="sanitizer", batch_size=64),
        "tracer": lambda: _rows_case(400, clients="tracer", batch_size=64,
                                     trace_dir=os.path.join(folder, f"trace-{time.monotonic_ns()}")),
    }  # fmt: skip


class Armed:
    """SIGINT raises KeyboardInterrupt only while a launch is in flight (armed), so the signal always
    lands inside the launch or is counted as missed, never in the checks around it."""

    def __init__(self):
        self.armed = False
        signal.signal(signal.SIGINT, self.handler)

    def handler(self, signum, frame):
        if self.armed:
            self.armed = False
            raise KeyboardInterrupt


def check(run, failures: list, label: str) -> None:
    """The process after an interrupt: nothing of the launch left, the launcher and a fresh one work."""
    if RUNTIME.launch is not None:
        failures.append(f"{label}: a launch is still installed")
    alive = [t for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive()]
    if alive:
        failures.append(f"{label}: {len(alive)} threads still alive: {alive[:3]}")
    try:
        run(16)  # the interrupted launcher again
        _rows_case(8)(8)  # a fresh launcher
    except Exception as exc:  # noqa: BLE001 - reported as a failure of the trial
        failures.append(f"{label}: launching again failed: {type(exc).__name__}: {exc}")


def main(trials: int, seed: int, folder: str) -> int:
    rng = random.Random(seed)
    guard = Armed()
    makers = cases(folder)
    durations = {}
    for name, make in makers.items():  # the first launch warms the caches, the second is timed
        make()()
        start = time.perf_counter()
        make()()
        durations[name] = time.perf_counter() - start
    failures: list[str] = []
    interrupted = 0
    for trial in range(trials):
        name = rng.choice(sorted(makers))
        run = makers[name]()
        delay = rng.uniform(0.0, durations[name])
        timer = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT))
        guard.armed = True
        try:
            timer.start()
            run()
        except KeyboardInterrupt:
            interrupted += 1
        finally:
            guard.armed = False
            timer.cancel()
            timer.join()
        check(run, failures, f"trial {trial} ({name}, SIGINT after {delay:.3f} s)")
    print(json.dumps({"trials": trials, "interrupted": interrupted, "failures": failures,
                      "launch_seconds": {k: round(v, 3) for k, v in durations.items()}}))  # fmt: skip
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]))
