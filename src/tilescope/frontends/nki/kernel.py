"""``@nki.jit`` kernels and their SPMD launch ``kernel[grid](*args)`` on the engine.

A kernel is a Python function of HBM tensors (NumPy arrays or CPU torch tensors) and Python
numbers (compile-time constants, as NKI takes them). It may write into tensors it was given or
allocate outputs with ``nl.ndarray(..., buffer=nl.shared_hbm)`` and return them; the launch then
returns those outputs as NumPy arrays. Every program of the grid runs the body (batched: all
programs at once, a leading program axis on every value).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ...engine import host as host_memory
from ...engine.errors import LaunchError
from ...engine.grid import ExecutionOptions
from ...engine.launch import KernelRef, run_launch
from ...engine.numerics import Numerics
from ...engine.sites import SiteFinder, code_objects
from ..launcher import KernelLauncher
from ..running import Context, running
from .tiles import HBMTensor, engine_dtype, hbm_tensor

#: the user's kernel code (and nested functions) that sites point at
SITES = SiteFinder()

#: a NeuronCore is not the modelled GPU: its arithmetic is computed correctly rounded (no GPU
#: reduction order, no FMA contraction); NKI's own bit-level behaviour is not modelled
NUMERICS = Numerics(mode="ideal")


class Kernel:
    """An NKI kernel (``@nki.jit``): ``kernel[grid](*args)`` or ``kernel(*args)`` for a grid of one."""

    def __init__(self, fn: Callable, **jit_options: Any):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.jit_options = jit_options  # accepted and unused on the CPU (mode=..., platform_target=...)
        SITES.add(code_objects(fn.__code__), user=True)
        self._plain: Any = None

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        return lambda *args, **kwargs: self._launcher()[grid](*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._launcher()[(1,)](*args, **kwargs)

    def _launcher(self) -> Any:
        """Where a launch goes: the current session's interception or mark, else a plain engine run."""
        from ...session import current

        routed = current().route(self, self.fn)
        if routed is not None:
            return routed
        if self._plain is None:
            from ...tracing import trace

            self._plain = trace(self)
        return self._plain


def jit(fn: Callable | None = None, **options: Any) -> Any:
    """``@nki.jit`` (also ``@nki.jit(mode=...)``): an NKI kernel run on tilescope's engine."""
    if fn is None:
        return lambda f: Kernel(f, **options)
    return Kernel(fn, **options)


class Launcher(KernelLauncher):
    """``kernel[grid](*args)`` on the engine for an NKI kernel; keeps its clients' reports."""

    def __init__(self, kernel: Kernel, *, clients: list, options: ExecutionOptions, session: Any):
        super().__init__(kernel, clients=clients, options=options, session=session)

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        if not isinstance(grid, tuple):
            grid = (grid,)
        return lambda *args, **kwargs: self.run(grid, args, kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.run((1,), args, kwargs)

    def run(self, grid: tuple, args: tuple, kwargs: dict) -> Any:
        """Launch the kernel over ``grid``; returns what the kernel returns, HBM tensors as NumPy arrays."""
        code = self.kernel.fn.__code__
        names = list(code.co_varnames[: code.co_argcount])
        outputs: list[HBMTensor] = []
        state: dict[str, Any] = {}

        def bind(host: host_memory.HostMemory) -> tuple[list, dict]:
            state["host"] = host

            def convert(i: int, name: str, a: Any) -> Any:
                if host_memory.is_tensor(a):
                    view, elem = host.tensor(name, a, i)
                    return hbm_tensor(name, view, elem, a)
                return a

            bound = [convert(i, names[i] if i < len(names) else f"arg{i}", a) for i, a in enumerate(args)]
            bound_kw = {k: convert(len(args) + j, k, v) for j, (k, v) in enumerate(kwargs.items())}
            return bound, bound_kw

        def allocate(ctx: Context, shape: tuple, dtype: Any, name: str) -> HBMTensor:
            k = ctx.allocations
            ctx.allocations += 1
            if k < len(outputs):  # a replayed attempt: the same tensor as before
                return outputs[k]
            array = np.zeros(shape, dtype=engine_dtype(dtype).storage)
            host = state["host"]
            view, elem = host.tensor(name, array, -1)
            ctx.launch.hub.argument(host.registered(view))
            outputs.append(hbm_tensor(name, view, elem, array))
            return outputs[k]

        def run_batch(launch: Any, bound: tuple[list, dict]) -> None:
            ctx = Context(launch, lambda shape, dtype, name: allocate(ctx, shape, dtype, name))
            with running(ctx):
                state["result"] = self.kernel.fn(*bound[0], **bound[1])
            SITES.forget()

        kernel = KernelRef(self.name, code.co_filename, code.co_firstlineno)
        parameters = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        unknown = sorted(k for k in kwargs if k not in parameters)
        if unknown:
            raise LaunchError(f"{kernel}: unknown keyword argument(s) {', '.join(unknown)}")
        run_launch(
            session=self.session, kernel=kernel, grid=grid, clients=self.clients, options=self.options,
            sites=SITES, bind=bind, run_batch=run_batch, run_program=run_batch, frontend="nki",
            eager=self._eager, progress=self.progress, numerics=NUMERICS,
        )  # fmt: skip
        return _returned(state.get("result"))


def _returned(result: Any) -> Any:
    """What a launch returns: the kernel's return value with HBM tensors as their arrays."""
    if isinstance(result, HBMTensor):
        return result.array
    if isinstance(result, (tuple, list)):
        return type(result)(_returned(r) for r in result)
    return result
