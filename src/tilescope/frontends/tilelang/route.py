"""``tilescope run`` for TileLang scripts: while a session intercepts launches, ``tilelang.compile``
(and so ``@tilelang.jit``, which calls it) returns an engine kernel, whose launches the session
routes to its clients; otherwise it is TileLang's own."""

from __future__ import annotations

from typing import Any

_ORIGINAL: list = []


def install_route() -> None:
    """Point ``tilelang.compile`` and ``tilelang.jit.compile`` at the engine (once per process)."""
    if _ORIGINAL:
        return
    import importlib

    import tilelang

    from .kernel import Kernel

    jit = importlib.import_module("tilelang.jit")  # the module (``tilelang.jit`` the name is its decorator)

    _ORIGINAL.append(jit.compile)

    def compile(func: Any = None, out_idx: Any = None, **options: Any) -> Any:  # noqa: A001
        from ...session import current

        if not current().intercepting:  # outside tilescope run: TileLang's own compile
            return _ORIGINAL[0](func, out_idx=out_idx, **options)
        return Kernel(func, out_idx)

    compile.__doc__ = jit.compile.__doc__
    jit.compile = compile
    tilelang.compile = compile
