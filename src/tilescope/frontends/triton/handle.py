"""What a Triton launch returns under tilescope: a compiled-kernel handle libraries can keep.

Triton's ``kernel[grid](...)`` and ``kernel.warmup(...)`` return a ``CompiledKernel``; libraries
cache it and launch it again (``handle[grid](*args)``), and tuning code reads its ``n_regs``,
``n_spills`` and ``metadata.shared`` to size launches. Here the handle launches on the engine, and
its figures come from a real compile of the kernel, with the same arguments' types and alignment,
for the modelled GPU's target (:func:`tilescope.gpu.active_gpu`), made the first time a figure is read.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable
from typing import Any

from ...errors import TilescopeError
from . import version


class PointerShape:
    """What Triton's specialisation reads of a pointer argument (its dtype, its address's alignment),
    without keeping the tensor alive."""

    def __init__(self, value: Any):
        self.dtype = value.dtype
        address = value.data_ptr() if hasattr(value, "data_ptr") else value.__array_interface__["data"][0]
        self._address = 16 if address % 16 == 0 else address % 16

    def data_ptr(self) -> int:
        """An address aligned as the argument's was."""
        return self._address


def _shape(value: Any) -> Any:
    if (hasattr(value, "data_ptr") or hasattr(value, "__array_interface__")) and hasattr(value, "dtype"):
        return PointerShape(value)  # a torch tensor or a NumPy array
    if isinstance(value, tuple):
        return type(value)(_shape(v) for v in value) if not hasattr(value, "_fields") else value
    return value


class LaunchedKernel:
    """Triton's compiled-kernel handle on the engine (see the module docstring)."""

    def __init__(self, launcher: Any, arguments: dict, launch_options: dict):
        self.launcher = launcher
        self.name = launcher.name
        self.launch_options = dict(launch_options)
        self._arguments = {k: _shape(v) for k, v in {**arguments, **launch_options}.items()}
        self._compiled: Any = None
        self._compiled_for: dict[str, Any] = {}  # other GPUs' compiles, by spec name
        self._figures: tuple[int, int, int] | None = None

    def __getitem__(self, grid: Any) -> Callable[..., LaunchedKernel]:
        """``handle[grid](*args)``: launch the same kernel again, with these launch options."""

        def run(*args: Any, **kwargs: Any) -> LaunchedKernel:
            kwargs.pop("stream", None)
            return self.launcher.run(*args, grid=grid, **{**self.launch_options, **kwargs})

        return run

    def _init_handles(self) -> None:
        """Triton loads the binary onto the GPU here; on the engine it compiles for the modelled GPU."""
        self._resources()

    @property
    def compiled(self) -> Any:
        """Triton's own ``CompiledKernel`` for the modelled GPU (compiled on first use)."""
        if self._compiled is None:
            self._compiled = compile_for_gpu(self.launcher, self._arguments)
        return self._compiled

    def compiled_for(self, gpu: str) -> Any:
        """Triton's ``CompiledKernel`` for the GPU ``gpu`` names (``"mi300x"``, ``"h200"``, ...), made
        once; the modelled GPU's is :attr:`compiled`."""
        from ...gpu import active_gpu
        from ...gpu.specs import gpu_spec

        spec = gpu_spec(gpu)
        if spec is active_gpu():
            return self.compiled
        if gpu not in self._compiled_for:
            self._compiled_for[gpu] = compile_for_gpu(self.launcher, self._arguments, spec)
        return self._compiled_for[gpu]

    @property
    def metadata(self) -> Any:
        """The compile's metadata: ``shared``, ``num_warps``, ``num_stages``, ``target``, ..."""
        return self.compiled.metadata

    @property
    def asm(self) -> Any:
        """The compile's stages: ``ttir``, ``ttgir``, ``llir``, ``ptx``/``amdgcn``, ``cubin``/``hsaco``."""
        return self.compiled.asm

    @property
    def hash(self) -> str:
        """The compile's hash."""
        return self.compiled.hash

    @property
    def n_regs(self) -> int:
        """Registers per thread of the compiled kernel."""
        return self._resources()[0]

    @property
    def n_spills(self) -> int:
        """Spilled 4-byte registers per thread (local memory / 4, as Triton's driver reports)."""
        return self._resources()[1]

    @property
    def n_max_threads(self) -> int:
        """Most threads per block the register use allows on the modelled GPU."""
        return self._resources()[2]

    def _resources(self) -> tuple[int, int, int]:
        if self._figures is None:
            self._figures = resources(self.compiled.asm)
        return self._figures


