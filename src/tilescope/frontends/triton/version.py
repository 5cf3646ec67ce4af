"""Everything that depends on Triton's internal interfaces, in one place.

tilescope targets Triton 3.9.x. When Triton's internals move (they do, every release), this module
is what changes: the classes we recognize, the members we patch, and the interpreter pieces we
reuse. Everything else in the frontend talks to Triton through the names defined here.
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Any

import numpy as np
import triton
import triton.language as tl
from triton.language import core as tl_core
from triton.language.semantic import TritonSemantic
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction

SUPPORTED = ("3.9",)
TRITON_VERSION = triton.__version__

#: Triton's interpreter module, imported only when used (it costs a first launch ~4 ms)
INTERPRETER = "triton.runtime.interpreter"

__all__ = [
    "Autotuner",
    "Heuristics",
    "JITFunction",
    "descriptor_classes",
    "TritonSemantic",
    "TRITON_VERSION",
    "builtin_targets",
    "standard_combine",
    "unwrap",
    "convert_custom_types",
    "dot_scaled",
    "is_supported",
    "jit_callables",
    "python_function",
]


def unwrap(value: Any) -> Any:
    """A ``tl.constexpr``'s Python value; anything else unchanged."""
    return tl_core._unwrap_if_constexpr(value)


def standard_combine(name: str) -> Any:
    """One of ``triton.language.standard``'s combine functions (``sum``, ``prod``, ``max``, ...), or None.

    Reductions recognise them to take NumPy fast paths; the names are Triton's private ones.
    """
    return getattr(
        tl.standard,
        {
            "sum": "_sum_combine",
            "prod": "_prod_combine",
            "max": "_elementwise_max",
            "min": "_elementwise_min",
            "xor": "_xor_combine",
        }[name],
        None,
    )


def is_supported() -> bool:
    """True when the installed Triton is a version this module was written for."""
    return any(TRITON_VERSION.startswith(v) for v in SUPPORTED)


def jit_callables() -> tuple[type, ...]:
    """Classes whose instances are ``@triton.jit`` functions (compiled or interpreted)."""
    kinds: list[type] = [JITFunction]
    # an InterpretedFunction exists only once Triton (TRITON_INTERPRET=1) has imported its interpreter
    interp = sys.modules.get(INTERPRETER)
    if interp is not None:
        kinds.append(interp.InterpretedFunction)
    return tuple(kinds)


def python_function(fn: Any) -> Any:
    """The user's Python function inside a JITFunction or InterpretedFunction."""
    return fn.fn


def descriptor_classes() -> tuple[type, ...]:
    """Triton's host ``TensorDescriptor`` class: empty until the user's code has imported it (an
    argument can be one only then; importing it costs every first launch ~0.8 ms)."""
    module = sys.modules.get("triton.tools.tensor_descriptor")
    descriptor = getattr(module, "TensorDescriptor", None)
    return (descriptor,) if descriptor is not None else ()


def source_lines(fn: Any) -> tuple[list[str], int] | None:
    """``inspect.getsourcelines`` of a JITFunction's Python function, as Triton read it when it decorated
    the kernel (Triton 3.9 keeps it as ``raw_src``); None where this Triton keeps no such lines."""
    lines, first = getattr(fn, "raw_src", None), getattr(fn, "starting_line_number", None)
    if isinstance(lines, list) and type(first) is int:
        return lines, first
    return None


def triton_builtin_owners() -> list[Any]:
    """Modules and classes whose members are ``triton.language``'s builtins."""
    owners: list[Any] = [tl, tl_core, tl.math, tl.tensor, tl_core.tensor_descriptor_base]
    try:
        from triton.language.extra.cuda import libdevice as cuda_libdevice

        owners.append(cuda_libdevice)
    except ImportError:  # pragma: no cover
        pass
    return owners


