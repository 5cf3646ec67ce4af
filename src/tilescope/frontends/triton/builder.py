"""Triton's IR-builder interface as a name map onto the engine's ops.

``triton.language`` (its front end and type rules) calls ``create_*`` methods on a builder; the
compiler's builder emits MLIR, ours calls the engine: ``create_fadd`` and ``create_add`` are
``apply(Op.ADD)``, ``create_icmpULT`` is ``apply(Op.LT, signed=False)``, loads go through the
access pipeline. Triton's types arrive as engine dtypes (``tl.dtype.to_ir`` is mapped by
:mod:`typemap` while a launch runs); Triton decides every result type, so the engine only computes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# the engine's atomics, tensor descriptors and dot are imported by the methods that use them: most
# kernels use none of them, and their modules cost every first launch ~1.4 ms
from ...engine import access, dtypes, ops
from ...engine.dtypes import BlockType, DType
from ...engine.errors import UnsupportedOpError
from ...engine.ops import Op
from ...engine.values import DescriptorValue, Value
from . import version

#: create_X -> (engine op, parameters) for Triton's elementwise builder methods
ELEMENTWISE: dict[str, tuple[Op, dict]] = {
    "fadd": (Op.ADD, {}),
    "add": (Op.ADD, {}),
    "fsub": (Op.SUB, {}),
    "sub": (Op.SUB, {}),
    "fmul": (Op.MUL, {}),
    "mul": (Op.MUL, {}),
    "fdiv": (Op.DIV, {"full": True}),  # div.full.f32 on NVIDIA (precise_divf is div.rn)
    "precise_divf": (Op.DIV, {}),
    "approx_divf": (Op.DIV, {"approx": True}),
    "sdiv": (Op.DIV, {"signed": True}),
    "udiv": (Op.DIV, {"signed": False}),
    "frem": (Op.REM, {}),
    "srem": (Op.REM, {"signed": True}),
    "urem": (Op.REM, {"signed": False}),
    "minimumf": (Op.MINIMUM, {}),
    "maximumf": (Op.MAXIMUM, {}),
    "minnumf": (Op.MIN, {}),
    "maxnumf": (Op.MAX, {}),
    "minsi": (Op.MIN, {"signed": True}),
    "maxsi": (Op.MAX, {"signed": True}),
    "minui": (Op.MIN, {"signed": False}),
    "maxui": (Op.MAX, {"signed": False}),
    "and": (Op.AND, {}),
    "or": (Op.OR, {}),
    "xor": (Op.XOR, {}),
    "shl": (Op.SHL, {}),
    "lshr": (Op.SHR, {"signed": False}),
    "ashr": (Op.SHR, {"signed": True}),
    "umulhi": (Op.MULHI, {"signed": False}),
    "icmpEQ": (Op.EQ, {}),
    "icmpNE": (Op.NE, {}),
    "icmpSLT": (Op.LT, {"signed": True}),
    "icmpSLE": (Op.LE, {"signed": True}),
    "icmpSGT": (Op.GT, {"signed": True}),
    "icmpSGE": (Op.GE, {"signed": True}),
    "icmpULT": (Op.LT, {"signed": False}),
    "icmpULE": (Op.LE, {"signed": False}),
    "icmpUGT": (Op.GT, {"signed": False}),
    "icmpUGE": (Op.GE, {"signed": False}),
    "fcmpOEQ": (Op.EQ, {}),
    "fcmpONE": (Op.NE, {}),
    "fcmpOLT": (Op.LT, {}),
    "fcmpOLE": (Op.LE, {}),
    "fcmpOGT": (Op.GT, {}),
    "fcmpOGE": (Op.GE, {}),
    "fcmpUEQ": (Op.EQ, {"unordered": True}),
    "fcmpUNE": (Op.NE, {"unordered": True}),
    "fcmpULT": (Op.LT, {"unordered": True}),
    "fcmpULE": (Op.LE, {"unordered": True}),
    "fcmpUGT": (Op.GT, {"unordered": True}),
    "fcmpUGE": (Op.GE, {"unordered": True}),
    "exp": (Op.EXP, {}),
    "exp2": (Op.EXP2, {}),
    "log": (Op.LOG, {}),
    "log2": (Op.LOG2, {}),
    "sin": (Op.SIN, {}),
    "cos": (Op.COS, {}),
    "sqrt": (Op.SQRT, {}),
    "precise_sqrt": (Op.SQRT, {"approx": False}),
    "rsqrt": (Op.RSQRT, {}),
    "erf": (Op.ERF, {}),
    "floor": (Op.FLOOR, {}),
    "ceil": (Op.CEIL, {}),
    "fabs": (Op.ABS, {}),
    "fneg": (Op.NEG, {}),
    "iabs": (Op.ABS, {}),
    "fma": (Op.FMA, {}),
}

#: get_X_ty -> engine dtype; get_X(value) -> a constant of that dtype
_TYPE_GETTERS = {
    "get_half_ty": dtypes.FP16,
    "get_bf16_ty": dtypes.BF16,
    "get_float_ty": dtypes.FP32,
    "get_double_ty": dtypes.FP64,
    "get_int1_ty": dtypes.BOOL,
    "get_int8_ty": dtypes.INT8,
    "get_uint8_ty": dtypes.UINT8,
    "get_int16_ty": dtypes.INT16,
    "get_uint16_ty": dtypes.UINT16,
    "get_int32_ty": dtypes.INT32,
    "get_uint32_ty": dtypes.UINT32,
    "get_int64_ty": dtypes.INT64,
    "get_uint64_ty": dtypes.UINT64,
    "get_fp8e4nv_ty": dtypes.FP8E4M3FN,
    "get_fp8e4b15_ty": dtypes.FP8E4M3B15,
    "get_fp8e4b8_ty": dtypes.FP8E4M3FNUZ,
    "get_fp8e5_ty": dtypes.FP8E5M2,
    "get_fp8e5b16_ty": dtypes.FP8E5M2FNUZ,
    "get_void_ty": dtypes.VOID,
}
_CONSTANTS = {
    "get_int1": dtypes.BOOL,
    "get_int8": dtypes.INT8,
    "get_uint8": dtypes.UINT8,
    "get_int16": dtypes.INT16,
    "get_uint16": dtypes.UINT16,
    "get_int32": dtypes.INT32,
    "get_uint32": dtypes.UINT32,
    "get_int64": dtypes.INT64,
    "get_uint64": dtypes.UINT64,
    "get_fp16": dtypes.FP16,
    "get_bf16": dtypes.BF16,
    "get_fp32": dtypes.FP32,
    "get_fp64": dtypes.FP64,
}


@dataclass(frozen=True)
class BuilderOptions:
    """The options Triton's language layer reads from a builder."""

    debug: bool = True  # device_assert fires (Triton emits it only in debug mode)
    sanitize_overflow: bool = False  # Triton's debug-mode int32 overflow asserts: off unless asked
    arch: str | None = None
    extern_libs: dict | None = None
    supported_fp8_dtypes: tuple[str, ...] = ("fp8e5", "fp8e5b16", "fp8e4nv", "fp8e4b8", "fp8e4b15")
    deprecated_fp8_dot_operand_dtypes: tuple[str, ...] = ()
    default_dot_input_precision: str = "tf32"
    allowed_dot_input_precisions: tuple[str, ...] = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
    max_num_imprecise_acc_default: int = 2**30  # Triton's default on sm_90, the modelled GPU
    backend_name: str = "tilescope"
    instrumentation_mode: str = ""


