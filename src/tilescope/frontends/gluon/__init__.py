"""Gluon (``triton.experimental.gluon``) on the engine: Triton's lower-level dialect.

A ``@gluon.jit`` kernel is a ``JITFunction`` (``GluonJITFunction``), so it runs through the
Triton frontend's launcher, argument binding, source rewrite and runtime unchanged; what differs
is the semantic its builtins are bound to and the builder under it. This package supplies those:

- :mod:`.semantic` (:func:`make_semantic`): Gluon's own semantic (layout rules included), with
  inferred layouts computed by :mod:`.layouts`;
- :mod:`.builder`: the engine builder with Gluon's operations: shared memory (:mod:`.shared`),
  mbarriers and asynchronous copies (:mod:`.barriers`), TMA between descriptors and shared memory;
- the names the runtime must patch while a Gluon launch runs (:func:`builtin_owners`,
  :func:`type_patches`) and host ``TensorDescriptor`` arguments (:func:`descriptor_argument`).

Triton's Gluon modules are imported when the runtime installs its patches (the first launch of
any kernel); the semantic, builder and the rest only when a Gluon kernel runs; without Gluon in
Triton, nothing is.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import sys
from typing import Any


@functools.cache
def _have_gluon() -> bool:
    """Whether this Triton has Gluon (asked on first use: finding out imports ``triton.experimental``)."""
    return importlib.util.find_spec("triton.experimental.gluon") is not None


def is_gluon(jit: Any) -> bool:
    """Whether a ``JITFunction`` is a ``@gluon.jit`` kernel."""
    return bool(getattr(jit, "is_gluon", lambda: False)())


def make_semantic(launch: Any, debug: bool, sanitize_overflow: bool, num_warps: int) -> Any:
    """The semantic a Gluon launch binds its builtins to."""
    from .builder import GluonBuilder, GluonOptions
    from .semantic import EngineGluonSemantic

    options = GluonOptions(debug=debug, sanitize_overflow=sanitize_overflow, num_warps=num_warps)
    return EngineGluonSemantic(GluonBuilder(launch, options))


def imported() -> bool:
    """Whether the user's code has imported Gluon's language (so Gluon kernels may exist)."""
    return "triton.experimental.gluon.language" in sys.modules  # there only where this Triton has Gluon


def builtin_owners() -> list[Any]:
    """Modules and classes whose members are Gluon builtins (empty without Gluon).

    Not ``nvidia.blackwell`` itself (tcgen05, tensor memory: not modelled): patching its builtins
    keeps Triton IR attributes alive until the interpreter exits, and nanobind then prints leak
    warnings into every tilescope process's output.
    """
    if not _have_gluon():
        return []
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language import _core, _math
    from triton.experimental.gluon.language.nvidia import ampere, hopper
    from triton.experimental.gluon.language.nvidia.ampere import async_copy
    from triton.experimental.gluon.language.nvidia.ampere import mbarrier as ampere_mbarrier
    from triton.experimental.gluon.language.nvidia.blackwell import tma as blackwell_tma
    from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma

    return [gl, _core, _math, _core.shared_memory_descriptor, ampere, async_copy, ampere_mbarrier, hopper,
            mbarrier, tma, blackwell_tma]  # fmt: skip


def language_modules() -> list[Any]:
    """Gluon's language namespaces, which bind ``static_range``/``static_assert`` of their own."""
    if not _have_gluon():
        return []
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language import _core

    return [gl, _core]


def _identity(self: Any, builder: Any) -> Any:
    return self


def type_patches() -> list[tuple[Any, str, Any]]:
    """(owner, name, replacement) for Gluon's ``to_ir`` methods while a launch runs: tensor types
    become engine block types, layouts and shared-memory and descriptor types stay Python objects."""
    if not _have_gluon():
        return []
    from triton.experimental.gluon.language import _core, _layouts
    from triton.experimental.gluon.language.nvidia.hopper import tma

    def distributed(self: Any, builder: Any) -> Any:
        return builder.get_block_ty(self.element_ty.to_ir(builder), self.shape)

    def shared(self: Any, builder: Any) -> Any:
        return (self.element_ty, list(self.shape), self.layout, list(self.alloc_shape))

    patches: list[tuple[Any, str, Any]] = [
        (_core.distributed_type, "to_ir", distributed),
        (_core.shared_memory_descriptor_type, "to_ir", shared),
        (tma.tensor_descriptor_type, "_to_ir", _identity),
    ]
    for _, cls in inspect.getmembers(_layouts, inspect.isclass):
        if "_to_ir" in cls.__dict__:
            patches.append((cls, "_to_ir", _identity))
    return patches


def descriptor_classes() -> tuple[type, ...]:
    """Gluon's host ``TensorDescriptor`` classes: empty until the user's code has imported them (an
    argument can be one only then; importing Gluon costs a first launch of any kernel ~0.2 s)."""
    hopper = sys.modules.get("triton.experimental.gluon.nvidia.hopper")
    descriptor = getattr(hopper, "TensorDescriptor", None)
    return (descriptor,) if descriptor is not None else ()


def descriptor_argument(desc: Any, handle: Any, shape: list, strides: list, block_type: Any) -> Any:
    """A Gluon host ``TensorDescriptor`` as the kernel sees it: a descriptor value with its
    shared-memory layout."""
    from triton.experimental.gluon.language.nvidia.hopper import tma

    return tma.tensor_descriptor(handle, shape, strides, block_type, desc.layout)
