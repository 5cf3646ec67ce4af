"""A modelled GPU: scripts written for a GPU run unmodified on a CPU.

Real scripts (and Triton's own tutorials) allocate with ``device="cuda"``, ask
``triton.runtime.driver.active.get_active_torch_device()``, query ``torch.cuda`` for the device's
name, capability and SM count, size launches from Triton's ``get_device_properties``, read a
compiled kernel's registers and shared memory, and time with ``triton.testing.do_bench``. Under
:func:`modelled_gpu` every one of those answers as a chosen GPU would (H200 by default; the table
is :data:`SPECS`): CUDA tensors live in host memory, device queries return the GPU's figures,
synchronisation is a no-op, a compiled kernel's figures come from a real compile for that GPU's
target (Triton compiles for a GPU without one), and ``do_bench`` times the CPU engine, saying so.

``tilescope run`` and the pytest plug-in install it (``--gpu NAME|off``, ``TILESCOPE_GPU``). It only
answers questions about the missing device: every kernel still runs on the engine under the
chosen clients, and a machine that has a GPU is left alone.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from ..errors import TilescopeError
from .specs import DEFAULT, SPECS, GPUSpec, gpu_spec

#: the environment variable naming the GPU to model ("off" for none)
GPU_ENV = "TILESCOPE_GPU"

#: the environment variable that cuts benchmark sweeps (``perf_report``) to their first N points
BENCH_POINTS_ENV = "TILESCOPE_BENCH_POINTS"

#: the GPU answered for right now, or None
_ACTIVE: list[GPUSpec] = []

__all__ = [
    "BENCH_POINTS_ENV", "GPU_ENV", "GPUSpec", "SPECS", "active_gpu", "bench_points", "gpu_spec",
    "modelled_gpu", "modelling", "resolve_gpu",
]  # fmt: skip


def resolve_gpu(name: str | None = None) -> GPUSpec | None:
    """The GPU to model: ``name``, else ``$TILESCOPE_GPU``, else the H200; None for ``"off"``."""
    chosen = name if name is not None else os.environ.get(GPU_ENV) or DEFAULT
    if chosen.strip().lower() in ("off", "none", "0"):
        return None
    try:
        return gpu_spec(chosen)
    except TilescopeError as exc:
        source = "" if name is not None else f" (from ${GPU_ENV})"
        raise TilescopeError(f"{exc}{source}") from None


def bench_points() -> int | None:
    """How many points of each benchmark sweep to measure under the model (``$TILESCOPE_BENCH_POINTS``;
    None: all of them). A CPU engine takes seconds where a GPU takes microseconds, so a smoke run of a
    script's benchmarks measures a few points."""
    raw = os.environ.get(BENCH_POINTS_ENV, "").strip()
    if not raw or raw == "all":
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise TilescopeError(f"${BENCH_POINTS_ENV} must be a positive number of points or 'all'; got {raw!r}")
    return int(raw)


def modelling() -> GPUSpec | None:
    """The GPU being modelled right now, or None."""
    return _ACTIVE[-1] if _ACTIVE else None


def active_gpu() -> GPUSpec:
    """The GPU being modelled, or the default one when none is (what a compile for "the GPU" targets)."""
    return _ACTIVE[-1] if _ACTIVE else SPECS[DEFAULT]


def has_real_gpu() -> bool:
    """Whether this machine has a real CUDA/ROCm device (then nothing is modelled).

    Only a machine with GPU device nodes pays for importing torch to ask it.
    """
    if not any(os.path.exists(node) for node in ("/dev/nvidiactl", "/dev/kfd")):
        return False
    try:
        import torch
    except ImportError:
        return True
    return bool(torch.cuda.is_available())


@contextlib.contextmanager
def modelled_gpu(spec: GPUSpec | None) -> Iterator[GPUSpec | None]:
    """While inside, GPU scripts see ``spec``: torch's CUDA surface and each frontend's device queries.

    Yields the GPU modelled, or None when ``spec`` is None or this machine has a real GPU. torch's
    side is installed when torch is imported (now, or when the script imports it), so a script that
    never uses torch does not pay for importing it.
    """
    if spec is None or has_real_gpu():
        yield None
        return
    from ..after_import import after_import
    from ..frontends import frontends

    def model_torch() -> None:
        from .torch_cuda import cuda_on_host  # imports torch

        stack.enter_context(cuda_on_host(spec))

    with contextlib.ExitStack() as stack:
        stack.enter_context(after_import("torch", model_torch))
        for frontend in frontends():
            model = getattr(frontend, "model_gpu", None)
            if model is not None:
                stack.enter_context(model(spec))
        _ACTIVE.append(spec)
        stack.callback(_ACTIVE.pop)
        yield spec
