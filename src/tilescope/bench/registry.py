"""The benchmark registry: what a benchmark declares, and the table of registered ones.

A benchmark is a launch function (it runs the Triton kernel on prepared inputs) plus what the runner
needs around it: shapes, FLOP and byte counts, input construction, a torch reference, a torch
baseline, and the compile signatures that let the kernel be built on a machine without a GPU.
Everything here is plain data; nothing imports torch or touches a device.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

Shape = Mapping[str, int]


class Launcher(Protocol):
    """Runs ``kernel[grid](*args, **kwargs)``; the GPU runner and the CPU engine each provide one."""

    def __call__(self, kernel: Any, grid: tuple[int, ...], *args: Any, **kwargs: Any) -> None: ...


def gpu_launch(kernel: Any, grid: tuple[int, ...], *args: Any, **kwargs: Any) -> None:
    """Launch ``kernel`` the ordinary way, on the device its tensor arguments live on."""
    kernel[grid](*args, **kwargs)


@dataclass(frozen=True)
class CompileSpec:
    """One compilation of a ``@triton.jit`` kernel with a fixed signature, for building without a GPU.

    ``signature`` maps every runtime argument name to a Triton type string (``*bf16``, ``i32``);
    ``constexprs`` gives compile-time constants; ``divisible`` names arguments the launcher would
    specialise as multiples of 16 (pointers from the allocator always are); ``options`` are compile
    options such as ``num_warps``.
    """

    kernel: Any
    signature: Mapping[str, str]
    constexprs: Mapping[str, Any] = field(default_factory=dict)
    divisible: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The kernel's Python name."""
        return str(self.kernel.__name__)


@dataclass(frozen=True)
class Benchmark:
    """A registered benchmark; see :func:`register` for what each field means."""

    name: str
    suite: str
    run: Callable[..., Any]
    make_inputs: Callable[..., dict[str, Any]]
    reference: Callable[[dict[str, Any]], Any]
    baseline: Callable[[dict[str, Any]], Any] | None
    flops: Callable[[Shape], float]
    bytes: Callable[[Shape], float]
    shapes: tuple[Shape, ...]
    small_shape: Shape
    tolerance: float
    roof: str
    scale_dim: str
    compile_specs: Callable[[], list[CompileSpec]]
    scale_step: int = 1

    def shape_label(self, shape: Shape) -> str:
        """A short text form of ``shape`` (``M=8192,N=8192``), stable across runs."""
        return ",".join(f"{k}={v}" for k, v in shape.items())

    def scaled(self, shape: Shape, factor: float) -> dict[str, int]:
        """``shape`` with its work dimension multiplied by ``factor`` (for injected slowdowns)."""
        out = dict(shape)
        step = self.scale_step
        out[self.scale_dim] = max(step, step * round(shape[self.scale_dim] * factor / step))
        return out


_REGISTRY: dict[str, Benchmark] = {}


def register(
    name: str,
    *,
    suite: str = "default",
    shapes: Iterable[Shape],
    small_shape: Shape,
    inputs: Callable[..., dict[str, Any]],
    reference: Callable[[dict[str, Any]], Any],
    flops: Callable[[Shape], float],
    bytes: Callable[[Shape], float],  # noqa: A002 - the user-facing keyword is "bytes"
    compile_specs: Callable[[], list[CompileSpec]],
    scale_dim: str,
    baseline: Callable[[dict[str, Any]], Any] | None = None,
    tolerance: float = 1e-2,
    roof: str = "bf16",
    scale_step: int = 1,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated launch function as benchmark ``name`` and return it unchanged.

    The launch function is called as ``run(inputs, launch)`` where ``inputs`` is what
    ``inputs(shape, device, seed)`` built and ``launch`` a :class:`Launcher`; it returns the output.
    ``reference(inputs)`` gives the exact answer (torch, high precision) and ``baseline(inputs)`` the
    torch implementation timed beside the kernel. ``flops``/``bytes`` count the useful work and the
    fewest bytes moved through device memory for a shape. ``tolerance`` bounds the error that
    :func:`tilescope.bench.accuracy.relative_error` reports. Output buffers are the inputs whose key
    starts with ``out``: the runner poisons them before the accuracy run. ``roof`` names the compute peak that
    applies (``bf16`` or ``fp8``). ``scale_dim`` is the shape entry that grows to make a variant doing
    more work, in multiples of ``scale_step`` (so a scaled stride keeps its alignment).
    ``compile_specs()`` lists the kernel compilations for CPU-only builds.
    """

    def decorate(run: Callable[..., Any]) -> Callable[..., Any]:
        if name in _REGISTRY:
            raise ValueError(f"benchmark {name!r} is already registered")
        shape_list = tuple(dict(s) for s in shapes)
        for s in (*shape_list, small_shape):
            if scale_dim not in s:
                raise ValueError(f"benchmark {name!r}: scale_dim {scale_dim!r} missing from shape {s}")
        _REGISTRY[name] = Benchmark(
            name=name,
            suite=suite,
            run=run,
            make_inputs=inputs,
            reference=reference,
            baseline=baseline,
            flops=flops,
            bytes=bytes,
            shapes=shape_list,
            small_shape=dict(small_shape),
            tolerance=tolerance,
            roof=roof,
            scale_dim=scale_dim,
            compile_specs=compile_specs,
            scale_step=scale_step,
        )
        return run

    return decorate


def registered() -> dict[str, Benchmark]:
    """All registered benchmarks by name (a copy)."""
    return dict(_REGISTRY)


def select(
    suite: str | None = None, patterns: Iterable[str] = (), modules: Iterable[str] | None = None
) -> list[Benchmark]:
    """Benchmarks of ``suite`` (any when None) whose name matches a glob of ``patterns`` (any when empty),
    registered by one of ``modules`` or their submodules (any when None)."""
    pats = list(patterns)
    mods = None if modules is None else tuple(modules)

    def from_modules(b: Benchmark) -> bool:
        where = getattr(b.run, "__module__", "")
        return mods is None or any(where == m or where.startswith(m + ".") for m in mods)

    return [
        b
        for b in _REGISTRY.values()
        if (suite is None or b.suite == suite)
        and (not pats or any(fnmatch.fnmatch(b.name, p) for p in pats))
        and from_modules(b)
    ]
