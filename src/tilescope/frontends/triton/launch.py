"""``tilescope.trace``: launch a ``@triton.jit`` kernel on the CPU engine with Triton's call shape.

``tilescope.trace(kernel)[grid](*args, **meta)`` runs every program of the launch on NumPy arrays
that share memory with the user's torch tensors or NumPy arrays. Autotuned kernels run every config
(or the one chosen), honouring ``reset_to_zero`` and ``restore_value`` between configs; heuristics
are applied; grids may be tuples or callables of the meta-parameters.
"""

from __future__ import annotations

import functools
import inspect
import os
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import triton.language as tl

from ...engine.errors import EngineSignal, KernelError, LaunchError, TilescopeError
from ...engine.grid import MAX_GRID, ExecutionOptions, Launch, execute
from ...engine.hub import Hub
from ...engine.memory import AddressTable
from ...ir import LaunchInfo, next_launch_id
from . import version
from .arguments import LiveTensors, convert_arguments, restore, snapshot, zero
from .builder import Builder, BuilderOptions
from .runtime import RUNTIME


@dataclass
class KernelInfo:
    """What tilescope needs of a user's kernel object: the JIT function and its wrappers."""

    jit: Any
    name: str
    file: str
    line: int
    heuristics: list[dict] = field(default_factory=list)
    autotuner: Any = None


def unwrap_kernel(kernel: Any) -> KernelInfo:
    """Peel ``@triton.autotune`` and ``@triton.heuristics`` off a kernel down to its JIT function."""
    autotuner = None
    heuristics: list[dict] = []
    obj = kernel
    while not isinstance(obj, version.jit_callables()):
        if isinstance(obj, version.Autotuner):
            autotuner = obj
        elif isinstance(obj, version.Heuristics):
            heuristics.append(obj.values)
        elif not hasattr(obj, "fn"):
            raise LaunchError(
                f"tilescope.trace expects a @triton.jit kernel (optionally under @triton.autotune or "
                f"@triton.heuristics); got {type(kernel).__name__}"
            )
        obj = obj.fn
    fn = version.python_function(obj)
    return KernelInfo(
        obj, fn.__name__, fn.__code__.co_filename, fn.__code__.co_firstlineno, heuristics[::-1], autotuner
    )