def compile_for_gpu(launcher: Any, arguments: dict, spec: Any = None) -> Any:
    """Compile ``launcher``'s kernel, bound to ``arguments`` (parameters and launch options), for the
    target of ``spec`` (a :class:`~tilescope.gpu.specs.GPUSpec`; default the modelled GPU)."""
    from ...gpu import active_gpu
    from .gpu import target_driver

    spec = spec or active_gpu()
    jit = launcher.info.jit
    try:
        with target_driver(spec):
            return version.original_jit_run()(jit, grid=None, warmup=True, **arguments)
    except Exception as exc:  # Triton's compile error, as Triton would raise it on the GPU
        raise TilescopeError(
            f"{launcher.name}: compiling for the modelled {spec.name} (to answer a question about the "
            f"compiled kernel: registers, shared memory, metadata) failed: {type(exc).__name__}: {exc}"
        ) from exc


def resources(asm: Any) -> tuple[int, int, int]:
    """(registers, spilled registers, max threads per block) of a compiled kernel's binary."""
    from ...gpu import active_gpu  # the GPU model is needed only when someone asks for figures

    spec = active_gpu()
    regs, _, spills = binary_usage(asm.get("cubin"), asm.get("amdgcn", ""))
    by_regs = spec.regs_per_multiprocessor // max(regs, 1) // spec.warp_size * spec.warp_size
    return regs, spills, min(spec.max_threads_per_block, by_regs)


@functools.lru_cache(maxsize=64)  # one cuobjdump run per binary, however many questions it answers
def binary_usage(cubin: bytes | None, amdgcn: str) -> tuple[int, int, int]:
    """(registers, spilled bytes, spilled registers) per thread of a compiled kernel: a CUDA binary's
    (spills live in ptxas's stack frame or in local memory; the driver's local size, what Triton's
    ``n_spills`` divides by 4, holds both), else AMD's assembly (spilled VGPRs and scratch)."""
    from ...blast import resources as read

    if cubin is not None:
        usage = read.from_cubin(cubin, version.cuobjdump_path())
        spilled = max(usage.get("stack_bytes", 0), usage.get("local_bytes", 0))
        return usage.get("registers", 0), spilled, spilled // 4
    usage = read.from_amdgcn(amdgcn)
    vgpr_spills = usage.get("vgpr_spills", 0)
    return usage.get("vgprs", 0), 4 * vgpr_spills + usage.get("scratch_bytes", 0), vgpr_spills


#: compiled-kernel figures by compile hash (a compile is cached by Triton per kernel, signature and
#: config; reading its binary's figures takes a cuobjdump run, so they are kept too)
_FIGURES: dict[str, dict] = {}


