"""The Triton frontend: Triton's language layer on the engine's ops."""

from __future__ import annotations

import contextlib
import importlib.util
from typing import Any

#: the Triton frontend's own launch options (``tilescope.trace(kernel, config=..., autotune="all")``);
#: ``gpu_compiler`` is the Triton release whose GPU code generation "gpu" numerics follow
OPTIONS = ("config", "autotune", "debug", "sanitize_overflow", "gpu_compiler")


def _have_triton() -> bool:
    return importlib.util.find_spec("triton") is not None


class TritonFrontend:
    """Runs ``@triton.jit`` kernels (also under autotune/heuristics, or decorated below jit)."""

    name = "triton"
    options = OPTIONS

    def accepts(self, kernel: Any) -> str | None:
        """ "kernel" for Triton kernel objects, "function" for plain functions about to be ``@triton.jit``-ed
        (None where Triton is not installed)."""
        if not _have_triton():
            return None
        from .launch import accepts

        return accepts(kernel)

    def launcher(self, kernel: Any, **options: Any) -> Any:
        """The engine's ``kernel[grid](...)`` for a Triton kernel."""
        from .launch import Launcher

        return Launcher(kernel, **options)

    def install_route(self) -> None:
        """Route ``kernel[grid](...)`` through the current session (once per process; not without Triton)."""
        if not _have_triton():
            return
        from .launch import install_route

        install_route()

    def model_gpu(self, spec: Any) -> Any:
        """A context in which Triton answers device queries as the GPU ``spec`` (see ``tilescope.gpu``)."""
        if not _have_triton():
            return contextlib.nullcontext()
        from .gpu import modelled

        return modelled(spec)


FRONTEND = TritonFrontend()
