"""``tilescope run`` for Pallas: a script's own ``pallas_call`` s, jitted or not, run on the engine.

JAX runs every primitive, eagerly or under ``jax.jit``, by lowering it; on the CPU a
``pallas_call`` lowers to its interpreter. The route registers a CPU lowering of ``pallas_call``
that asks the current session where the call goes: a routed call lowers to a host callback that
runs the engine's launcher on the operands and returns its outputs; an unrouted one lowers as JAX
would. The decision is taken when JAX lowers the call: a function compiled before the route was
installed keeps its compiled form (``tilescope run`` installs it before the script starts).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax._src.interpreters import mlir
from jax._src.pallas.pallas_call import pallas_call_p

from .call import PallasCall

_ORIGINAL: list = []


def install_route() -> None:
    """Register the routing CPU lowering of ``pallas_call`` (once per process)."""
    if _ORIGINAL:
        return
    _ORIGINAL.append(mlir._lowerings[pallas_call_p].rule)
    mlir.register_lowering(pallas_call_p, _lowering, platform="cpu", cacheable=False)


def _lowering(ctx: Any, *operands: Any, **params: Any) -> Any:
    from ...session import current

    call = PallasCall.from_params(params, getattr(ctx, "traceback", None))
    launcher = current().route(call)
    if launcher is None:
        return _ORIGINAL[0](ctx, *operands, **params)
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in ctx.avals_out]

    def host(*arrays: Any) -> tuple:
        outs = launcher.run([np.asarray(a) for a in arrays])
        return tuple(np.asarray(o, dtype=s.dtype) for o, s in zip(outs, shapes, strict=True))

    def run(*xs: Any) -> Any:
        return jax.pure_callback(host, shapes, *xs)

    return mlir.lower_fun(run, multiple_results=True)(ctx, *operands)
