"""cuTile kernels (``@ct.kernel``) launched on the engine: ``ct.launch(stream, grid, kernel, args)``.

The kernel's Python function runs for every block of a batch with its ``cuda.tile`` references
(the module, names imported from it, and the helper functions it calls) pointed at
:mod:`tilescope.frontends.cutile.language`, and ``range`` at a loop the engine knows of. The
stream argument is accepted and ignored: the engine runs launches in order.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import cuda.tile as ct

from ...engine import host as host_memory
from ...engine.grid import ExecutionOptions
from ...engine.launch import KernelRef, run_launch
from ...engine.numerics import Numerics
from ...engine.sites import SiteFinder, code_objects
from ..launcher import KernelLauncher
from ..running import Context, running
from . import compiler, language

#: the user's kernels and helpers that sites point at
SITES = SiteFinder()

#: cuTile's compiler decides its reduction orders and contractions, which are not modelled (the
#: "gpu" numerics follow Triton's layouts): arithmetic is computed correctly rounded
NUMERICS = Numerics(mode="ideal")

#: id of each public cuda.tile object -> its name (what a kernel may have imported by name)
_CT_NAMES = {id(getattr(ct, n)): n for n in dir(ct) if not n.startswith("_")}


def _names(code: types.CodeType) -> set[str]:
    return {n for c in code_objects(code) for n in c.co_names}


def engine_function(fn: types.FunctionType, memo: dict | None = None) -> types.FunctionType:
    """``fn`` with its globals' ``cuda.tile`` references pointed at the engine's, helpers rebuilt alike."""
    memo = {} if memo is None else memo
    found = memo.get(fn)
    if found is not None:
        return found
    namespace = dict(fn.__globals__)
    new = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    memo[fn] = new
    SITES.add(code_objects(fn.__code__), user=True)
    for name in _names(fn.__code__):
        if name in namespace:
            namespace[name] = _translate(namespace[name], memo)
    namespace["range"] = language.loop_range
    return new


def _translate(value: Any, memo: dict) -> Any:
    if value is ct:
        return language
    name = _CT_NAMES.get(id(value))
    if name is not None and hasattr(language, name) and name not in ("kernel", "function", "launch"):
        return getattr(language, name)
    inner = getattr(value, "__wrapped__", value)  # @ct.function helpers
    if isinstance(inner, types.FunctionType) and not inner.__module__.startswith("cuda.tile"):
        return engine_function(inner, memo)
    return value


class Launcher(KernelLauncher):
    """``kernel[grid](*args)`` and ``launch(stream, grid, args)`` for a cuTile kernel on the engine."""

    def __init__(self, kernel: Any, *, clients: list, options: ExecutionOptions, session: Any,
                 check_compile: bool = True):  # fmt: skip
        super().__init__(kernel, clients=clients, options=options, session=session)
        self.check_compile = check_compile  # compile with cuTile's CPU frontend first (compiler.py)
        self._compiled: set = set()
        self.fn = kernel._pyfunc
        self._engine_fn = engine_function(self.fn)

    @property
    def name(self) -> str:
        """The kernel's name."""
        return self.fn.__name__

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        return lambda *args: self.run(grid, args)

    def launch(self, stream: Any, grid: Any, kernel_args: tuple) -> None:
        """``ct.launch``'s call shape (the stream is accepted and ignored)."""
        self.run(grid, tuple(kernel_args))

    def run(self, grid: Any, args: tuple) -> None:
        """Launch the kernel over ``grid`` with ``args`` (arrays: NumPy arrays or torch tensors)."""
        code = self.fn.__code__
        names = code.co_varnames[: code.co_argcount]
        if self.check_compile:
            self._compile(args)

        def bind(host: host_memory.HostMemory) -> list:
            bound = []
            for i, a in enumerate(args):
                name = names[i] if i < len(names) else f"arg{i}"
                if host_memory.is_tensor(a):
                    view, elem = host.tensor(name, a, i)
                    bound.append(language.array_ref(name, view, elem))
                else:
                    bound.append(a)
            return bound

        def run_batch(launch: Any, bound: list) -> None:
            with running(Context(launch)):
                self._engine_fn(*bound)
            SITES.forget()

        run_launch(
            session=self.session, kernel=KernelRef(self.name, code.co_filename, code.co_firstlineno),
            grid=grid, clients=self.clients, options=self.options, sites=SITES, bind=bind,
            run_batch=run_batch, run_program=run_batch, frontend="cutile", eager=self._eager,
            progress=self.progress, numerics=NUMERICS,
        )  # fmt: skip


    def _compile(self, args: tuple) -> None:
        """Reject the launch with cuTile's message if cuTile would not compile the kernel for ``args``."""
        key = tuple(
            (str(a.dtype), a.ndim) if host_memory.is_tensor(a) else (type(a).__name__, a) for a in args
        )
        if key not in self._compiled:
            compiler.check(self.kernel, args, lambda a: language.cutile_dtype(host_memory.element_type(a)))
            self._compiled.add(key)


_ORIGINAL_LAUNCH: list = []


def install_route() -> None:
    """Route ``ct.launch`` through the current session (once per process); unrouted launches go to cuTile."""
    if _ORIGINAL_LAUNCH:
        return
    _ORIGINAL_LAUNCH.append(ct.launch)

    def launch(stream: Any, grid: Any, kernel: Any, kernel_args: tuple, /, **options: Any) -> Any:
        from ...session import current

        launcher = current().route(kernel, getattr(kernel, "_pyfunc", None))
        if launcher is None:
            return _ORIGINAL_LAUNCH[0](stream, grid, kernel, kernel_args, **options)
        return launcher.launch(stream, grid, kernel_args)

    launch.__doc__ = _ORIGINAL_LAUNCH[0].__doc__
    ct.launch = launch
