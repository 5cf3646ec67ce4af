"""Triton's launch conventions on the engine: ``kernel[grid](*args, **meta)``.

``tilescope.trace(kernel)[grid](*args, **meta)`` runs every program of the launch on NumPy arrays
that share memory with the user's torch tensors or NumPy arrays. Autotuned kernels run every config
(or the one chosen), honouring ``reset_to_zero`` and ``restore_value`` between configs; heuristics
are applied; grids may be tuples or callables of the meta-parameters. Everything that is not about
Triton (grid limits, host memory, clients, execution, errors) is the engine's
:func:`~tilescope.engine.launch.run_launch`.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import triton.language as tl

from ...engine.errors import LaunchError, OptionError
from ...engine.grid import ExecutionOptions
from ...engine.host import restore, snapshot, zero
from ...engine.launch import KernelRef, outputs_needed, run_launch
from ...engine.numerics import DEFAULT_SFU, SFU_MODES, Numerics
from .. import gluon
from ..launcher import KernelLauncher
from . import GPU_LAYOUTS, OPTIONS, check_options, version
from .arguments import bind
from .builder import Builder, BuilderOptions
from .handle import LaunchedKernel, compiled_figures, compiled_reduce_layouts
from .runtime import RUNTIME


@dataclass(repr=False, eq=False)
class KernelInfo:
    """What tilescope needs of a user's kernel object: the JIT function and its wrappers."""

    jit: Any
    name: str
    file: str
    line: int
    heuristics: list[dict] = field(default_factory=list)
    autotuner: Any = None

    @functools.cached_property
    def signature(self) -> inspect.Signature:
        """The signature of the kernel's Python function (computed once per launcher, not per launch)."""
        return inspect.signature(version.python_function(self.jit))

    @property
    def ref(self) -> KernelRef:
        """The kernel in the engine's terms."""
        return KernelRef(self.name, self.file, self.line)


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


