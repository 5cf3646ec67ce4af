"""One ``pallas_call`` launched on the engine: its grid, its block specs, its operands and outputs.

The grid's *parallel* axes are the engine's programs (at most three); its *sequential* axes
(``"arbitrary"`` in a TPU ``dimension_semantics``) run in order inside each program, as a loop the
engine knows of, so that revisiting an output block along them (a matmul's k axis) is ordered and
not a race. Without ``dimension_semantics`` every axis is parallel, as on a GPU (Pallas-Triton),
where grid steps run concurrently. Each step evaluates every ``BlockSpec``'s index map (a jaxpr
too, at the user's lambda) to place the step's blocks, then runs the kernel's jaxpr.

Outputs start as Pallas interpret mode's "uninitialized" arrays (NaN, or the integer minimum), or
as a copy of the aliased input (``input_output_aliases``), whose refs then point at the output.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from jax._src import source_info_util
from jax._src.pallas import core as pallas_core

from ...engine import dtypes, ops
from ...engine.errors import LaunchError
from ...engine.grid import ExecutionOptions
from ...engine.launch import KernelRef, run_launch
from ...engine.numerics import Numerics
from ...engine.ops import Op
from ...engine.values import Value
from ...ir import Node, Site
from ..launcher import KernelLauncher
from ..running import Context, running
from ..values import apply_broadcast
from . import interpret, refs
from .rules import engine_dtype

#: Pallas's compilers (Mosaic, Triton) choose their own reduction orders and contractions, which are
#: not modelled: arithmetic is correctly rounded
NUMERICS = Numerics(mode="ideal")


@dataclass(frozen=True)
class PallasCall:
    """The parameters of one ``pallas_call`` equation: what the engine needs to launch it."""

    jaxpr: Any
    grid_mapping: Any
    input_output_aliases: tuple
    compiler_params: Any
    name: str
    site: Any

    @classmethod
    def of(cls, eqn: Any) -> PallasCall:
        """The call an equation of the ``pallas_call`` primitive makes."""
        return cls.from_params(eqn.params, eqn.source_info.traceback)

    @classmethod
    def from_params(cls, p: dict, traceback: Any) -> PallasCall:
        """The call of a ``pallas_call`` primitive's parameters, made where ``traceback`` says."""
        return cls(p["jaxpr"], p["grid_mapping"], tuple(p["input_output_aliases"]), p.get("compiler_params"),
                   p.get("name") or "", interpret.traceback_site(traceback))  # fmt: skip

    @property
    def kernel(self) -> KernelRef:
        """The kernel's name, file and first line (from the jaxpr's debug info)."""
        info = self.jaxpr.debug_info
        found = _source(info)
        if found:
            return KernelRef(self.name or found[0], found[1], found[2])
        return KernelRef(self.name or getattr(info, "func_name", "kernel"), "", 0)

    def parameter_names(self) -> list[str]:
        """The kernel function's parameter names (``x_ref``, ...), one per jaxpr input."""
        names = list(getattr(self.jaxpr.debug_info, "arg_names", None) or ())
        n = len(self.jaxpr.invars)
        if len(names) != n or not all(names):
            return [f"arg{i}" for i in range(n)]
        return [re.sub(r"[^\w]", "", s) or f"arg{i}" for i, s in enumerate(names)]

    def sequential_axes(self) -> tuple[bool, ...]:
        """Per grid axis, whether it runs in order (``"arbitrary"``) rather than in parallel."""
        grid = self.grid_mapping.grid
        semantics = _dimension_semantics(self.compiler_params)
        if semantics is None:
            return (False,) * len(grid)
        if len(semantics) != len(grid):
            raise ValueError(
                f"dimension_semantics {semantics} has {len(semantics)} entries for a grid of {grid}"
            )
        return tuple(str(getattr(s, "value", s)).lower() in ("arbitrary", "sequential") for s in semantics)


def _source(info: Any) -> tuple[str, str, int] | None:
    """(function, file, line) of a traced function, from its jaxpr's debug info."""
    found = re.match(r"(\S+) at (.+):(\d+)$", getattr(info, "func_src_info", "") or "")
    return (found.group(1), found.group(2), int(found.group(3))) if found else None


