"""Measure one benchmark at one shape on the GPU: accuracy first, then timing, as one result record.

A wrong answer (error above the benchmark's tolerance, NaN, or an output element left unwritten)
gives status ``wrong`` and is not timed; an exception gives status ``error`` with its message. Only
a correct kernel gets status ``ok`` and numbers.
"""

from __future__ import annotations

import gc
from dataclasses import asdict, dataclass, field
from typing import Any

from tilescope.bench.accuracy import poison, relative_error
from tilescope.bench.errors import describe
from tilescope.bench.registry import Benchmark, gpu_launch
from tilescope.bench.roofline import Roofline
from tilescope.bench.timing import Timing, sets_needed, tensor_bytes, time_calls


@dataclass
class Result:
    """One benchmark x shape x variant (``triton`` kernel or torch ``baseline``) measured in one process."""

    bench: str
    shape: str
    variant: str
    status: str  # ok, wrong, error
    case_index: int = 0  # index of the shape in the benchmark's list (stable when a side scales the shape)
    error: float | None = None
    message: str = ""
    median_ms: float | None = None
    p10_ms: float | None = None
    p90_ms: float | None = None
    reps: int = 0
    launches_per_replay: int = 0
    sets: int = 0
    graph: bool = False
    tflops: float | None = None
    gbps: float | None = None
    roof_fraction: float | None = None
    samples_ms: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The result as plain data."""
        return asdict(self)


def _fill(result: Result, timing: Timing, flops: float, nbytes: float, roof: float | None) -> None:
    med = timing.median_ms
    result.median_ms, result.p10_ms, result.p90_ms = med, timing.quantile_ms(0.1), timing.quantile_ms(0.9)
    result.reps, result.launches_per_replay = len(timing.samples_ms), timing.launches_per_replay
    result.sets, result.graph, result.samples_ms = timing.sets, timing.graph, list(timing.samples_ms)
    result.tflops = flops / (med / 1e3) / 1e12
    result.gbps = nbytes / (med / 1e3) / 1e9
    result.roof_fraction = None if roof is None else roof / (med / 1e3)


def measure(
    bench: Benchmark,
    shape: dict[str, int],
    *,
    reps: int,
    roofline: Roofline | None,
    l2_bytes: int,
    baseline: bool = False,
    seed: int = 0,
    case: int = 0,
) -> list[Result]:
    """Check and time ``bench`` at ``shape`` (and its torch baseline when asked); never raises."""
    import torch

    label = bench.shape_label(shape)
    flops, nbytes = bench.flops(shape), bench.bytes(shape)
    floor = None if roofline is None else roofline.floor_seconds(flops, nbytes, bench.roof)
    results = []
    try:
        sets = [bench.make_inputs(shape, "cuda", seed)]
        poison(sets[0])
        out = bench.run(sets[0], gpu_launch)
        torch.cuda.synchronize()
        err = relative_error(out, bench.reference(sets[0]))
        del out
        kernel = Result(bench.name, label, "triton", "ok", case_index=case, error=err)
        results.append(kernel)
        if not err <= bench.tolerance:  # NaN compares False: a NaN error is wrong too
            kernel.status = "wrong"
            kernel.message = f"relative error {err:.3g} exceeds tolerance {bench.tolerance:g}; not timed"
            return results
        n_sets = sets_needed(tensor_bytes(sets[0]), l2_bytes)
        sets += [bench.make_inputs(shape, "cuda", seed + 1000 * i) for i in range(1, n_sets)]
        _fill(
            kernel, time_calls(lambda i: bench.run(sets[i], gpu_launch), n_sets, reps), flops, nbytes, floor
        )
        if baseline and bench.baseline is not None:
            base = Result(bench.name, label, "baseline", "ok", case_index=case)
            results.append(base)
            try:
                base.error = relative_error(bench.baseline(sets[0]), bench.reference(sets[0]))
                _fill(base, time_calls(lambda i: bench.baseline(sets[i]), n_sets, reps), flops, nbytes, floor)
            except Exception as exc:  # the baseline failing must not hide the kernel's result
                base.status, base.message = "error", describe(exc)
    except Exception as exc:  # one benchmark's failure is reported, never fatal to the others
        if results:
            results[-1].status, results[-1].message = "error", describe(exc)
        else:
            results.append(
                Result(bench.name, label, "triton", "error", case_index=case, message=describe(exc))
            )
    finally:
        sets = []
        gc.collect()
        torch.cuda.empty_cache()
    return results
