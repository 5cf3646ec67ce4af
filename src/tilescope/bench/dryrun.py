"""``bench run --dry-run``: what can be checked without a GPU.

Each kernel of each benchmark is compiled for sm_90a on the CPU; then, when the CPU execution
engine is available (``tilescope.trace``), the benchmark runs at its small shape on the engine and
its output is checked against the reference, exactly as the GPU run checks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilescope.bench.accuracy import poison, relative_error
from tilescope.bench.errors import describe
from tilescope.bench.registry import Benchmark

DRY_TARGET = "sm_90a"


@dataclass(frozen=True)
class DryResult:
    """Outcome of one dry-run step (``compile <kernel>`` or ``accuracy``) of one benchmark."""

    bench: str
    step: str
    status: str  # ok, wrong, error, skipped
    detail: str = ""


def engine_launcher() -> Any:
    """A launcher running kernels on tilescope's CPU engine, or None when the engine is not built."""
    import tilescope

    trace = getattr(tilescope, "trace", None)
    if trace is None:
        return None

    def launch(kernel: Any, grid: tuple[int, ...], *args: Any, **kwargs: Any) -> None:
        trace(kernel)[grid](*args, **kwargs)

    return launch


def compile_check(bench: Benchmark) -> list[DryResult]:
    """Compile every kernel of ``bench`` for sm_90a on the CPU."""
    from tilescope.blast.compiling import compile_spec

    out = []
    for spec in bench.compile_specs():
        step = f"compile {spec.name} for {DRY_TARGET}"
        try:
            meta = compile_spec(spec, DRY_TARGET)["metadata"]
            out.append(DryResult(bench.name, step, "ok", f"shared memory {meta.get('shared', '?')} B"))
        except Exception as exc:  # a compile failure is this kernel's result, not the run's end
            out.append(DryResult(bench.name, step, "error", describe(exc)))
    return out


def accuracy_check(bench: Benchmark, launcher: Any) -> DryResult:
    """Run ``bench`` at its small shape through ``launcher`` (None: skipped); check against the reference."""
    if launcher is None:
        return DryResult(
            bench.name,
            "accuracy",
            "skipped",
            "the CPU execution engine (tilescope.trace) is not available in this build",
        )
    try:
        inputs = bench.make_inputs(dict(bench.small_shape), "cpu", 0)
        poison(inputs)
        err = relative_error(bench.run(inputs, launcher), bench.reference(inputs))
    except Exception as exc:
        return DryResult(bench.name, "accuracy on the CPU engine", "error", describe(exc))
    status = "ok" if err <= bench.tolerance else "wrong"
    return DryResult(
        bench.name,
        "accuracy on the CPU engine",
        status,
        f"relative error {err:.3g} (tolerance {bench.tolerance:g})",
    )


def dry_run(benches: list[Benchmark], launcher: Any) -> list[DryResult]:
    """Compile checks for every benchmark, then accuracy checks (compiles first: an engine run patches
    Triton's language layer while it runs, and a compile should never depend on that)."""
    compiled = {b.name: compile_check(b) for b in benches}
    return [r for b in benches for r in (*compiled[b.name], accuracy_check(b, launcher))]
