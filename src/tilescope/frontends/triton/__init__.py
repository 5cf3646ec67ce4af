"""The Triton frontend: Triton's language layer on the engine's ops."""

from __future__ import annotations

import contextlib
import importlib.util
from typing import Any

from ... import methodcache

#: the Triton frontend's own launch options (``tilescope.trace(kernel, config=..., autotune="all")``);
#: ``gpu_compiler`` is the Triton release whose GPU code generation "gpu" numerics follow;
#: ``gpu_layouts`` where "gpu" numerics take a reduction's layout from (:data:`GPU_LAYOUTS`);
#: ``gpu_sfu`` where they take the approximate instructions' results from
#: (:data:`tilescope.engine.numerics.SFU_MODES`: "model", or the H200's recorded "tables")
OPTIONS = ("config", "autotune", "debug", "sanitize_overflow", "gpu_compiler", "gpu_layouts", "gpu_sfu")
#: "model": Triton's coalescing rule; "compiled": an offline compile of the kernel for the modelled
#: GPU (its TTGIR), cached per kernel and config, the rule where the compile fails
GPU_LAYOUTS = ("model", "compiled")
#: how an autotuned kernel picks its configs on the CPU: its first one, or every one
AUTOTUNE = ("first", "all")


def check_options(options: dict[str, Any]) -> None:
    """Raise ValueError naming the option when one of the Triton frontend's options is invalid.

    ``config``: an index into the kernel's autotune configs or a ``triton.Config``; ``autotune``:
    one of :data:`AUTOTUNE`, and not ``"all"`` with a ``config``; ``debug`` and
    ``sanitize_overflow``: bools.
    """
    autotune = options.get("autotune", "first")
    if autotune not in AUTOTUNE:
        raise ValueError(f"autotune must be one of {', '.join(map(repr, AUTOTUNE))}; got {autotune!r}")
    config = options.get("config")
    index = isinstance(config, int) and not isinstance(config, bool)
    if config is not None and not index and not hasattr(config, "kwargs"):
        raise ValueError(f"config must be an index into the kernel's autotune configs or a triton.Config; "
                         f"got {config!r}")  # fmt: skip
    if config is not None and autotune == "all":
        raise ValueError("config= names one autotune config, autotune='all' runs every one: give one of them")
    for name in ("debug", "sanitize_overflow"):
        if name in options and not isinstance(options[name], bool):
            raise ValueError(f"{name} must be True or False; got {options[name]!r}")


def _have_triton() -> bool:
    return importlib.util.find_spec("triton") is not None


def _launch() -> Any:
    """The frontend's launch module, imported (with the engine) on first use, its dataclasses' methods
    compiled before (:mod:`tilescope.methodcache`)."""
    return methodcache.import_module(f"{__name__}.launch")


class TritonFrontend:
    """Runs ``@triton.jit`` kernels (also under autotune/heuristics, or decorated below jit)."""

    name = "triton"
    options = OPTIONS
    check_options = staticmethod(check_options)

    def accepts(self, kernel: Any) -> str | None:
        """ "kernel" for Triton kernel objects, "function" for plain functions about to be ``@triton.jit``-ed
        (None where Triton is not installed)."""
        if not _have_triton():
            return None
        return _launch().accepts(kernel)

    def launcher(self, kernel: Any, **options: Any) -> Any:
        """The engine's ``kernel[grid](...)`` for a Triton kernel."""
        return _launch().Launcher(kernel, **options)

    def install_route(self) -> None:
        """Route ``kernel[grid](...)`` through the current session (once per process; not without Triton)."""
        if not _have_triton():
            return
        _launch().install_route()

    def model_gpu(self, spec: Any) -> Any:
        """A context in which Triton answers device queries as the GPU ``spec`` (see ``tilescope.gpu``)."""
        if not _have_triton():
            return contextlib.nullcontext()
        from .gpu import modelled

        return modelled(spec)


FRONTEND = TritonFrontend()