class Builder:
    """Implements the ``create_*`` interface of Triton's IR builder over engine values."""

    def __init__(self, launch: Any, options: BuilderOptions | None = None):
        self.launch = launch  # the running launch: sites, memory, hub, current batch
        self.options = options or BuilderOptions()
        # what a replayed language-layer call is recorded under: the options, and the knobs Triton reads
        # from the environment (a tl.dot recorded as tf32 must not replay under TRITON_F32_DEFAULT=ieee)
        self.options_key = f"{self.options!r} {version.language_knobs()!r}"
        self.codegen_fns = {
            "convert_custom_types": version.convert_custom_types,
            "min_dot_size": lambda lhs, rhs: (1, 1, 1),
        }

    def _apply(self, op: Op, *inputs: Value, **params: Any) -> Value:
        return ops.apply(self.launch, op, *inputs, **params)

    def unsupported(self, what: str, detail: str = ""):
        """Raise the error for an operation the engine does not implement (``detail``: what it does run)."""
        raise UnsupportedOpError(
            f"`{what}` is not supported by tilescope's engine" + (f"; {detail}" if detail else ""),
            kernel=self.launch.kernel_name,
            site=self.launch.site(),
        )

    def __getattr__(self, name: str):
        if name.startswith("create_"):  # the type getters, constants and elementwise ops are methods
            return lambda *args, **kwargs: self.unsupported(f"tl op {name[len('create_') :]}")
        raise AttributeError(name)

    # ------------------------------------------------------------------ types and constants

    def get_ptr_ty(self, elt_ty: DType, addr_space=1) -> DType:
        """Pointer type to ``elt_ty``."""
        return dtypes.pointer(dtypes.element(elt_ty))

    def get_block_ty(self, dtype: DType, shape) -> BlockType:
        """Block type of ``shape`` over ``dtype``."""
        return BlockType(dtype, tuple(int(s) for s in shape))

    def create_tensor_descriptor_type(self, block_ty, is_signed):
        """Descriptor types carry no runtime state here."""
        return block_ty

    def get_null_value(self, ty) -> Value:
        """Zero of type ``ty``."""
        return ops.constant(0, dtypes.element(ty))

    def get_all_ones_value(self, ty) -> Value:
        """All bits set in type ``ty``."""
        return ops.all_ones(dtypes.element(ty))

    def get_cache_policy(self, cache_modifier, eviction_policy):
        """Cache hints have no effect on the CPU."""
        return None

    # ------------------------------------------------------------------ programs

    def create_get_program_id(self, axis):
        """Program id along ``axis`` for each program of the batch."""
        return ops.program_id(self.launch, axis)

    def create_get_num_programs(self, axis):
        """Grid size along ``axis`` (the same for every program)."""
        return ops.num_programs(self.launch, axis)

    # ------------------------------------------------------------------ arithmetic and casts

    def create_clampf(self, arg, lo, hi, propagate_nans):
        """clamp(arg, lo, hi); NaN propagates only when asked."""
        propagate = getattr(propagate_nans, "name", str(propagate_nans)) == "ALL"
        return self._apply(Op.CLAMP, arg, lo, hi, propagate_nan=propagate)

    def create_select(self, cond, lhs, rhs):
        """where(cond, lhs, rhs); a pointer keeps its origin when both sides share it."""
        return self._apply(Op.SELECT, cond, lhs, rhs)

    def create_extern_elementwise(self, lib_name, lib_path, symbol, args, ret_type, is_pure):
        """A libdevice function, by its symbol."""
        from . import libdevice  # on first use: most kernels call none

        found = libdevice.lookup(symbol)
        if found is None:
            self.unsupported(f"libdevice function {symbol}")
        op, params = found
        return self._apply(op, *args, out=dtypes.element(ret_type), **params)

    def create_inline_asm(self, asm, constraints, values, ty, is_pure, pack):
        """The sleeps and timer reads spin loops use (:mod:`.inline_asm`); any other PTX is refused."""
        from . import inline_asm  # imported on first use: most kernels have no inline PTX

        return inline_asm.run(self.launch, asm, list(ty), self.unsupported)

    def _cast(self, src, dst, **params):
        return self._apply(Op.CAST, src, to=dtypes.element(dst), **params)

    def create_bitcast(self, src, dst):
        """Reinterpret bits."""
        return self._apply(Op.BITCAST, src, to=dtypes.element(dst))

    def create_int_to_ptr(self, src, dst):
        """Integer to pointer: the origin is found later by address."""
        return self._apply(Op.INT_TO_PTR, src, to=dtypes.element(dst))

    def create_ptr_to_int(self, src, dst):
        """Pointer to integer (its real address)."""
        return self._apply(Op.PTR_TO_INT, src, to=dtypes.element(dst))

    def create_int_cast(self, src, dst, is_signed):
        """Integer width change: wrap, sign- or zero-extend by the source's signedness."""
        return self._cast(src, dst)

    def create_si_to_fp(self, src, dst):
        """Signed integer to float."""
        return self._cast(src, dst)

    def create_ui_to_fp(self, src, dst):
        """Unsigned integer to float."""
        return self._cast(src, dst)

    def create_fp_to_si(self, src, dst):
        """Float to signed integer (truncating, saturating)."""
        return self._cast(src, dst)

    def create_fp_to_ui(self, src, dst):
        """Float to unsigned integer (truncating, saturating)."""
        return self._cast(src, dst)

    def create_fp_to_fp(self, src, dst, rounding_mode=None):
        """Float to float conversion (round to nearest even by default, toward zero when asked)."""
        rtz = getattr(rounding_mode, "name", None) == "RTZ"
        return self._cast(src, dst, rounding="rz" if rtz else "rn")

    def create_fp_ext(self, src, dst):
        """Exact float widening."""
        return self._cast(src, dst)

    def create_fp_trunc(self, src, dst):
        """Float narrowing, round to nearest even."""
        return self._cast(src, dst)

    # ------------------------------------------------------------------ shapes

    def create_make_range(self, ret_ty, start, stop):
        """tl.arange: the same for every program."""
        return ops.arange(self.launch, start, stop)

    def create_splat(self, ret_ty, arg):
        """A scalar spread over a block."""
        return self._apply(Op.BROADCAST, arg, shape=tuple(ret_ty.shape))

    def create_unsplat(self, arg):
        """A 1-element block back to a scalar."""
        return self._apply(Op.RESHAPE, arg, shape=())

    def create_broadcast(self, arg, shape):
        """Broadcast a block to ``shape`` (same rank)."""
        return self._apply(Op.BROADCAST, arg, shape=tuple(shape))

    def create_expand_dims(self, arg, axis):
        """Insert a size-1 block axis."""
        return self._apply(Op.EXPAND_DIMS, arg, axis=axis)

    def create_reshape(self, arg, shape, allow_reorder=False):
        """Reshape the block (row-major)."""
        return self._apply(Op.RESHAPE, arg, shape=tuple(shape))

    def create_trans(self, arg, perm):
        """Permute block axes; the program axis stays first."""
        return self._apply(Op.PERMUTE, arg, perm=tuple(perm))

    def create_cat(self, lhs, rhs):
        """Concatenate two blocks along the first block axis."""
        return self._apply(Op.CAT, lhs, rhs)

    def create_join(self, lhs, rhs):
        """Stack two blocks along a new last axis."""
        return self._apply(Op.JOIN, lhs, rhs)

    def create_split(self, val):
        """Split the last axis (of size 2) into two blocks."""
        return self._apply(Op.SPLIT, val, index=0), self._apply(Op.SPLIT, val, index=1)

    def create_gather(self, src, indices, axis):
        """tl.gather: pick along ``axis`` by index."""
        return self._apply(Op.GATHER, src, indices, axis=axis)

    def create_histogram(self, data, bins, mask=None):
        """Per-program histogram over [0, bins); values outside are dropped."""
        inputs = (data,) if mask is None else (data, mask)
        return self._apply(Op.HISTOGRAM, *inputs, bins=bins)

    # ------------------------------------------------------------------ pointers and memory

    def create_addptr(self, ptr, offset):
        """ptr + offset elements."""
        return self._apply(Op.PTR_ADD, ptr, offset)

    def create_load(self, ptr, cache_policy=None, is_volatile=False):
        """Unmasked load."""
        return access.load(self.launch, ptr, volatile=is_volatile)

    def create_masked_load(self, ptrs, mask, other, cache_policy=None, is_volatile=False):
        """Masked load; disabled lanes take ``other`` (or zero)."""
        return access.load(self.launch, ptrs, mask, other, volatile=is_volatile)

    def create_store(self, ptr, value, cache_policy=None):
        """Unmasked store."""
        return access.store(self.launch, ptr, value)

    def create_masked_store(self, ptrs, value, mask, cache_policy=None):
        """Masked store."""
        return access.store(self.launch, ptrs, value, mask)

    def create_atomic_rmw(self, op, ptr, val, mask, sem=None, scope=None):
        """Atomic read-modify-write; returns the old values in program order."""
        from ...engine import atomics

        name, signed = version.atomic_op(op)
        return atomics.atomic(
            self.launch, name, ptr, [val], mask, signed=signed, **version.memory_order(sem, scope)
        )

    def create_atomic_cas(self, ptr, cmp, val, sem=None, scope=None):
        """Atomic compare-and-swap; returns the old values in program order."""
        from ...engine import atomics

        return atomics.atomic(self.launch, "cas", ptr, [cmp, val], **version.memory_order(sem, scope))

    def create_atomic_load(self, ptr, mask, sem=None, scope=None):
        """Atomic load (acquire by default)."""
        from ...engine import atomics

        return atomics.atomic(
            self.launch, "load", ptr, [], mask, **version.memory_order(sem, scope, "acquire")
        )

    def create_atomic_store(self, ptr, val, mask, sem=None, scope=None):
        """Atomic store (release by default)."""
        from ...engine import atomics

        atomics.atomic(self.launch, "store", ptr, [val], mask, **version.memory_order(sem, scope, "release"))

    def create_atomic_poll(self, ptr, expected, timeout_ns, sem=None, scope=None):
        """Spin until every lane reads ``expected`` (acquire by default); per lane, whether it did."""
        from ...engine import atomics

        order = version.memory_order(sem, scope, "acquire")
        return atomics.poll(self.launch, ptr, expected, timeout=isinstance(timeout_ns, Value), **order)

    # ------------------------------------------------------------------ tensor descriptors

    def create_make_tensor_descriptor(self, base, shape, strides, block_shape, is_signed, padding="zero"):
        """Device-side tensor descriptor; its rules are checked when it is made."""
        from ...engine import descriptors

        pad = "nan" if getattr(padding, "name", str(padding)).upper() in ("PAD_NAN", "NAN") else "zero"
        node = ops.node(self.launch, "make_tensor_descriptor", (base, *shape, *strides))
        desc = DescriptorValue(base, list(shape), list(strides), block_shape, pad, node)
        descriptors.check(self.launch, desc)
        return desc

    def create_descriptor_load(self, desc, indices, cache_policy=None):
        """Load a block at ``indices``; coordinates outside the shape read the padding."""
        from ...engine import descriptors

        return descriptors.load(self.launch, desc, indices)

    def create_descriptor_store(self, desc, value, indices):
        """Store a block at ``indices``; coordinates outside the shape are not written."""
        from ...engine import descriptors

        return descriptors.store(self.launch, desc, value, indices)

    def create_descriptor_gather(self, desc, x_offsets, y_offset, ty):
        """Gather rows ``x_offsets`` starting at column ``y_offset``."""
        from ...engine import descriptors

        return descriptors.gather(self.launch, desc, x_offsets, y_offset)

    def create_descriptor_scatter(self, desc, value, x_offsets, y_offset):
        """Scatter rows ``x_offsets`` starting at column ``y_offset``."""
        from ...engine import descriptors

        return descriptors.scatter(self.launch, desc, value, x_offsets, y_offset)

    def create_descriptor_reduce(self, kind, desc, value, indices):
        """Atomic reduction of a block into the descriptor's tensor."""
        from ...engine import descriptors

        return descriptors.reduce(self.launch, kind.name.lower(), desc, value, indices)

    # ------------------------------------------------------------------ dot

    def create_dot(self, a, b, d, input_precision=None, max_num_imprecise_acc=0):
        """Matrix product honouring ``input_precision`` and the accumulator type."""
        from ...engine import dot as engine_dot

        precision = getattr(input_precision, "name", input_precision)
        precision = (precision or self.options.default_dot_input_precision).lower()
        return engine_dot.dot(self.launch, a, b, d, precision, max_num_imprecise_acc)

    def create_dot_scaled(
        self, lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, fast_math, lhs_k_pack, rhs_k_pack, acc
    ):
        """Microscaled matrix product (mxfp4/mxfp8 operands with e8m0 scales)."""
        from ...ir import OpKind

        inputs = [v for v in (lhs, lhs_scale, rhs, rhs_scale, acc) if v is not None]

        def run(*_):
            return version.dot_scaled(
                lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, lhs_k_pack, rhs_k_pack, acc
            )

        return ops.compute(self.launch, OpKind.DOT, inputs, dtypes.FP32, run, shape=acc.shape, scaled=True)

    # ------------------------------------------------------------------ debugging

    def create_print(self, prefix, hex, values, is_signed=None):
        """device_print: one line per program, in program order."""
        self.launch.device_print(prefix, hex, values)

    def create_assert(self, condition, message):
        """device_assert: every program whose condition fails anywhere is reported."""
        self.launch.device_assert(condition, message)

    def create_assume(self, condition):
        """An assumption the compiler may use; not checked."""

    def create_barrier(self):
        """A barrier among the threads of a program (recorded; a program runs as one here)."""
        self.launch.barrier()

    def create_grid_dependency_wait(self):
        """Programmatic dependent launch: no effect on the CPU."""

    def create_grid_dependency_launch_dependents(self):
        """Programmatic dependent launch: no effect on the CPU."""


__all__ = ["Builder", "BuilderOptions", "ELEMENTWISE"]


def _table_methods() -> dict[str, Any]:
    """The builder's methods that tables define: a getter per type, a constant maker per type, and
    ``create_NAME`` per elementwise op (plain methods, so that a replayed loop finds them at once)."""

    def getter(ty: Any) -> Any:
        return lambda self: ty

    def constant(ty: Any) -> Any:
        return lambda self, value: ops.constant(value, ty)

    def elementwise(op: Op, params: dict) -> Any:
        return lambda self, *args: self._apply(op, *args, **params)

    return {
        **{name: getter(ty) for name, ty in _TYPE_GETTERS.items()},
        **{name: constant(ty) for name, ty in _CONSTANTS.items()},
        **{f"create_{name}": elementwise(op, params) for name, (op, params) in ELEMENTWISE.items()},
    }


for _name, _method in _table_methods().items():
    if not hasattr(Builder, _name):  # a def of the class wins, as it did over __getattr__
        setattr(Builder, _name, _method)