class Launcher:
    """``kernel[grid](...)`` for the engine; also keeps the reports of its clients."""

    def __init__(
        self,
        kernel: Any,
        *,
        clients: Any = None,
        mode: str = "batched",
        batch_size: int = 4096,
        compute_outputs: bool | None = None,
        bounds: str = "view",
        config: Any = None,
        debug: bool = True,
        sanitize_overflow: bool = False,
        progress: Callable | None = None,
        seed: int = 0,
        **client_options: Any,
    ):
        _warn_if_unsupported_triton()
        if mode not in ("batched", "serial"):
            raise ValueError(f"mode must be 'batched' or 'serial', not {mode!r}")
        self.kernel = kernel
        self.info = unwrap_kernel(kernel)
        self.mode = mode
        self.batch_size = batch_size
        self.seed = seed
        self.bounds = bounds
        self.config = config
        self.options = BuilderOptions(debug=debug, sanitize_overflow=sanitize_overflow)
        self.progress = progress
        from ...clients import make_clients

        self.clients = make_clients(clients, **client_options)
        self.compute_outputs = (
            compute_outputs
            if compute_outputs is not None
            else any(getattr(c, "needs_values", False) for c in self.clients)
            or not self.clients
            or not all(getattr(c, "addresses_only", False) for c in self.clients)
        )
        self._eager: set = set()

    # ------------------------------------------------------------------ Triton's call shape

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    def __call__(self, *args, **kwargs):
        """Calling the launcher directly calls the kernel function (for use as a decorator)."""
        return self.kernel(*args, **kwargs)

    @property
    def reports(self) -> list:
        """One report per client, covering every launch made through this launcher."""
        return [c.report() for c in self.clients]

    def run(self, *args: Any, grid: Any, **kwargs: Any) -> None:
        """Launch the kernel over ``grid`` with ``args``/``kwargs`` as Triton would."""
        info = self.info
        tuner = info.autotuner
        if tuner is None:
            self._launch_one(args, dict(kwargs), grid, None)
            return
        configs = list(tuner.configs)
        if self.config is not None:
            configs = [configs[self.config]] if isinstance(self.config, int) else [self.config]
        names = list(inspect.signature(version.python_function(info.jit)).parameters)
        bound = dict(zip(names, args, strict=False))
        bound.update(kwargs)
        saved = {n: snapshot(bound[n]) for n in getattr(tuner, "restore_value", []) if n in bound}
        for i, cfg in enumerate(configs):
            if i:
                for n, copy in saved.items():
                    restore(bound[n], copy)
            for n in getattr(tuner, "reset_to_zero", []):
                if n in bound:
                    zero(bound[n])
            meta = {**kwargs, **cfg.all_kwargs()} if hasattr(cfg, "all_kwargs") else {**kwargs, **cfg.kwargs}
            if cfg.pre_hook is not None:
                cfg.pre_hook({**bound, **cfg.kwargs})
            self._launch_one(args, meta, grid, cfg)

    # ------------------------------------------------------------------ one launch

    def _launch_one(self, args: tuple, kwargs: dict, grid: Any, config: Any) -> None:
        info = self.info
        fn = version.python_function(info.jit)
        sig = inspect.signature(fn)
        kwargs = {k: v for k, v in kwargs.items() if k in sig.parameters}
        try:
            bound = sig.bind_partial(*args, **kwargs)
        except TypeError as exc:
            raise LaunchError(
                f"kernel `{info.name}` ({info.file}:{info.line}): {exc}; its parameters are "
                f"({', '.join(sig.parameters)})"
            ) from None
        call_args = dict(bound.arguments)
        for values in info.heuristics:
            for name, rule in values.items():
                call_args[name] = rule(call_args)
        try:
            bound = sig.bind(**call_args)
        except TypeError as exc:
            raise LaunchError(
                f"kernel `{info.name}` ({info.file}:{info.line}): {exc}; its parameters are "
                f"({', '.join(sig.parameters)})"
            ) from None
        bound.apply_defaults()
        call_args = dict(bound.arguments)
        grid3 = _grid(grid, call_args, info)
        constexprs = {p.name for p in sig.parameters.values() if _is_constexpr(p.annotation)}
        launch_id = next_launch_id()
        memory = AddressTable(self.bounds)
        memory.discover = LiveTensors()
        hub = Hub(self.clients, launch_id)
        exec_opts = ExecutionOptions(
            mode=self.mode, batch_size=self.batch_size, compute_outputs=self.compute_outputs, seed=self.seed
        )
        launch = Launch(
            kernel_name=info.name,
            launch_id=launch_id,
            grid=grid3,
            memory=memory,
            hub=hub,
            sites=RUNTIME.sites,
            options=exec_opts,
            eager=self._eager,
        )
        ones = {
            n
            for n in version.specialized_to_one(info.jit)
            if type(call_args.get(n)) is int and call_args[n] == 1
        }
        arguments, kernel_args, copy_backs = convert_arguments(
            call_args, constexprs | ones, memory, f"kernel `{info.name}` ({info.file}:{info.line})"
        )
        launch_info = LaunchInfo(
            launch_id,
            info.name,
            info.file,
            info.line,
            grid3,
            tuple(arguments),
            {k: v for k, v in call_args.items() if k in constexprs},
        )
        builder = Builder(launch, self.options)
        semantic = version.EngineSemantic(builder)
        kernel_fn = RUNTIME.function(info.jit)
        hub.launch_start(launch_info)
        RUNTIME.install(launch, semantic)
        try:
            if min(grid3) > 0:

                def run_program(view):
                    RUNTIME.install(view, version.EngineSemantic(Builder(view, self.options)))
                    try:
                        kernel_fn(**kernel_args)
                    finally:
                        RUNTIME.uninstall()

                execute(launch, lambda: kernel_fn(**kernel_args), self._progress_fn(grid3), run_program)
        except TilescopeError:
            raise
        except EngineSignal:
            raise
        except Exception as exc:
            if os.environ.get("TILESCOPE_DEBUG"):
                raise  # engine developers want the full traceback
            raise _kernel_error(exc, info) from None
        finally:
            RUNTIME.uninstall()
            for copy_back in copy_backs:
                copy_back()
            hub.launch_end(launch_info)

    def _progress_fn(self, grid3):
        if self.progress is None:
            return None
        total = int(np.prod(grid3))
        return lambda done: self.progress(done, total)


@functools.cache
def _warn_if_unsupported_triton() -> None:
    """Say once per process when the installed Triton is not a release the engine was built for."""
    if not version.is_supported():
        warnings.warn(
            f"tilescope's engine targets Triton {', '.join(version.SUPPORTED)}.x; Triton "
            f"{version.TRITON_VERSION} is installed. Kernels may fail in Triton's language layer; install "
            "the version pinned in constraints.txt.",
            RuntimeWarning,
            stacklevel=3,
        )