def builtin_targets(owners: list[Any]) -> list[tuple[Any, str, Any]]:
    """(owner, name, builtin) for every builtin of ``owners`` the engine must bind to its semantic, by
    owner and then by name (the order of ``inspect.getmembers``, which read every member through
    ``getattr``: ~1.3 ms of a first launch for the ~1,500 names of Triton's language modules; a
    module's members are its ``__dict__``'s values, a class's are looked up by the names of its MRO)."""
    targets = []
    seen = set()
    is_builtin = tl_core.is_builtin
    for owner in owners:
        if isinstance(owner, type):
            names = sorted({name for cls in owner.__mro__ for name in vars(cls)})
            members = []
            for name in names:
                try:
                    members.append((name, getattr(owner, name)))
                except AttributeError:  # as inspect.getmembers: a name the class lists but does not give
                    continue
        elif "__dir__" in vars(owner) or "__getattr__" in vars(owner):  # members a dict does not list
            members = inspect.getmembers(owner)
        else:
            members = sorted((name, member) for name, member in vars(owner).items() if is_builtin(member))
        for name, member in members:
            if is_builtin(member) and (id(owner), name) not in seen:
                seen.add((id(owner), name))
                targets.append((owner, name, member))
    return targets


#: Triton's backend-neutral libdevice stubs (``tl.extra.libdevice``): loaded only by code that uses them
LIBDEVICE_STUBS_MODULE = "triton.language.extra.libdevice"


def libdevice_stubs() -> list[tuple[Any, str, Any, Any]]:
    """(stub module, name, stub, CUDA's function or None) for each of ``tl.extra.libdevice``'s stubs,
    which resolve to CUDA's functions; empty until the user's code has imported that module (a kernel
    can call a stub only then; importing it for every process would cost each first launch ~1 ms)."""
    stubs = sys.modules.get(LIBDEVICE_STUBS_MODULE)
    if stubs is None:
        return []
    from triton.language.extra.cuda import libdevice as cuda_libdevice

    return [(stubs, name, stub, getattr(cuda_libdevice, name, None))
            for name, stub in inspect.getmembers(stubs, inspect.isfunction)]  # fmt: skip


#: Triton's atomic RMW ops -> (the engine's atomic op, signed for integer max/min)
_ATOMIC_OPS = {
    "ADD": ("add", None),
    "FADD": ("add", None),
    "AND": ("and", None),
    "OR": ("or", None),
    "XOR": ("xor", None),
    "XCHG": ("xchg", None),
    "MAX": ("max", True),
    "MIN": ("min", True),
    "UMAX": ("max", False),
    "UMIN": ("min", False),
}
_SEMANTICS = {"ACQUIRE_RELEASE": "acq_rel", "ACQUIRE": "acquire", "RELEASE": "release", "RELAXED": "relaxed"}
_SCOPES = {"GPU": "gpu", "CTA": "cta", "SYSTEM": "sys"}


def atomic_op(op: Any) -> tuple[str, bool | None]:
    """The engine's name (and integer signedness) of one of Triton's ``ATOMIC_OP`` values."""
    return _ATOMIC_OPS[op.name]


def memory_order(sem: Any, scope: Any, default_sem: str = "acq_rel") -> dict[str, str]:
    """``sem`` and ``scope`` as the engine names them (Triton's defaults when absent)."""
    return {
        "sem": _SEMANTICS[sem.name] if sem is not None else default_sem,
        "scope": _SCOPES[scope.name] if scope is not None else "gpu",
    }


def pointer_type_of(dtype: Any) -> Any:
    """The Triton pointer type GPU Triton gives an argument with ``data_ptr()`` and this ``dtype``
    (a torch, NumPy or Triton dtype, or anything whose name ends in a dtype's name); None when
    Triton has none."""
    from triton._utils import canonicalize_dtype

    try:
        return tl.str_to_ty("*" + canonicalize_dtype(dtype), None)
    except KeyError:
        return None


