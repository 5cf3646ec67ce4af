"""TileLang kernels on the engine: a PrimFunc (``@T.prim_func``) compiled to a callable like
``tilelang.compile(func, out_idx=...)`` returns, run by interpreting its statements.

``kernel(*inputs)`` takes the PrimFunc's tensor arguments (NumPy arrays or CPU torch tensors) in
order, leaving out those listed in ``out_idx``: those the launch allocates (zeros) and returns,
one tensor or a list, as TileLang's JIT kernels do. Symbolic shapes (``T.dynamic``, ``T.symbolic``)
take their values from the tensors passed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...engine import dtypes
from ...engine import host as host_memory
from ...engine.errors import LaunchError
from ...engine.grid import ExecutionOptions
from ...engine.launch import KernelRef, run_launch
from ...engine.numerics import Numerics
from ...engine.values import Value
from ...ir import Node
from ..launcher import KernelLauncher
from ..running import Context, running
from . import interpreter
from .buffers import GlobalBuffer, engine_dtype
from .exprs import Frame, key
from .spans import SpanSites
from .tir import tirx

#: TileLang's compiler picks its own reduction layouts and contractions, which are not modelled (the
#: "gpu" numerics follow Triton's): arithmetic is computed correctly rounded
NUMERICS = Numerics(mode="ideal")


def _first_span(func: tirx.PrimFunc) -> tuple[str, int]:
    from tilelang.ir import get_stmt_span

    stmt = func.body
    while stmt is not None:
        span = get_stmt_span(stmt)
        if span is not None:
            return span.source_name.name, int(span.line)
        stmt = getattr(stmt, "block", None) or getattr(stmt, "body", None)
        if isinstance(stmt, tirx.SeqStmt):
            stmt = stmt.seq[0]
    return "<tilelang>", 0


class Kernel:
    """A TileLang PrimFunc with its output indices: ``kernel(*inputs)`` runs it on the engine."""

    def __init__(self, func: tirx.PrimFunc, out_idx: int | Sequence[int] | None = None):
        if not isinstance(func, tirx.PrimFunc):
            raise TypeError(f"a TileLang kernel is a T.prim_func PrimFunc, not {type(func).__name__}")
        self.func = func
        n = len(func.params)
        wanted = [] if out_idx is None else [out_idx] if isinstance(out_idx, int) else list(out_idx)
        self.out_idx = sorted({i % n for i in wanted})
        symbol = func.attrs.get("global_symbol") if func.attrs is not None else None
        self.name = str(symbol) if symbol is not None else "main"
        self.file, self.line = _first_span(func)
        self._plain: Any = None

    def __call__(self, *args: Any) -> Any:
        from ...session import current

        routed = current().route(self, None)
        if routed is None:
            if self._plain is None:
                from ...tracing import trace

                self._plain = trace(self)
            routed = self._plain
        return routed(*args)


def compile(func: tirx.PrimFunc, out_idx: int | Sequence[int] | None = None, **options: Any) -> Kernel:  # noqa: A001
    """``tilelang.compile(func, out_idx=...)`` for the engine (TileLang's target, backend and pass
    options are accepted and have no effect on the CPU)."""
    return Kernel(func, out_idx)


def _outputs_like(args: tuple) -> Callable[[tuple, Any], Any]:
    """How to allocate an output: a torch tensor when the inputs are torch tensors, else NumPy."""
    if any(type(a).__module__.startswith("torch") for a in args):
        import torch

        special = {
            dtypes.BF16: torch.bfloat16,
            dtypes.FP8E4M3FN: torch.float8_e4m3fn,
            dtypes.FP8E5M2: torch.float8_e5m2,
        }

        def make(shape: tuple, dtype: Any) -> Any:
            if dtype in special:
                return torch.zeros(shape, dtype=special[dtype])
            return torch.from_numpy(np.zeros(shape, dtype.storage))

        return make
    return lambda shape, dtype: np.zeros(shape, dtype.storage)


class Launcher(KernelLauncher):
    """``kernel(*inputs)`` on the engine for a TileLang kernel; keeps its clients' reports."""

    def __init__(self, kernel: Kernel, *, clients: list, options: ExecutionOptions, session: Any):
        super().__init__(kernel, clients=clients, options=options, session=session)
        self.sites = SpanSites(kernel.name)
        self._eager: set = set()

    @property
    def name(self) -> str:
        """The kernel's name."""
        return self.kernel.name

    def __call__(self, *args: Any) -> Any:
        return self.run(args)

    def run(self, args: tuple) -> Any:
        """Launch the kernel with ``args`` (its inputs); returns the outputs ``out_idx`` names."""
        kernel, func = self.kernel, self.kernel.func
        ref = KernelRef(kernel.name, kernel.file, kernel.line)
        params = list(func.params)
        inputs = [i for i in range(len(params)) if i not in kernel.out_idx]
        if len(args) != len(inputs):
            raise LaunchError(
                f"{ref}: takes {len(inputs)} input(s) "
                f"({', '.join(_param_name(func, params[i]) for i in inputs)}), got {len(args)}"
            )
        env: dict = {}  # the scalar arguments' and symbolic sizes' values, shared by every program
        full: list[Any] = [None] * len(params)
        for i, a in zip(inputs, args, strict=True):
            full[i] = a
        sizes = _bind_shapes(ref, func, params, full, env)
        make = _outputs_like(args)
        for i in kernel.out_idx:
            buf = func.buffer_map[params[i]]
            full[i] = make(tuple(host_int(sizes, n) for n in buf.shape), engine_dtype(buf.dtype))

        def bind(host: host_memory.HostMemory) -> dict:
            buffers = {}
            for i, (param, a) in enumerate(zip(params, full, strict=True)):
                buf = func.buffer_map.get(param)
                if buf is None:
                    continue
                view, elem = host.tensor(buf.name, a, i)
                info = view.info
                base = Value(
                    np.array([info.address], np.uint64),
                    dtypes.pointer(elem),
                    Node(f"argument {buf.name}", None),
                    view.vid,
                )
                buffers[buf.data.__chandle__()] = GlobalBuffer(
                    buf.name, base, tuple(info.shape), tuple(info.strides), elem
                )
            return buffers

        def run_batch(launch: Any, buffers: dict) -> None:
            batch = Frame(launch, env=dict(env), buffers=dict(buffers))
            with running(Context(launch)):
                interpreter.run(batch, func.body, self.sites)
            self.sites.forget()

        grid = interpreter.grid(func, lambda extent: host_int(sizes, extent))
        run_launch(
            session=self.session, kernel=ref, grid=grid, clients=self.clients, options=self.options,
            sites=self.sites, bind=bind, run_batch=run_batch, run_program=run_batch, frontend="tilelang",
            eager=self._eager, progress=self.progress, numerics=NUMERICS,
        )  # fmt: skip
        outs = [full[i] for i in kernel.out_idx]
        return None if not outs else outs[0] if len(outs) == 1 else outs


