"""``tilescope.trace(fn)(*args)`` for a JAX function that calls ``pl.pallas_call``.

The function is traced to a jaxpr (``jax.make_jaxpr``, nothing compiled or run) and the jaxpr is
evaluated equation by equation: each ``pallas_call`` runs on the engine (:mod:`call`), a call of a
jitted function that contains one is walked into, and every other equation is bound by JAX as in
``jax.core.eval_jaxpr``. The result has the function's own output structure, as JAX arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax._src import core as jax_core
from jax._src.pallas.pallas_call import pallas_call_p

from ...engine.grid import ExecutionOptions
from ..launcher import KernelLauncher
from .call import CallLauncher, PallasCall


def _inner(params: dict) -> Any:
    found = params.get("jaxpr") or params.get("call_jaxpr")
    return found if isinstance(found, (jax_core.ClosedJaxpr, jax_core.Jaxpr)) else None


def _abstract(x: Any) -> tuple:
    """What a traced jaxpr depends on of an array argument: its shape and dtype."""
    return (np.shape(x), str(x.dtype))


def _static(x: Any) -> Any:
    """A non-array argument as part of a trace's key: itself when hashable, else its identity."""
    try:
        hash(x)
    except TypeError:
        return ("id", id(x))
    return (type(x).__name__, x)


def calls_pallas(jaxpr: Any) -> bool:
    """Whether ``jaxpr`` (or a jaxpr it calls) contains a ``pallas_call``."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    for eqn in jaxpr.eqns:
        if eqn.primitive is pallas_call_p:
            return True
        inner = _inner(eqn.params)
        if inner is not None and calls_pallas(inner):
            return True
    return False


class FunctionLauncher(KernelLauncher):
    """``launcher(*args)``: the function run with every ``pallas_call`` in it on the engine."""

    def __init__(self, kernel: Callable, *, clients: list, options: ExecutionOptions, session: Any):
        super().__init__(kernel, clients=clients, options=options, session=session)
        self._calls: dict[int, CallLauncher] = {}
        self._traced: dict = {}

    @property
    def name(self) -> str:
        """The function's name."""
        return getattr(self.kernel, "__name__", type(self.kernel).__name__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        flat, tree = jax.tree_util.tree_flatten((args, kwargs))
        # arrays are traced; everything else (block sizes, flags) stays a Python value, as in a plain call
        dynamic = [i for i, x in enumerate(flat) if isinstance(x, (jax.Array, np.ndarray, np.generic))]
        static = tuple(_static(x) for i, x in enumerate(flat) if i not in dynamic)
        key = (tree, tuple(_abstract(flat[i]) for i in dynamic), static)
        traced = self._traced.get(key)
        if traced is None:  # traced once per signature, as jax.jit does

            def with_arrays(*arrays: Any) -> Any:
                leaves = list(flat)
                for i, a in zip(dynamic, arrays, strict=True):
                    leaves[i] = a
                call_args, call_kwargs = jax.tree_util.tree_unflatten(tree, leaves)
                return self.kernel(*call_args, **call_kwargs)

            closed, shape = jax.make_jaxpr(with_arrays, return_shape=True)(*(flat[i] for i in dynamic))
            traced = self._traced[key] = (closed, jax.tree_util.tree_structure(shape))
        closed, out_tree = traced
        outs = self._evaluate(closed.jaxpr, closed.consts, [flat[i] for i in dynamic])
        return jax.tree_util.tree_unflatten(out_tree, outs)

    def _launcher(self, eqn: Any) -> CallLauncher:
        found = self._calls.get(id(eqn))
        if found is None:
            found = CallLauncher(PallasCall.of(eqn), clients=self.clients, options=self.options,
                                 session=self.session)  # fmt: skip
            found.progress = self.progress
            self._calls[id(eqn)] = found
        return found

    def _evaluate(self, jaxpr: Any, consts: Any, args: list) -> list:
        env: dict = {}

        def read(v: Any) -> Any:
            return v.val if isinstance(v, jax_core.Literal) else env[v]

        for v, x in zip(jaxpr.constvars, consts, strict=True):
            env[v] = x
        for v, x in zip(jaxpr.invars, args, strict=True):
            env[v] = x
        for eqn in jaxpr.eqns:
            invals = [read(v) for v in eqn.invars]
            inner = _inner(eqn.params)
            if eqn.primitive is pallas_call_p:
                outs = self._launcher(eqn).run([np.asarray(x) for x in invals])
                outs = [jax.numpy.asarray(o) for o in outs]
            elif inner is not None and calls_pallas(inner):
                outs = self._evaluate(getattr(inner, "jaxpr", inner), getattr(inner, "consts", ()), invals)
            else:
                outs = eqn.primitive.bind(*invals, **eqn.primitive.get_bind_params(eqn.params))
                outs = outs if eqn.primitive.multiple_results else [outs]
            for v, o in zip(eqn.outvars, outs, strict=True):
                if not isinstance(v, jax_core.DropVar):
                    env[v] = o
        return [read(v) for v in jaxpr.outvars]