@functools.cache
def launch_option_names() -> frozenset[str]:
    """Keyword options a launch (or a ``triton.Config``, or a heuristic) may set besides the kernel's
    parameters: ``num_warps``, ``num_stages``, ``maxnreg``, ``enable_fp_fusion``, ... (CUDA's)."""
    import dataclasses

    try:
        from triton.backends.nvidia.compiler import CUDAOptions
    except ImportError:  # pragma: no cover - a Triton without the NVIDIA backend
        return frozenset({"num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "debug"})
    return frozenset(f.name for f in dataclasses.fields(CUDAOptions))


def fp_fusion(requested: Any) -> bool:
    """Whether Triton's compiler contracts multiply-adds for a launch: its ``enable_fp_fusion``
    option, else the ``TRITON_DEFAULT_FP_FUSION`` knob (on by default), never under
    ``TRITON_FORCE_DISABLE_FP_FUSION`` (Triton's rule, without its once-per-process warning)."""
    knobs = triton.knobs.language
    if knobs.force_disable_fp_fusion:
        return False
    return bool(knobs.default_fp_fusion if requested is None else requested)


def language_knobs() -> tuple:
    """The knobs Triton's language layer reads while it builds a kernel (``TRITON_F32_DEFAULT``:
    ``tl.dot``'s default input precision): part of what its recorded builder calls are keyed by."""
    return (triton.knobs.language.fp32_default,)


def reduction_order(release: str) -> str:
    """How the code generation of Triton ``release`` combines the elements one thread holds in a
    reduction: one running sum up to 3.6 (read from the H200's compiled code; 3.7 and 3.8 are taken
    to match), a pairwise tree from 3.9 (its sm_90a compile)."""
    try:
        major, minor = (int(p) for p in release.split(".")[:2])
    except ValueError:
        raise ValueError(f"gpu_compiler must be a Triton release such as '3.9'; got {release!r}") from None
    return "linear" if (major, minor) < (3, 9) else "tree"


def libdevice_release(release: str) -> str:
    """Which bundled libdevice the code of Triton ``release`` calls (:data:`~tilescope.engine.numerics.
    LIBDEVICE_RELEASES`): 3.6's up to 3.8 (3.7 and 3.8 are taken to match, like
    :func:`reduction_order`), 3.9's from 3.9."""
    return "3.6" if reduction_order(release) == "linear" else "3.9"


def swap_active_driver(new: Any) -> Any:
    """Make ``new`` Triton's active driver (None: back to none chosen); returns the one it replaces.

    ``triton.runtime.driver`` has ``set_active`` but no way to read or clear the slot without making
    the default driver, which fails on a machine with no GPU.
    """
    from triton.runtime import driver

    old, driver._active = driver._active, new
    return old


def original_jit_run() -> Any:
    """``JITFunction.run`` as Triton wrote it (under tilescope's launch route, when installed)."""
    run = JITFunction.run
    return getattr(run, "__tilescope_original__", run)


def python_to_cpp_type(backend: str) -> Any:
    """The backend's map from Triton type strings to C++ types (``ty_to_cpp``)."""
    if backend == "hip":
        from triton.backends.amd.driver import ty_to_cpp
    else:
        from triton.backends.nvidia.driver import ty_to_cpp
    return ty_to_cpp


def cuobjdump_path() -> str:
    """The ``cuobjdump`` Triton ships (or the one ``TRITON_CUOBJDUMP_PATH`` names)."""
    from triton import knobs

    return knobs.nvidia.cuobjdump.path


def backend_libdevice(name: str) -> Any:
    """CUDA's libdevice function ``name`` (what the GPU compiler resolves a stub to), as it is now."""
    from triton.language.extra.cuda import libdevice as cuda_libdevice

    return getattr(cuda_libdevice, name)


def convert_custom_types(input, dst_ty, fp_downcast_rounding, _semantic):
    """Codegen hook Triton's semantic calls for fp8 conversions."""
    return tl.tensor(_semantic.builder.create_fp_to_fp(input.handle, dst_ty, fp_downcast_rounding), dst_ty)


def specialized_to_one(jit_fn: Any) -> set[str]:
    """Names of parameters a real launch turns into the constant 1 when passed the integer 1.

    Triton specializes integer arguments equal to 1 (unless ``do_not_specialize``), so code like a
    descriptor's ``last stride == 1`` check sees a constant on the GPU; we do the same.
    """
    return {
        p.name
        for p in getattr(jit_fn, "params", [])
        if not getattr(p, "do_not_specialize", False) and not getattr(p, "is_constexpr", False)
    }


#: static descriptor rules Triton's semantic rejects that the engine re-checks on runtime values
_RUNTIME_CHECKED_RULES = (
    "at least 16 bytes in the last dimension",
    "last dim must be 1",
    "strides must be 16-byte aligned",
)


class EngineSemantic(TritonSemantic):
    """Triton's semantic, with descriptor rules checked by the engine on runtime values instead."""

    def reduced_type(self, input_type: Any, shape: list[int], axis: int, keep_dims: bool) -> Any:
        """The type of a reduction's result of ``shape`` (a scalar when empty)."""
        return tl.block_type(input_type.scalar, shape) if shape else input_type.scalar

    def reduction_layout(self, input_type: Any) -> Any:
        """The layout a reduction's input of ``input_type`` states (None: Triton's are the compiler's
        to choose; "gpu" numerics then take the compile's or the coalescing rule's)."""
        return None

    def make_tensor_descriptor(self, base, shape, strides, block_shape, padding_option="zero"):
        """Build a descriptor; rules the engine checks itself are left to the engine (one report)."""
        try:
            return super().make_tensor_descriptor(base, shape, strides, block_shape, padding_option)
        except ValueError as exc:
            if not any(rule in str(exc) for rule in _RUNTIME_CHECKED_RULES):
                raise
            # the engine checks these rules on the actual values when the descriptor is made

        elem = base.dtype.element_ty
        shape = [self.make_scalar(x, tl.int32) for x in shape]
        strides = [self.make_scalar(tl_core._unwrap_if_constexpr(x), tl.int64) for x in strides]
        block = tl_core._unwrap_shape(block_shape)
        handle = self.builder.create_make_tensor_descriptor(
            base.handle,
            [s.handle for s in shape],
            [s.handle for s in strides],
            block,
            elem.is_int_signed(),
            self._str_to_padding_option(padding_option),
        )
        return tl.tensor_descriptor(handle, shape, strides, tl.block_type(elem, block))


class _Handle:
    """The shape of the interpreter's TensorHandle, for reusing its dot_scaled helpers."""

    def __init__(self, data: np.ndarray, dtype: Any):
        self.data = data
        self.dtype = dtype


def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, lhs_k_pack, rhs_k_pack, acc):
    """Microscaled dot through the interpreter's operand decoding (per program of the batch)."""
    try:
        from triton.runtime import interpreter as _interp
    except ImportError:  # pragma: no cover - depends on the Triton build
        raise NotImplementedError("tl.dot_scaled needs triton.runtime.interpreter") from None
    from triton._C.libtriton import ir

    from .typemap import to_triton

    compute = tl.float16 if ir.ScaleDotElemTypeTY.FP16 in (lhs_format, rhs_format) else tl.bfloat16
    batch = max(v.data.shape[0] for v in (lhs, rhs, acc) if v is not None)
    out = np.empty((batch, *acc.data.shape[1:]), dtype=np.float32)
    for p in range(batch):

        def pick(v, row=p):
            if v is None:
                return None
            data = v.data[min(row, v.data.shape[0] - 1)]
            if data.dtype.name == "bfloat16":
                data = data.view(np.uint16)
            return _Handle(np.ascontiguousarray(data), to_triton(v.dtype))

        a = _interp._prepare_dot_scaled_operand(
            pick(lhs), pick(lhs_scale), lhs_format, lhs_k_pack, compute, is_rhs=False
        )
        b = _interp._prepare_dot_scaled_operand(
            pick(rhs), pick(rhs_scale), rhs_format, rhs_k_pack, compute, is_rhs=True
        )
        out[p] = (
            np.matmul(np.asarray(a, np.float32), np.asarray(b, np.float32))
            + acc.data[min(p, acc.data.shape[0] - 1)]
        )
    return out