def _param_name(func: tirx.PrimFunc, param: tirx.Var) -> str:
    buf = func.buffer_map.get(param)
    return buf.name if buf is not None else param.name


def host_int(sizes: dict, expr: Any) -> int:
    """A shape expression (``T.ceildiv(M, 64)`` over symbolic sizes) as an int, with the sizes the
    inputs gave substituted and TVM's own simplifier folding it; a clear error when one is missing."""
    from tvm import arith
    from tvm.tirx import stmt_functor

    if isinstance(expr, int):
        return expr
    folded = arith.Analyzer().simplify(stmt_functor.substitute(expr, sizes)) if sizes else expr
    if not isinstance(folded, tirx.IntImm):
        raise LaunchError(f"size {expr} of a TileLang kernel depends on values no input gives")
    return int(folded.value)


def _bind_shapes(ref: KernelRef, func: tirx.PrimFunc, params: list, full: list, env: dict) -> dict:
    """Check each tensor input against its ``T.Tensor`` declaration; bind symbolic shapes and scalar
    arguments (as values every program shares); the symbolic sizes, variable -> ``IntImm``."""
    from ...engine import ops

    sizes: dict = {}
    for param, a in zip(params, full, strict=True):
        if a is None:
            continue
        buf = func.buffer_map.get(param)
        name = _param_name(func, param)
        if buf is None:
            env[key(param)] = ops.constant(a, engine_dtype(param.dtype))
            if isinstance(a, int):
                sizes[param] = tirx.IntImm(str(param.dtype), a)
            continue
        if not host_memory.is_tensor(a):
            raise LaunchError(f"{ref}, argument {name}: expected a tensor (T.Tensor), got {type(a).__name__}")
        shape = tuple(a.shape)
        if len(shape) != len(buf.shape):
            raise LaunchError(
                f"{ref}, argument {name}: expected {len(buf.shape)} dimensions, got shape {list(shape)}"
            )
        want = engine_dtype(buf.dtype)
        got = host_memory.element_type(a)
        if got != want:
            raise LaunchError(f"{ref}, argument {name}: expected dtype {buf.dtype}, got {got.name}")
        for d, (n, size) in enumerate(zip(buf.shape, shape, strict=True)):
            if isinstance(n, tirx.IntImm):
                if int(n.value) != size:
                    raise LaunchError(
                        f"{ref}, argument {name}: dimension {d} must be {int(n.value)} (T.Tensor shape "
                        f"{[str(x) for x in buf.shape]}), got shape {list(shape)}"
                    )
            elif isinstance(n, tirx.Var):
                env[key(n)] = ops.constant(size, engine_dtype(n.dtype))
                sizes[n] = tirx.IntImm(str(n.dtype), size)
    return sizes
