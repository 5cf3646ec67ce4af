"""The Triton frontend: Triton's language layer on the engine's builder."""

from __future__ import annotations

from typing import Any


class TritonFrontend:
    """Runs ``@triton.jit`` kernels (also under autotune/heuristics, or decorated below jit)."""

    name = "triton"

    def accepts(self, kernel: Any) -> bool:
        """True for Triton kernel objects and for plain functions about to be ``@triton.jit``-ed."""
        from .launch import accepts

        return accepts(kernel) is not None

    def trace(self, kernel: Any, **options: Any) -> Any:
        """``tilescope.trace`` for Triton kernels."""
        from .launch import trace

        return trace(kernel, **options)


FRONTEND = TritonFrontend()
