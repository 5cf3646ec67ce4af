"""The TileLang frontend: GPU-style TileLang kernels (``tilelang``) run on tilescope's engine.

TileLang compiles kernels through its own compiler stack to CUDA or HIP; only kernels written in
its CPU dialect run on a CPU. This frontend takes the PrimFunc TileLang's own frontend builds from
a ``@T.prim_func`` (macros expanded, Python-level constants folded, tile operations as ``tl.*``
calls, ``T.Parallel`` loops as parallel ``For``s, every statement stamped with the user's line) and
interprets it on the engine, so every client works on it and findings point at the TileLang line.
``tilescope.trace(prim_func, clients=...)(*inputs)`` or ``compile(prim_func, out_idx=...)(*inputs)``
runs one; under ``tilescope run`` (or the pytest plug-in) an unmodified script's
``tilelang.compile`` and ``@tilelang.jit`` kernels run here. Needs ``tilescope[tilelang]``.
"""

from __future__ import annotations

import importlib.util
from typing import Any


def _have_tilelang() -> bool:
    return importlib.util.find_spec("tilelang") is not None


class TileLangFrontend:
    """Runs TileLang PrimFuncs."""

    name = "tilelang"
    options: tuple[str, ...] = ("out_idx",)

    def accepts(self, kernel: Any) -> str | None:
        """ "kernel" for a TileLang PrimFunc or kernel (None where TileLang is not installed or
        not yet imported: a PrimFunc exists only once it is)."""
        import sys

        if "tilelang" not in sys.modules or not _have_tilelang():
            return None
        from .kernel import Kernel
        from .tir import tirx

        if isinstance(kernel, (Kernel, tirx.PrimFunc)):
            return "kernel"
        return "kernel" if _jit_prim_func(kernel) is not None else None

    def launcher(self, kernel: Any, *, out_idx: Any = None, **options: Any) -> Any:
        """The engine's launcher for a TileLang kernel (``out_idx``: outputs the launch allocates)."""
        from .kernel import Kernel, Launcher
        from .tir import tirx

        if isinstance(kernel, tirx.PrimFunc):
            kernel = Kernel(kernel, out_idx)
        elif not isinstance(kernel, Kernel):
            kernel = Kernel(
                _jit_prim_func(kernel), getattr(kernel, "out_idx", None) if out_idx is None else out_idx
            )
        return Launcher(kernel, **options)

    def install_route(self) -> None:
        """Route ``tilelang.compile`` and ``@tilelang.jit`` through the current session once a script
        imports TileLang."""
        if _have_tilelang():
            from ...after_import import when_imported

            when_imported("tilelang", _route)


def _jit_prim_func(kernel: Any) -> Any:
    """The PrimFunc of a compiled TileLang ``JITKernel`` (None for anything else)."""
    cls = type(kernel)
    if cls.__module__.startswith("tilelang.jit") and cls.__name__ == "JITKernel":
        return getattr(kernel, "prim_func", None)
    return None


def _route() -> None:
    from .route import install_route

    install_route()


def compile(func: Any, out_idx: Any = None, **options: Any) -> Any:  # noqa: A001
    """``tilelang.compile(func, out_idx=...)`` for the engine: a kernel ``kernel(*inputs)`` that runs
    the PrimFunc on the CPU and returns its outputs (TileLang's target and pass options have no
    effect here)."""
    from .kernel import compile as compile_kernel

    return compile_kernel(func, out_idx, **options)


FRONTEND = TileLangFrontend()
