"""TileLang frontend speed: GPU-style TileLang kernels on the engine, batched vs one program at a time,
and against TileLang's own CPU path where a kernel compiles for it.

TileLang's CPU backend (``target="c"``) compiles kernels without shared or fragment buffers (the
element-wise ``vector_add``); it refuses the GPU-style ones (``CPU fill only supports local and
global buffers``), so for those the table compares the engine's batched execution (every block of
the grid in one pass) with its serial mode (one block at a time), a sanitizer-only run, and the
float64 torch reference. Times are CPU seconds (``time.process_time``, medians of warm launches; the
machine is shared). Every output is checked against the reference.

    .venv/bin/python benchmarks/tilelang_speed.py               # appends to benchmarks/RESULTS.md
    .venv/bin/python benchmarks/tilelang_speed.py --no-append --rounds 1
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from report import commit, publish, rounds_arguments

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tilelang  # noqa: E402

import tilescope  # noqa: E402
from tests.frontends.tilelang import kernels as tk  # noqa: E402


@dataclass
class Workload:
    """A kernel, its outputs, inputs, float64 reference and tolerance; ``native``: TileLang's C target
    compiles it."""

    name: str
    func: object
    out_idx: object
    make: Callable[[torch.Generator], tuple]
    reference: Callable[..., torch.Tensor]
    rtol: float
    native: bool = False


def _r(gen, *shape, dtype=torch.float32):
    return torch.randn(*shape, generator=gen).to(dtype)


def _attention(q, k, v, causal=False):
    q, k, v = (t.double() for t in (q, k, v))
    s = torch.einsum("bqhd,bkhd->bhqk", q, k) / q.shape[-1] ** 0.5
    if causal:
        future = torch.ones(s.shape[-1], s.shape[-1], dtype=torch.bool).tril().logical_not()
        s = s.masked_fill(future, -torch.inf)
    return torch.einsum("bhqk,bkhd->bqhd", s.softmax(-1), v)


def _qkv(gen):
    return tuple(_r(gen, 2, 512, 4, 64, dtype=torch.float16) for _ in range(3))


WORKLOADS = [
    Workload("vector_add 2^22 (block 1024)", tk.vector_add(2**22, 1024), -1,
             lambda g: (_r(g, 2**22), _r(g, 2**22)), lambda a, b: a.double() + b.double(), 1e-6, native=True),
    Workload("matmul fp16 512^3 (64x64x32 tiles)", tk.matmul(512, 512, 512), -1,
             lambda g: (_r(g, 512, 512, dtype=torch.float16), _r(g, 512, 512, dtype=torch.float16)),
             lambda a, b: torch.relu(a.double() @ b.double()), 2e-2),
    Workload("softmax 4096x512 (4 rows a block)", tk.softmax(4096, 512), -1,
             lambda g: (_r(g, 4096, 512),), lambda x: x.double().softmax(1), 1e-5),
    Workload("layer_norm bf16 1024x512", tk.layer_norm(1024, 512), [-3, -2, -1],
             lambda g: (_r(g, 1024, 512, dtype=torch.bfloat16), _r(g, 512, dtype=torch.bfloat16),
                        _r(g, 512, dtype=torch.bfloat16)),
             lambda x, w, b: torch.nn.functional.layer_norm(x.double(), (512,), w.double(), b.double()),
             3e-2),
    Workload("flash attention 2x4x512x64", tk.flash_attention(2, 4, 512, 64, False), [3], _qkv, _attention,
             2e-3),
    Workload("flash attention causal 2x4x512x64", tk.flash_attention(2, 4, 512, 64, True), [3], _qkv,
             lambda q, k, v: _attention(q, k, v, True), 2e-3),
]  # fmt: skip

SETUPS = {"batched": {}, "serial": {"mode": "serial"}, "sanitizer": {"clients": "sanitizer"}}


def timed(fn: Callable[[], object], rounds: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(rounds):
        started = time.process_time()
        result = fn()
        times.append(time.process_time() - started)
    return statistics.median(times), result


def _close(out, ref, rtol) -> bool:
    out = out[0] if isinstance(out, list) else out
    return bool(torch.allclose(out.double(), ref, rtol=rtol, atol=rtol * float(ref.abs().max())))


def measure(w: Workload, rounds: int) -> dict:
    inputs = w.make(torch.Generator().manual_seed(0))
    ref = w.reference(*inputs)
    row = {"workload": w.name, "correct": True}
    row["torch fp64"], _ = timed(lambda: w.reference(*inputs), rounds)
    for setup, options in SETUPS.items():
        launcher = tilescope.trace(w.func, out_idx=w.out_idx, **options)
        started = time.process_time()
        out = launcher(*inputs)
        if setup == "batched":
            row["first"] = time.process_time() - started
        row[setup], out = timed(lambda launcher=launcher: launcher(*inputs), rounds)
        ok = not launcher.reports[0].findings if setup == "sanitizer" else _close(out, ref, w.rtol)
        row["correct"] &= ok
    if w.native:
        native = tilelang.compile(w.func, out_idx=w.out_idx, target="c")
        row["tilelang c"], out = timed(lambda: native(*inputs), rounds)
        row["correct"] &= _close(out, ref, w.rtol)
    return row


def main() -> None:
    args = rounds_arguments(__doc__, 3)
    rows = [measure(w, args.rounds) for w in WORKLOADS]
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        "## TileLang frontend (issue 16, part B)",
        "",
        f"{time.strftime('%Y-%m-%d')}, commit {commit()}; `{' '.join(platform.uname())}`, "
        f"nproc {os.cpu_count()}, "
        f"load average {load}; Python {sys.version.split()[0]}, tilelang {tilelang.__version__}, torch "
        f"{torch.__version__}. CPU seconds (process_time), median of {args.rounds} warm launches. first: a "
        "new launcher's first launch; serial: one block at a time; sanitizer: addresses only; tilelang c: "
        'TileLang\'s own CPU backend (`target="c"`), which compiles only kernels without shared/fragment '
        "buffers.",
        "",
        "| kernel | first s | batched s | serial s | serial / batched | sanitizer s | tilelang c s "
        "| torch fp64 s | correct |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        native = f"{r['tilelang c']:.4f}" if "tilelang c" in r else "does not compile"
        lines.append(
            f"| {r['workload']} | {r['first']:.3f} | {r['batched']:.4f} | {r['serial']:.4f} | "
            f"{r['serial'] / r['batched']:.1f} | {r['sanitizer']:.4f} | {native} | {r['torch fp64']:.4f} | "
            f"{'yes' if r['correct'] else 'NO'} |"
        )
    publish("\n".join(lines) + "\n", not args.no_append)


if __name__ == "__main__":
    main()
