"""cuTile's own CPU frontend as a gate: a kernel cuTile would not compile is rejected with cuTile's message.

``cuda.tile``'s compiler parses, type-checks and lowers a kernel to its typed IR on the CPU; only
the last step (``tileiras``, to a cubin) needs the CUDA toolchain. Before a launch runs on the
engine, the kernel is compiled that far for the launch's argument types (once per signature), so
tile shapes that are not powers of two, unsupported Python, wrong ranks and the like fail as
they would on a GPU, at the user's line.
"""

from __future__ import annotations

from typing import Any

import cuda.tile as ct
from cuda.tile._compile import compile_tile, parse_bytecode_version
from cuda.tile._exception import TileError
from cuda.tile.compilation import (
    ArrayConstraint,
    CallingConvention,
    ConstantConstraint,
    KernelSignature,
    ScalarConstraint,
)

from ...engine import host as host_memory
from ...engine.errors import KernelError
from ...ir import Site

#: the typed IR does not depend on these; any supported values do
SM_ARCH = "sm_90"
BYTECODE_VERSION = "13.4"  # the newest cuda-tile 1.7 accepts; check_bounds=False needs it


def _constraint(value: Any, constant: bool, ct_dtype_of: Any) -> Any:
    if host_memory.is_tensor(value):
        return ArrayConstraint(
            ct_dtype_of(value), value.ndim, index_dtype=ct.int32, stride_lower_bound_incl=0, alias_groups=(),
            may_alias_internally=False,
        )  # fmt: skip
    if constant:
        return ConstantConstraint(value)
    if isinstance(value, bool):
        return ScalarConstraint(ct.bool_)
    return ScalarConstraint(ct.int32 if isinstance(value, int) else ct.float32)


def signature(kernel: Any, args: tuple, ct_dtype_of: Any) -> KernelSignature:
    """The signature cuTile's JIT would compile ``kernel`` for with these arguments."""
    annotations = kernel._annotated_function.parameter_annotations
    params = [_constraint(a, bool(getattr(n, "constant", False)), ct_dtype_of)
              for a, n in zip(args, annotations, strict=False)]  # fmt: skip
    return KernelSignature(params, CallingConvention.cutile_python_v1())


def check(kernel: Any, args: tuple, ct_dtype_of: Any) -> None:
    """Compile ``kernel`` to cuTile's typed IR for ``args``; a KernelError with cuTile's message if not."""
    try:
        sig = signature(kernel, args, ct_dtype_of)
        version = parse_bytecode_version(BYTECODE_VERSION)
        compile_tile(kernel._annotated_function, [sig], sm_arch=SM_ARCH, return_cubin=False,
                     return_bytecode=False, bytecode_version=version)  # fmt: skip
    except TileError as exc:
        loc = getattr(exc, "loc", None)
        fn = kernel._pyfunc
        line = getattr(loc, "line", None) or fn.__code__.co_firstlineno
        file = getattr(loc, "filename", None) or fn.__code__.co_filename
        site = Site(file, line, getattr(loc, "col", 0) or 0, line, 0, fn.__name__)
        message = f"cuTile does not compile this kernel: {str(exc).splitlines()[0]}"
        raise KernelError(message, kernel=fn.__name__, site=site) from None