class Launcher(KernelLauncher):
    """``kernel[grid](...)`` for the engine; also keeps the reports of its clients."""

    def __init__(
        self,
        kernel: Any,
        *,
        clients: list,
        options: ExecutionOptions,
        session: Any,
        config: Any = None,
        autotune: str = "first",
        debug: bool = True,
        sanitize_overflow: bool = False,
        gpu_compiler: str | None = None,
        gpu_layouts: str = "model",
        gpu_sfu: str = DEFAULT_SFU,
    ):
        _warn_if_unsupported_triton()
        try:
            check_options({"config": config, "autotune": autotune, "debug": debug,
                           "sanitize_overflow": sanitize_overflow})  # fmt: skip
        except ValueError as exc:
            raise OptionError(str(exc)) from None
        super().__init__(kernel, clients=clients, options=options, session=session)
        self.autotune = autotune
        self.info = unwrap_kernel(kernel)
        where = f"kernel `{self.info.name}` ({self.info.file}:{self.info.line})"
        if config is not None and self.info.autotuner is None:
            raise OptionError(f"{where}: config= picks one of an autotuned kernel's configs; it has no "
                              "@triton.autotune")  # fmt: skip
        count = len(self.info.autotuner.configs) if self.info.autotuner is not None else 0
        if isinstance(config, int) and not -count <= config < count:
            raise OptionError(f"{where}: config={config}, but it has {count} autotune configs "
                              f"(0 to {count - 1})")  # fmt: skip
        self.config = config
        self.builder_options = BuilderOptions(debug=debug, sanitize_overflow=sanitize_overflow)
        try:
            self.reduction_order = version.reduction_order(gpu_compiler or version.TRITON_VERSION)
            self.libdevice = version.libdevice_release(gpu_compiler or version.TRITON_VERSION)
        except ValueError as exc:
            raise LaunchError(f"tilescope.trace: {exc}") from None
        if gpu_layouts not in GPU_LAYOUTS:
            choices = ", ".join(map(repr, GPU_LAYOUTS))
            raise LaunchError(f"tilescope.trace: gpu_layouts must be one of {choices}; got {gpu_layouts!r}")
        self.gpu_layouts = gpu_layouts
        if gpu_sfu not in SFU_MODES:
            choices = ", ".join(map(repr, SFU_MODES))
            raise LaunchError(f"tilescope.trace: gpu_sfu must be one of {choices}; got {gpu_sfu!r}")
        self.gpu_sfu = gpu_sfu
        # sites a demand-driven run found it must compute (values feeding addresses or control flow):
        # shared by every launcher of this kernel, so a later launch skips the replays that found them
        self._eager: set = RUNTIME.eager_sites(self.info.jit)
        self._copy_sites: set = RUNTIME.copy_sites(self.info.jit)
        self._serial_loops: set = RUNTIME.serial_loops(self.info.jit)

    @property
    def name(self) -> str:
        """The kernel's name."""
        return self.info.name

    @property
    def compute_outputs(self) -> bool:
        """Whether launches compute real outputs (False: a demand-driven, addresses-only run)."""
        return outputs_needed(self.clients, self.options.compute_outputs)

    # ------------------------------------------------------------------ Triton's call shape

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    def __call__(self, *args, **kwargs):
        """Calling the launcher directly calls the kernel function (for use as a decorator)."""
        return self.kernel(*args, **kwargs)

    def run(self, *args: Any, grid: Any, **kwargs: Any) -> LaunchedKernel:
        """Launch the kernel over ``grid`` with ``args``/``kwargs`` as Triton would.

        Returns what Triton's launch returns, a compiled-kernel handle: ``handle[grid](*args)``
        launches the same kernel again (libraries keep and reuse it).
        """
        info = self.info
        tuner = info.autotuner
        if tuner is None:
            return self._launch_one(args, dict(kwargs), grid)
        names = list(info.signature.parameters)
        bound = dict(zip(names, args, strict=False))
        bound.update(kwargs)
        configs = self.configs(tuner, bound)
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
            handle = self._launch_one(args, meta, grid)
        tuner.best_config = configs[0]  # libraries read it right after a launch
        return handle

    def configs(self, tuner: Any, bound: dict) -> list:
        """The autotune configs a CPU launch runs (``bound``: the call's parameters): every one with
        ``autotune="all"`` (to sanitize each); else the one ``config=`` names (an index or a
        ``triton.Config``), else the one a GPU run's cached autotuning chose for this tuning key
        (:mod:`.tuned`), else the kernel's first. On a CPU, timing configs means nothing."""
        configs = list(tuner.configs)
        if self.autotune == "all":
            return configs
        if self.config is not None:
            return [configs[self.config]] if isinstance(self.config, int) else [self.config]
        if len(configs) == 1:
            return configs
        from . import tuned  # on first use: most kernels are not autotuned over several configs

        cached = tuned.cached_config(tuner, self.info.name, bound)
        return [cached] if cached is not None else configs[:1]

    # ------------------------------------------------------------------ one launch

    def _call_args(self, args: tuple, kwargs: dict) -> tuple[dict, dict]:
        """The kernel's parameters bound to the call's arguments (heuristics applied), and the launch
        options (``num_warps`` and the like) the call, a config or a heuristic set."""
        info = self.info
        sig = info.signature
        options = version.launch_option_names()
        launch_options = {k: v for k, v in kwargs.items() if k in options and k not in sig.parameters}
        unknown = [k for k in kwargs if k not in sig.parameters and k not in options]
        if unknown:
            plural = "s" if len(unknown) > 1 else ""
            raise LaunchError(
                f"kernel `{info.name}` ({info.file}:{info.line}): keyword argument{plural} "
                f"{', '.join(map(repr, unknown))} specified but unrecognised (Triton raises too); its "
                f"parameters are ({', '.join(sig.parameters)}), its launch options "
                f"{', '.join(sorted(options))}"
            )
        kwargs = {k: v for k, v in kwargs.items() if k in sig.parameters}
        try:
            call_args = dict(sig.bind_partial(*args, **kwargs).arguments)
            for values in info.heuristics:
                for name, rule in values.items():
                    value = rule({**call_args, **launch_options})
                    if name in sig.parameters:
                        call_args[name] = value
                    else:
                        launch_options[name] = value
            bound = sig.bind(**call_args)
        except TypeError as exc:
            raise LaunchError(
                f"kernel `{info.name}` ({info.file}:{info.line}): {exc}; its parameters are "
                f"({', '.join(sig.parameters)})"
            ) from None
        bound.apply_defaults()
        return dict(bound.arguments), launch_options

    def warmup(self, *args: Any, grid: Any = None, **kwargs: Any) -> LaunchedKernel:
        """What ``kernel.warmup(...)`` (Triton's ahead-of-time compile) returns: a handle, nothing run."""
        call_args, launch_options = self._call_args(args, kwargs)
        return LaunchedKernel(self, call_args, launch_options)

    def _launch_one(self, args: tuple, kwargs: dict, grid: Any) -> LaunchedKernel:
        info = self.info
        call_args, launch_options = self._call_args(args, kwargs)
        sig = info.signature
        constexprs = {p.name for p in sig.parameters.values() if _is_constexpr(p.annotation)}
        if callable(grid):
            grid = grid(call_args)
        ones = {
            n
            for n in version.specialized_to_one(info.jit)
            if type(call_args.get(n)) is int and call_args[n] == 1
        }
        kernel_fn = RUNTIME.function(info.jit)
        make_semantic = self._semantic_factory({**call_args, **launch_options})
        handle = LaunchedKernel(self, call_args, launch_options)

        def run_batch(launch, kernel_args):
            try:  # installed inside the try: a Ctrl-C right after it must still uninstall
                RUNTIME.install(launch, make_semantic(launch))
                kernel_fn(**kernel_args)
            finally:
                RUNTIME.uninstall()

        run_launch(
            session=self.session,
            kernel=info.ref,
            grid=grid,
            clients=self.clients,
            options=self.options,
            sites=RUNTIME.sites,
            bind=lambda host: bind(call_args, constexprs | ones, host),
            run_batch=run_batch,
            run_program=run_batch,
            meta={**{k: v for k, v in call_args.items() if k in constexprs}, **launch_options},
            frontend="triton",
            eager=self._eager,
            progress=self.progress,
            copy_sites=self._copy_sites,
            serial_loops=self._serial_loops,
            resources=lambda gpu: compiled_figures(handle, gpu),
            numerics=self.numerics(launch_options, handle),
        )
        return handle

    def _semantic_factory(self, settings: dict) -> Callable[[Any], Any]:
        """What binds the kernel's builtins for one batch: Triton's semantic, or Gluon's for a
        ``@gluon.jit`` kernel (:mod:`tilescope.frontends.gluon`; ``settings``: the launch options
        and parameters, where ``num_warps`` may be either)."""
        opts = self.builder_options
        if gluon.is_gluon(self.info.jit):
            warps = int(version.unwrap(settings.get("num_warps")) or 4)
            return lambda launch: gluon.make_semantic(launch, opts.debug, opts.sanitize_overflow, warps)
        return lambda launch: version.EngineSemantic(Builder(launch, opts))

    def numerics(self, launch_options: dict, handle: LaunchedKernel | None = None) -> Numerics:
        """The floating point of a launch with these launch options, as Triton's compiler generates it
        (with ``gpu_layouts="compiled"``, the reductions' layouts from ``handle``'s offline compile)."""
        gpu = self.options.numerics == "gpu"
        compiled = gpu and self.gpu_layouts == "compiled" and handle is not None
        return Numerics(
            mode=self.options.numerics,
            fp_fusion=version.fp_fusion(launch_options.get("enable_fp_fusion")),
            num_warps=int(launch_options.get("num_warps") or 4),
            per_thread=self.reduction_order,
            sfu=self.gpu_sfu,
            libdevice=self.libdevice,
            reduce_layouts=compiled_reduce_layouts(handle) if compiled else {},
        )


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