def _function_site(info: Any) -> Site | None:
    """The line where a traced function (a BlockSpec's index map) is written."""
    found = _source(info)
    if found is None or not source_info_util.is_user_filename(found[1]):
        return None  # Pallas's own default index map: the pallas_call line says more
    return Site(found[1], found[2], 0, found[2], 0, found[0])


def _dimension_semantics(params: Any) -> tuple | None:
    """``dimension_semantics`` from whichever backend's compiler params the call carries."""
    if params is None:
        return None
    candidates = params.values() if isinstance(params, dict) else [params]
    for c in candidates:
        found = getattr(c, "dimension_semantics", None)
        if found is not None:
            return tuple(found)
    return None


def _uninitialized(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "f" or dtype.name == "bfloat16":
        return np.full(shape, np.nan, dtype)
    if dtype.kind == "b":
        return np.zeros(shape, dtype)
    return np.full(shape, np.iinfo(dtype).min, dtype)


def _block_dims(bm: Any, where: str) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """A block mapping's block size per array dimension and which dimensions are squeezed."""
    sizes, squeezed = [], []
    for dim in bm.block_shape:
        if isinstance(dim, pallas_core.Squeezed) or dim is None:
            sizes.append(1)
            squeezed.append(True)
        elif isinstance(dim, pallas_core.Blocked):
            sizes.append(int(dim.block_size))
            squeezed.append(False)
        else:
            raise NotImplementedError(
                f"{where}: block dimension {dim} ({type(dim).__name__}); the Pallas frontend supports "
                "blocked and squeezed (None) dimensions"
            )
    if bm.transforms:
        raise NotImplementedError(f"{where}: block transforms {bm.transforms}")
    return tuple(sizes), tuple(squeezed)


class CallLauncher(KernelLauncher):
    """Runs one ``pallas_call`` on the engine: ``run(operands)`` returns its outputs as NumPy arrays."""

    def __init__(self, kernel: PallasCall, *, clients: list, options: ExecutionOptions, session: Any):
        super().__init__(kernel, clients=clients, options=options, session=session)

    @property
    def name(self) -> str:
        """The kernel's name."""
        return self.kernel.kernel.name

    def run(self, operands: list[np.ndarray]) -> list[np.ndarray]:
        """Launch the call on ``operands`` (scalar prefetch first, then the inputs); its outputs."""
        call = self.kernel
        gm = call.grid_mapping
        if gm.num_dynamic_grid_bounds or gm.vmapped_dims:
            raise NotImplementedError(f"{call.kernel}: dynamic grid bounds and vmapped pallas_calls")
        grid = tuple(int(g) for g in gm.grid)
        sequential = call.sequential_axes()
        parallel = [a for a, s in enumerate(sequential) if not s]
        if len(parallel) > 3:
            raise NotImplementedError(
                f"{call.kernel}: {len(parallel)} parallel grid axes; the engine runs at most 3 (mark others "
                "'arbitrary' in dimension_semantics)"
            )
        engine_grid = tuple(grid[a] for a in parallel) or (1,)
        names = call.parameter_names()
        n_scalar, n_in, n_out = gm.num_index_operands, gm.num_inputs, gm.num_outputs
        for name, dtype in zip(names, [*(a.dtype for a in operands), *(a.dtype for a in gm.out_shapes)],
                               strict=False):  # fmt: skip
            try:
                engine_dtype(dtype)
            except TypeError:
                raise LaunchError(
                    f"{call.kernel}: `{name}` is {np.dtype(dtype).name}, a dtype tilescope's Pallas frontend "
                    "does not support (bool, integers, fp16, bf16, fp32, fp64)"
                ) from None
        aliases = {o: i for i, o in call.input_output_aliases}
        outputs = [
            np.array(operands[aliases[k]]) if k in aliases else _uninitialized(a.shape, a.dtype)
            for k, a in enumerate(gm.out_shapes)
        ]
        arrays = [np.array(a) for a in operands]  # writable copies: a kernel may write its input refs
        for k, i in aliases.items():
            arrays[i] = outputs[k]
        # scratch buffers (VMEM/SMEM scratch_shapes): one per engine program, kept across its sequential steps
        scratch_vars = call.jaxpr.invars[len(call.jaxpr.invars) - gm.num_scratch_operands :]
        programs = int(np.prod(engine_grid))
        scratch = [
            _uninitialized((programs, *v.aval.inner_aval.shape), v.aval.inner_aval.dtype)
            for v in scratch_vars
        ]

        def bind(host: Any) -> list:
            bound = []
            for i, arr in enumerate([*arrays, *outputs, *scratch]):
                view, elem = host.tensor(names[i] if i < len(names) else f"arg{i}", arr, i)
                info = view.info
                base = Value(np.array([info.address], np.uint64), dtypes.pointer(elem),
                             Node(f"argument {info.name}", None), view.vid)  # fmt: skip
                bound.append((base, tuple(info.shape), tuple(info.strides)))
            return bound

        def run_batch(launch: Any, bound: list) -> None:
            with running(Context(launch)):
                interpret.SITES.set(call.site)
                axes = [parallel.index(a) if a in parallel else None for a in range(len(grid))]
                steps = list(
                    itertools.product(
                        *(range(g) if seq else (None,) for g, seq in zip(grid, sequential, strict=True))
                    )
                )
                frame = launch.loop_enter(launch.site(), key="grid") if len(steps) > 1 else None
                try:
                    for k, step in enumerate(steps):
                        if frame is not None:
                            launch.loop_iterate(frame, k)
                        here = interpret.Grid(step, grid, axes, kernel=call.kernel.name)
                        self._step(launch, bound, here, engine_grid, parallel, n_scalar, n_in, n_out, names)
                finally:
                    if frame is not None:
                        launch.loop_exit(frame)
            interpret.SITES.forget()

        kernel = call.kernel
        run_launch(
            session=self.session, kernel=kernel, grid=engine_grid, clients=self.clients, options=self.options,
            sites=interpret.SITES, bind=bind, run_batch=run_batch, run_program=run_batch, frontend="pallas",
            eager=self._eager, progress=self.progress, numerics=NUMERICS,
        )  # fmt: skip
        return outputs

    def _step(self, launch: Any, bound: list, step: interpret.Grid, engine_grid: tuple, parallel: list,
              n_scalar: int, n_in: int, n_out: int, names: list) -> None:  # fmt: skip
        """One grid step for the running batch: place every block, then run the kernel's jaxpr."""
        call = self.kernel
        gm = call.grid_mapping
        grid = step.sizes
        scalars = [refs.whole(names[i], *bound[i]) for i in range(n_scalar)]
        blocks = []
        for j, bm in enumerate(gm.block_mappings):
            base, shape, strides = bound[n_scalar + j]
            where = f"`{names[n_scalar + j]}` ({bm.origin})"
            extent, squeezed = _block_dims(bm, where)
            index_map = bm.index_map_jaxpr
            spec = _function_site(index_map.jaxpr.debug_info) or call.site  # the BlockSpec's index map
            interpret.SITES.set(spec)
            grid_ids = [step.program_id(a) for a in range(len(grid))]
            indices = interpret.evaluate(index_map.jaxpr, index_map.consts, [*grid_ids, *scalars], step)
            interpret.SITES.set(spec)
            origin = tuple(
                idx if sq else refs.scale(idx, e)
                for idx, e, sq in zip(indices, extent, squeezed, strict=True)
            )
            blocks.append(refs.block(names[n_scalar + j], base, shape, strides, origin, extent, squeezed))
        interpret.SITES.set(call.site)
        scratch = []
        first = n_scalar + n_in + n_out
        for k in range(gm.num_scratch_operands):
            base, shape, strides = bound[first + k]
            own = _own_slice(launch, base, strides[0], engine_grid, parallel)
            scratch.append(refs.whole(names[first + k], own, shape[1:], strides[1:]))
        interpret.evaluate(call.jaxpr, (), [*scalars, *blocks, *scratch], step)
        interpret.SITES.set(call.site)


def _own_slice(launch: Any, base: Value, stride: int, engine_grid: tuple, parallel: list) -> Value:
    """Each program's own part of a per-program scratch buffer (its linear program index times ``stride``)."""
    linear = None
    for e in range(len(engine_grid)):
        pid = ops.program_id(launch, e)
        linear = (
            pid
            if linear is None
            else apply_broadcast(
                Op.ADD, [apply_broadcast(Op.MUL, [linear, ops.constant(engine_grid[e], dtypes.INT32)]), pid]
            )
        )
    if not parallel:
        return base
    offset = apply_broadcast(Op.MUL, [linear, ops.constant(stride, dtypes.INT32)])
    return apply_broadcast(Op.PTR_ADD, [base, offset])