def compiled_figures(handle: LaunchedKernel, gpu: str | None = None) -> dict:
    """What an offline compile of ``handle``'s kernel for ``gpu`` (a spec name; None: the modelled
    GPU) says, for clients that need
    ``Need.COMPILED_RESOURCES``: target, registers, spilled bytes, shared memory (total and the
    buffers it holds, with their source lines), warps, stages, per global-memory access (source
    location and kind) the widest access per thread and the blocked layout of its block, and the
    register tiles live where the most are (:func:`tilescope.blast.liveness.live_tiles`).
    ``spill_bytes`` is the per-thread stack frame or local memory (what ptxas spills registers to;
    Triton kernels have no other use for it), or AMD's spilled VGPRs
    and scratch; AMD targets add ``vgprs`` (the unified file: VGPRs and AGPRs), ``agprs`` and
    ``sgprs``. A failed compile gives ``{"error": message}``."""
    from ...blast import resources as read
    from ...blast.liveness import live_tiles

    try:
        compiled = handle.compiled if gpu is None else handle.compiled_for(gpu)
    except TilescopeError as exc:
        return {"error": str(exc)}
    key = compiled.hash
    if key not in _FIGURES:
        asm, meta = compiled.asm, compiled.metadata
        target = meta.target
        cuda = target.backend == "cuda"
        regs, spilled, _ = binary_usage(asm["cubin"] if cuda else None, asm.get("amdgcn", ""))
        arch = f"sm_{target.arch}{'a' if int(target.arch) >= 90 else ''}" if cuda else str(target.arch)
        widths = read.global_access_widths(asm.get("ptx", "")) if cuda else {}
        layouts = read.access_layouts(asm.get("ttgir", ""))
        accesses = {(*where, kind): {"vector_bytes": width} for where, found in widths.items()
                    for kind, width in found.items()}  # fmt: skip
        for where, layout in layouts.items():
            accesses.setdefault(where, {})["layout"] = layout
        _FIGURES[key] = {
            "target": arch,
            "registers": regs,
            "spill_bytes": spilled,
            "shared_bytes": int(meta.shared),
            "num_warps": int(meta.num_warps),
            "num_stages": int(meta.num_stages),
            "shared_buffers": read.shared_buffers(asm.get("ttgir", "")),
            "live_tiles": live_tiles(asm.get("ttgir", "")),
            "accesses": [
                {"file": f, "line": ln, "column": col, "kind": kind, **found}
                for (f, ln, col, kind), found in sorted(accesses.items())
            ],  # fmt: skip
        }
        if not cuda:
            usage = read.from_amdgcn(asm.get("amdgcn", ""))
            _FIGURES[key].update({k: usage.get(k, 0) for k in ("vgprs", "agprs", "sgprs")})
    return _here(_FIGURES[key], handle.launcher.info.file)


#: reduction layouts by compile hash (a compile is Triton's, cached per kernel, signature and config)
_REDUCE_LAYOUTS: dict[str, dict] = {}


def compiled_reduce_layouts(handle: LaunchedKernel) -> dict:
    """The layouts an offline compile of ``handle``'s kernel for the modelled GPU gave its reductions'
    inputs, by source ``(file, line)``: ``(block shape, axis, Blocked)`` each, as "gpu" numerics read
    them (:class:`~tilescope.engine.numerics.Numerics`). A failed compile warns once per kernel and
    gives none: the engine then assumes Triton's coalescing rule."""
    from ...blast import resources as read
    from ...engine.layout import Blocked

    try:
        compiled = handle.compiled
    except TilescopeError as exc:
        key = f"error:{handle.name}"
        if key not in _REDUCE_LAYOUTS:
            _REDUCE_LAYOUTS[key] = {}
            warnings.warn(f"gpu_layouts='compiled': {exc}; assuming Triton's coalesced layouts", stacklevel=2)
        return {}
    if compiled.hash not in _REDUCE_LAYOUTS:
        found: dict = {}
        for r in read.reduce_layouts(compiled.asm.get("ttgir", "")):
            spt, tpw, wpc = (tuple(r[k]) for k in ("size_per_thread", "threads_per_warp", "warps_per_cta"))
            at = (r["file"], r["line"])
            found[at] = (*found.get(at, ()), (tuple(r["shape"]), r["axis"], Blocked(spt, tpw, wpc)))
        _REDUCE_LAYOUTS[compiled.hash] = found
    kernel_file = handle.launcher.info.file
    return {(_at(file, kernel_file), line): v for (file, line), v in _REDUCE_LAYOUTS[compiled.hash].items()}


def _at(file: str, kernel_file: str) -> str:
    """A compile's debug-location file name, moved to where the kernel's file is now (see :func:`_here`)."""
    return kernel_file if os.path.basename(file) == os.path.basename(kernel_file) else file


def _here(figures: dict, kernel_file: str) -> dict:
    """``figures`` with its accesses' file names moved to where the kernel's file is now.

    Triton's compile cache is keyed by the kernel's source, not its path: a copy of the same file
    elsewhere (another checkout, a worktree, an installed copy) gets the compile made at the first
    path, whose debug locations name that path.
    """

    def here(place: dict) -> dict:
        return {**place, "file": _at(place["file"], kernel_file)}

    live = figures["live_tiles"]
    if live:
        live = {**here(live), "live": [here(tile) for tile in live["live"]]}
    return {**figures, "accesses": [here(a) for a in figures["accesses"]], "live_tiles": live,
            "shared_buffers": [here(b) for b in figures["shared_buffers"]]}  # fmt: skip