def accepts(kernel: Any) -> str | None:
    """How this frontend takes ``kernel``: "kernel" (a Triton kernel object), "function" (a plain
    function decorated below ``@triton.jit``), or None (not a Triton kernel)."""
    if isinstance(kernel, (Launcher, version.Autotuner, version.Heuristics, *version.jit_callables())):
        return "kernel"
    if inspect.isfunction(kernel):
        return "function"
    return None


def install_route() -> None:
    """Route Triton's own launches (``kernel[grid](...)``) through the current session, once per process.

    One patch of ``JITFunction.run`` (and of ``Autotuner.run``/``Heuristics.run``, whose GPU
    autotuning must not run first while every launch is intercepted): the session says whether a
    launch goes to the engine (an interception is active, or the kernel was marked with
    ``@tilescope.trace`` below ``@triton.jit``); otherwise Triton runs it as usual.
    """
    from ...session import current

    for cls in (version.JITFunction, version.Autotuner, version.Heuristics):
        original = cls.__dict__["run"]
        if getattr(original, "__tilescope_routed__", False):
            continue
        jit = cls is version.JITFunction

        def run(kernel, *args, __original=original, __jit=jit, **kwargs):
            session = current()
            if __jit or session.intercepting:
                launcher = session.route(kernel, version.python_function(kernel) if __jit else None)
                if launcher is not None:
                    grid = kwargs.pop("grid", None)
                    if kwargs.pop("warmup", False):
                        return launcher.warmup(*args, grid=grid, **kwargs)  # nothing to compile here
                    return launcher.run(*args, grid=grid, **kwargs)
            return __original(kernel, *args, **kwargs)

        run.__tilescope_routed__ = True
        run.__tilescope_original__ = original
        run.__doc__ = original.__doc__
        cls.run = run


__all__ = ["Launcher", "unwrap_kernel", "KernelInfo", "accepts", "install_route", "OPTIONS"]