def _is_constexpr(annotation: Any) -> bool:
    return annotation is tl.constexpr or (isinstance(annotation, str) and "constexpr" in annotation)


def _grid(grid: Any, call_args: dict, info: KernelInfo) -> tuple[int, int, int]:
    """A 3-D grid from a tuple or a callable of the meta-parameters, checked against the GPU's limits."""
    if callable(grid):
        grid = grid(call_args)
    if isinstance(grid, int):
        grid = (grid,)
    try:
        dims = tuple(int(g) for g in grid)
    except TypeError:
        raise LaunchError(
            f"kernel `{info.name}`: grid must be a tuple of 1 to 3 ints or a callable returning "
            f"one; got {grid!r}"
        ) from None
    if not 1 <= len(dims) <= 3:
        raise LaunchError(f"kernel `{info.name}`: grid must have 1 to 3 dimensions, got {len(dims)}")
    dims = dims + (1,) * (3 - len(dims))
    for axis, (n, limit) in enumerate(zip(dims, MAX_GRID, strict=False)):
        if n < 0:
            raise LaunchError(f"kernel `{info.name}`: grid dimension {axis} is negative ({n})")
        if n > limit:
            raise LaunchError(
                f"kernel `{info.name}`: grid dimension {axis} is {n}, past the GPU's limit of "
                f"{limit}; a real launch would fail"
            )
    return dims


def _kernel_error(exc: Exception, info: KernelInfo) -> KernelError:
    """A Python error raised while running kernel code, placed at the user's line."""
    site = None
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        if RUNTIME.sites.is_user(frame.f_code):
            site = RUNTIME.sites.frame_site(frame)
    message = f"{type(exc).__name__}: {exc}"
    return KernelError(message, kernel=info.name, site=site)


def trace(kernel: Any = None, *, clients: Any = None, **options: Any) -> Any:
    """Run a Triton kernel on the CPU engine: ``tilescope.trace(kernel)[grid](*args, **meta)``.

    Also a decorator, above or below ``@triton.jit``: ``@tilescope.trace`` or
    ``@tilescope.trace(clients="sanitizer")``. Options: ``clients`` (a name, a list of names or
    client objects; default from ``TILESCOPE_CLIENTS``), ``mode`` ("batched" or "serial"),
    ``batch_size``, ``compute_outputs`` (False: a sanitizer-only run computes addresses and masks
    only), ``bounds`` ("view" or "storage"), ``config`` (autotune config index), ``debug``
    (device_assert fires; default True), ``sanitize_overflow`` (Triton's debug-mode overflow checks),
    ``seed`` (the schedule of concurrent mode, used when programs wait for each other).
    """
    if kernel is None:
        return lambda k: trace(k, clients=clients, **options)
    if isinstance(kernel, Launcher):
        kernel = kernel.kernel
    if accepts(kernel) == "function":
        # below @triton.jit: mark the function; Triton's launch of it is routed to the engine
        kernel.__tilescope_trace__ = {"clients": clients, **options}
        _route_marked_kernels()
        return kernel
    if not accepts(kernel):
        raise LaunchError(f"tilescope.trace expects a @triton.jit kernel, got {type(kernel).__name__}")
    return Launcher(kernel, clients=clients, **options)


def accepts(kernel: Any) -> str | None:
    """How this frontend takes ``kernel``: "kernel" (a Triton kernel object), "function" (a plain
    function decorated below ``@triton.jit``), or None (not a Triton kernel)."""
    if isinstance(kernel, (Launcher, version.Autotuner, version.Heuristics, *version.jit_callables())):
        return "kernel"
    if inspect.isfunction(kernel):
        return "function"
    return None


_routed: dict[Any, Launcher] = {}


def _route_marked_kernels() -> None:
    """Make ``kernel[grid](...)`` run on the engine for functions marked by ``@tilescope.trace``."""
    jit_cls = version.JITFunction
    if getattr(jit_cls.run, "__tilescope_routed__", False):
        return
    original = jit_cls.run

    def run(self, *args, grid, warmup, **kwargs):
        marker = getattr(version.python_function(self), "__tilescope_trace__", None)
        if marker is None or warmup:
            return original(self, *args, grid=grid, warmup=warmup, **kwargs)
        launcher = _routed.get(self)
        if launcher is None:
            launcher = _routed[self] = Launcher(self, **marker)
        return launcher.run(*args, grid=grid, **kwargs)

    run.__tilescope_routed__ = True
    jit_cls.run = run


__all__ = ["trace", "accepts", "Launcher", "unwrap_kernel", "KernelInfo"]
