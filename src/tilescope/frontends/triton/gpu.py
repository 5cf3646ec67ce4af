"""Triton's side of a modelled GPU (see :mod:`tilescope.gpu`): a driver that answers as the GPU, a
``do_bench`` that times the CPU engine and says so, and compiles for the GPU's target.

Triton compiles for a GPU without one when the target is named (the blast-radius report relies on
the same), so a compiled kernel's registers, spills and shared memory are the real figures for the
modelled GPU, not guesses.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ...gpu import BENCH_POINTS_ENV, GPUSpec, active_gpu, bench_points
from ...gpu.specs import SPECS
from . import version


class ModelUtils:
    """``driver.active.utils`` of a modelled GPU."""

    def __init__(self, spec: GPUSpec):
        self.spec = spec

    def get_device_properties(self, device: Any = 0) -> dict[str, int]:
        """What Triton's CUDA/HIP utils return for the device."""
        return self.spec.triton_properties()


class ModelDriver:
    """A Triton driver (``triton.runtime.driver.active``) that answers as ``spec`` on a machine with
    no GPU: its target, torch device (the CPU), properties, benchmarker."""

    def __init__(self, spec: GPUSpec):
        self.spec = spec
        self.utils = ModelUtils(spec)

    @classmethod
    def is_active(cls) -> bool:
        """Always: it is installed on purpose."""
        return True

    def get_current_target(self) -> Any:
        """The modelled GPU's compile target."""
        from triton.backends.compiler import GPUTarget

        return GPUTarget(self.spec.backend, self.spec.arch, self.spec.warp_size)

    def get_active_torch_device(self) -> Any:
        """Where the script's tensors go: host memory."""
        import torch

        return torch.device("cpu")

    def get_current_device(self) -> int:
        """This GPU's row in the spec table (the H200 is 0): Triton keys its compile cache by device,
        so compiles for two modelled GPUs are never taken for each other."""
        return list(SPECS.values()).index(self.spec) if self.spec in SPECS.values() else 0

    def set_current_device(self, device: Any) -> None:
        """There is one device."""

    def get_current_stream(self, device: Any = None) -> int:
        """The default stream."""
        return 0

    def get_device_capability(self, device: Any = None) -> tuple[int, int]:
        """The modelled GPU's compute capability."""
        return self.spec.capability

    def get_device_interface(self) -> Any:
        """``torch.cuda`` (answering as the modelled GPU while it is installed)."""
        import torch

        return torch.cuda

    def get_benchmarker(self) -> Callable[..., Any]:
        """``do_bench`` on the CPU engine."""
        return do_bench

    def get_empty_cache_for_benchmark(self) -> Any:
        """A buffer the size of the GPU's L2 cache (cleared between timed runs, as Triton does)."""
        import torch

        return torch.empty(self.spec.L2_cache_size // 4, dtype=torch.int32)

    def clear_cache(self, cache: Any) -> None:
        """Overwrite the buffer."""
        cache.zero_()

    def map_python_to_cpp_type(self, ty: str) -> str:
        """The backend's C++ type for a Triton type string."""
        return version.python_to_cpp_type(self.spec.backend)(ty)


_NOTED: set[str] = set()


def _note_once(spec: GPUSpec) -> None:
    if spec.name in _NOTED:
        return
    _NOTED.add(spec.name)
    print(f"tilescope: triton.testing.do_bench times tilescope's CPU engine here (no GPU; {spec.name} "
          "modelled): the figures say nothing about GPU speed", file=sys.stderr)  # fmt: skip


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, grad_to_none: Any = None,
             quantiles: list[float] | None = None, return_mode: str = "mean", **_: Any) -> Any:  # fmt: skip
    """``triton.testing.do_bench`` on the CPU: one untimed run (the first launch prepares the kernel),
    then timed runs until ``rep`` milliseconds have passed (at least one, at most 100).

    Returns what Triton's does: milliseconds as a summary (``return_mode``) or ``quantiles``.
    """
    if return_mode not in ("min", "max", "mean", "median", "all"):
        raise ValueError(f"return_mode must be one of min, max, mean, median, all; got {return_mode!r}")
    _note_once(active_gpu())
    fn()
    times: list[float] = []
    deadline = time.perf_counter() + rep / 1e3
    while not times or (time.perf_counter() < deadline and len(times) < 100):
        for tensor in grad_to_none or ():
            tensor.grad = None
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    if quantiles is not None:
        found = [float(q) for q in np.quantile(np.asarray(times), quantiles)]
        return found[0] if len(found) == 1 else found
    if return_mode == "all":
        return times
    return {"min": min, "max": max, "mean": statistics.mean, "median": statistics.median}[return_mode](times)


def do_bench_cudagraph(fn: Callable[[], Any], rep: float = 20, grad_to_none: Any = None,
                       quantiles: list[float] | None = None, return_mode: str = "mean") -> Any:  # fmt: skip
    """``triton.testing.do_bench_cudagraph`` on the CPU: there are no graphs; as :func:`do_bench`."""
    return do_bench(fn, rep=rep, grad_to_none=grad_to_none, quantiles=quantiles, return_mode=return_mode)


@contextlib.contextmanager
def target_driver(spec: GPUSpec) -> Iterator[None]:
    """While inside, Triton's active driver answers as ``spec`` (for a compile, or the whole model)."""
    saved = version.swap_active_driver(ModelDriver(spec))
    try:
        yield
    finally:
        version.swap_active_driver(saved)


def sweep_points(run: Callable[..., Any], points: int) -> Callable[..., Any]:
    """``triton.testing.Mark._run`` that measures only the first ``points`` values of a sweep."""

    @functools.wraps(run)
    def first_points(mark: Any, bench: Any, *args: Any, **kwargs: Any) -> Any:
        if len(bench.x_vals) > points:
            print(f"tilescope: {bench.plot_name or 'perf_report'}: measuring the first {points} of "
                  f"{len(bench.x_vals)} points (${BENCH_POINTS_ENV})", file=sys.stderr)  # fmt: skip
            bench = copy.copy(bench)
            bench.x_vals = list(bench.x_vals)[:points]
        return run(mark, bench, *args, **kwargs)

    return first_points


@contextlib.contextmanager
def modelled(spec: GPUSpec) -> Iterator[None]:
    """Triton answers as ``spec``: the driver, ``triton.testing``'s benchmarkers and, with
    ``$TILESCOPE_BENCH_POINTS``, its ``perf_report`` sweeps cut to their first points."""
    import triton.testing

    replaced: list[tuple[Any, str, Any]] = [
        (triton.testing, "do_bench", do_bench),
        (triton.testing, "do_bench_cudagraph", do_bench_cudagraph),
    ]
    points = bench_points()
    if points is not None:
        replaced.append((triton.testing.Mark, "_run", sweep_points(triton.testing.Mark._run, points)))
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in replaced]
    for owner, name, value in replaced:
        setattr(owner, name, value)
    try:
        with target_driver(spec):
            yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)
