"""Triton's IR-builder interface, implemented on engine values.

``triton.language`` (its front end and type rules) calls ``create_*`` methods on a builder; the
compiler's builder emits MLIR, ours computes. Every value carries a leading program axis, so one
call serves every program of the batch. Shapes always come from Triton's types, never from array
shapes, and block axis ``k`` is array axis ``k + 1``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import triton.language as tl

from ...engine import affine, ops
from ...engine import numerics as nx
from ...engine.errors import UnsupportedOpError
from ...engine.memory import UNKNOWN
from ...engine.values import DescriptorValue, Value, common_batch
from ...ir import Node, OpKind
from . import libdevice, version
from .factored import FactoredOps

_BUILDER_DTYPES = {
    "get_half_ty": tl.float16,
    "get_bf16_ty": tl.bfloat16,
    "get_float_ty": tl.float32,
    "get_double_ty": tl.float64,
    "get_int1_ty": tl.int1,
    "get_int8_ty": tl.int8,
    "get_uint8_ty": tl.uint8,
    "get_int16_ty": tl.int16,
    "get_uint16_ty": tl.uint16,
    "get_int32_ty": tl.int32,
    "get_uint32_ty": tl.uint32,
    "get_int64_ty": tl.int64,
    "get_uint64_ty": tl.uint64,
    "get_fp8e4nv_ty": tl.float8e4nv,
    "get_fp8e4b15_ty": tl.float8e4b15,
    "get_fp8e4b8_ty": tl.float8e4b8,
    "get_fp8e5_ty": tl.float8e5,
    "get_fp8e5b16_ty": tl.float8e5b16,
    "get_void_ty": tl.void,
}

_CONSTANTS = {
    "get_int1": tl.int1,
    "get_int8": tl.int8,
    "get_uint8": tl.uint8,
    "get_int16": tl.int16,
    "get_uint16": tl.uint16,
    "get_int32": tl.int32,
    "get_uint32": tl.uint32,
    "get_int64": tl.int64,
    "get_uint64": tl.uint64,
    "get_fp16": tl.float16,
    "get_bf16": tl.bfloat16,
    "get_fp32": tl.float32,
    "get_fp64": tl.float64,
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
    max_num_imprecise_acc_default: int = 0
    backend_name: str = "tilescope"
    instrumentation_mode: str = ""


class Builder(FactoredOps):
    """Implements the ``create_*`` interface of Triton's IR builder over engine values."""

    def __init__(self, engine: Any, options: BuilderOptions | None = None):
        self.engine = engine  # the running launch: sites, memory, hub, current batch
        self.options = options or BuilderOptions()
        self.codegen_fns = {
            "convert_custom_types": version.convert_custom_types,
            "min_dot_size": lambda lhs, rhs: (1, 1, 1),
        }

    # ------------------------------------------------------------------ helpers

    def _node(self, op: str, inputs: tuple) -> Node:
        return Node(op, self.engine.site(), tuple(v.node for v in inputs if getattr(v, "node", None)))

    def _value(self, data, dtype, op: str, *inputs, prov: int = UNKNOWN) -> Value:
        self.engine.budget(data)
        return Value(data, dtype, self._node(op, inputs), prov)

    def _skipped(self, dtype, op: str, *inputs) -> Value | None:
        """A skipped result when any input was skipped (demand-driven runs), else None."""
        skipped = [v.skipped for v in inputs if isinstance(v, Value) and v.is_skipped]
        if not skipped:
            return None
        return Value(None, dtype, self._node(op, inputs), skipped=frozenset().union(*skipped))

    def _map(self, op: str, dtype, fn, *inputs, prov: int = UNKNOWN, shape_op: bool = False) -> Value:
        """Apply ``fn`` to the inputs' arrays; carry skipped-ness and int32-overflow lanes along."""
        skipped = self._skipped(dtype, op, *inputs)
        if skipped is not None:
            return skipped
        value = self._value(fn(*(v.data for v in inputs)), dtype, op, *inputs, prov=prov)
        if self.engine.track_overflow and any(v.wrapped is not None for v in inputs):
            value.wrapped = _carry_wrapped(fn, inputs, value.data.shape, shape_op)
        return value

    def _const(self, value, dtype) -> Value:
        return Value(np.array([value]).astype(nx.storage_dtype(dtype)), dtype, Node("const", None))

    def unsupported(self, what: str):
        """Raise the error for an operation the engine does not implement."""
        site = self.engine.site()
        raise UnsupportedOpError(
            f"`{what}` is not supported by tilescope's engine", kernel=self.engine.kernel_name, site=site
        )

    def __getattr__(self, name: str):
        if name in _BUILDER_DTYPES:
            ty = _BUILDER_DTYPES[name]
            return lambda: ty
        if name in _CONSTANTS:
            ty = _CONSTANTS[name]
            return lambda value: self._const(value, ty)
        if name.startswith("create_"):
            op = name[len("create_") :]
            if op in ops.FLOAT_BINARY or op in ops.INT_BINARY:
                return lambda lhs, rhs: self._binary(op, lhs, rhs)
            if op in ops.COMPARE:
                fn = ops.COMPARE[op]
                return lambda lhs, rhs: (
                    self._lazy_compare(op, lhs, rhs)
                    or self._map(op, tl.int1, lambda a, b: fn(lhs.dtype, a, b), lhs, rhs)
                )
            if op in ops.FLOAT_UNARY:
                fn = ops.FLOAT_UNARY[op]
                return lambda arg: self._map(op, arg.dtype, lambda a: fn(arg.dtype, a), arg)
            if op in ops.INT_UNARY:
                fn = ops.INT_UNARY[op]
                return lambda arg: self._map(op, arg.dtype, lambda a: fn(arg.dtype, a), arg)
            return lambda *args, **kwargs: self.unsupported(f"tl op {op}")
        raise AttributeError(name)

    # ------------------------------------------------------------------ types and constants

    def get_ptr_ty(self, elt_ty, addr_space=1):
        """Pointer type to ``elt_ty``."""
        return tl.pointer_type(elt_ty, addr_space)

    def get_block_ty(self, dtype, shape):
        """Block type of ``shape`` over ``dtype``."""
        return tl.block_type(dtype, shape)

    def create_tensor_descriptor_type(self, block_ty, is_signed):
        """Descriptor types carry no runtime state here."""
        return block_ty

    def get_null_value(self, ty):
        """Zero of type ``ty``."""
        return self._const(0, ty)

    def get_all_ones_value(self, ty):
        """All bits set in type ``ty``."""
        dt = nx.storage_dtype(ty)
        if dt == np.bool_:
            return self._const(True, ty)
        return Value(np.array([-1]).astype(np.int64).astype(dt), ty, Node("const", None))

    def get_cache_policy(self, cache_modifier, eviction_policy):
        """Cache hints have no effect on the CPU."""
        return None

    # ------------------------------------------------------------------ programs

    def create_get_program_id(self, axis):
        """Program id along ``axis`` for each program of the batch."""
        node = Node(f"program_id({axis})", self.engine.site())
        if self._factoring() and self.engine.pids.shape[0] > 1:
            scalar = self.engine.pids[:, axis].astype(np.int64)
            return Value(None, tl.int32, node, lazy=affine.Affine(scalar, np.zeros(1, dtype=np.int64)))
        return Value(self.engine.pids[:, axis].copy(), tl.int32, node)

    def create_get_num_programs(self, axis):
        """Grid size along ``axis`` (the same for every program)."""
        return Value(
            np.array([self.engine.grid[axis]], dtype=np.int32),
            tl.int32,
            Node(f"num_programs({axis})", self.engine.site()),
        )

    # ------------------------------------------------------------------ arithmetic

    def _binary(self, op: str, lhs: Value, rhs: Value) -> Value:
        ty = lhs.dtype
        if op in ("add", "sub", "mul"):
            lazy = self._lazy_arith(op, lhs, rhs)
            if lazy is not None:
                return lazy
        elif op == "and":
            lazy = self._lazy_and(lhs, rhs)
            if lazy is not None:
                return lazy
        if op in ops.FLOAT_BINARY:
            fn = ops.FLOAT_BINARY[op]
        else:
            fn = ops.INT_BINARY[op]
        result = self._map(op, ty, lambda a, b: fn(ty, a, b), lhs, rhs)
        if self.engine.track_overflow and op in _WIDE and ty.name == "int32" and not result.is_skipped:
            wide = _WIDE[op](lhs.data.astype(np.int64), rhs.data.astype(np.int64))
            wrapped = wide != result.data
            if wrapped.any():
                result.wrapped = wrapped if result.wrapped is None else result.wrapped | wrapped
                result.node = dataclasses.replace(result.node, wrapped=True)
        return result

    def create_fma(self, x, y, z):
        """x * y + z rounded once."""
        return self._map("fma", z.dtype, lambda a, b, c: nx.fma(a, b, c, z.dtype), x, y, z)

    def create_clampf(self, arg, lo, hi, propagate_nans):
        """clamp(arg, lo, hi); NaN propagates only when asked."""
        ty = arg.dtype
        prop = getattr(propagate_nans, "name", str(propagate_nans)) == "ALL"

        def clamp(a, b, c):
            a32, b32, c32 = (nx.to_float32(v, ty) if nx.is_low_float(ty) else v for v in (a, b, c))
            r = np.minimum(np.maximum(a32, b32), c32) if prop else np.fmin(np.fmax(a32, b32), c32)
            return nx.from_float(r, ty) if nx.is_low_float(ty) else r.astype(a.dtype)

        return self._map("clamp", ty, clamp, arg, lo, hi)

    def create_select(self, cond, lhs, rhs):
        """where(cond, lhs, rhs); a pointer keeps its origin when both sides share it."""
        prov = lhs.prov if lhs.prov == rhs.prov else UNKNOWN
        return self._map("where", lhs.dtype, lambda c, a, b: np.where(c, a, b), cond, lhs, rhs, prov=prov)

    def create_extern_elementwise(self, lib_name, lib_path, symbol, args, ret_type, is_pure):
        """A libdevice function, by its symbol."""
        fn = libdevice.lookup(symbol)
        if fn is None:
            self.unsupported(f"libdevice function {symbol}")
        ret = nx.scalar_type(ret_type)
        return self._map(symbol, ret, lambda *xs: fn(ret, [a.dtype for a in args], *xs), *args)

    def create_inline_asm(self, asm, constraints, values, ty, is_pure, pack):
        """Inline PTX cannot run on the CPU."""
        self.unsupported("tl.inline_asm_elementwise")

    # ------------------------------------------------------------------ casts

    def _cast(self, src: Value, dst, op: str, fn) -> Value:
        dst = nx.scalar_type(dst)
        return self._map(op, dst, fn, src)

    def create_bitcast(self, src, dst):
        """Reinterpret bits."""
        dst = nx.scalar_type(dst)
        return self._map("bitcast", dst, lambda a: a.view(nx.storage_dtype(dst)), src, prov=src.prov)

    def create_int_to_ptr(self, src, dst):
        """Integer to pointer: the origin is found later by address."""
        return self._map("int_to_ptr", dst, lambda a: a.astype(np.int64).view(np.uint64), src)

    def create_ptr_to_int(self, src, dst):
        """Pointer to integer (its real address)."""
        dst = nx.scalar_type(dst)
        return self._map("ptr_to_int", dst, lambda a: a.view(np.int64).astype(nx.storage_dtype(dst)), src)

    def create_int_cast(self, src, dst, is_signed):
        """Integer width change: wrap, sign- or zero-extend by the source's signedness."""
        target = nx.storage_dtype(dst)
        if isinstance(src.lazy, affine.Affine) and target == np.int64:
            return self._lazy("int_cast", nx.scalar_type(dst), src.lazy, src)

        def cast(a):
            if target == np.bool_:
                return a != 0
            return a.astype(target)

        return self._cast(src, dst, "int_cast", cast)

    def _int_to_float(self, src, dst):
        ty = nx.scalar_type(dst)

        def cast(a):
            if a.dtype == np.bool_:
                a = a.astype(np.uint8)
            if ty.name in ("fp32", "fp64", "fp16"):
                return a.astype(nx.storage_dtype(ty))
            return nx.from_float(a.astype(np.float64), ty)

        return self._cast(src, dst, "int_to_float", cast)

    create_si_to_fp = _int_to_float
    create_ui_to_fp = _int_to_float

    def _float_to_int(self, src, dst):
        src_ty = src.dtype
        target = nx.storage_dtype(dst)
        return self._cast(src, dst, "float_to_int", lambda a: nx.float_to_int(_as_float(a, src_ty), target))

    create_fp_to_si = _float_to_int
    create_fp_to_ui = _float_to_int

    def create_fp_to_fp(self, src, dst, rounding_mode=None):
        """Float to float conversion (RNE by default, RTZ when asked), fp8 saturating."""
        rtz = getattr(rounding_mode, "name", None) == "RTZ"
        src_ty = src.dtype
        return self._cast(src, dst, "fp_to_fp", lambda a: nx.convert_float(a, src_ty, dst, rtz))

    def create_fp_ext(self, src, dst):
        """Exact float widening."""
        return self.create_fp_to_fp(src, dst)

    def create_fp_trunc(self, src, dst):
        """Float narrowing, round to nearest even."""
        return self.create_fp_to_fp(src, dst)

    # ------------------------------------------------------------------ shapes

    def create_make_range(self, ret_ty, start, stop):
        """tl.arange: the same for every program."""
        return Value(np.arange(start, stop, dtype=np.int32)[None], tl.int32, self._node("arange", ()))

    def create_splat(self, ret_ty, arg):
        """A scalar (or 1-element block) spread over a block."""
        shape = tuple(ret_ty.shape)

        def splat(a):
            a = a.reshape(a.shape[0], *([1] * len(shape)))
            return np.broadcast_to(a, (a.shape[0], *shape))

        lazy = self._lazy_shape("splat", splat, arg)
        if lazy is not None:
            return lazy
        return self._map("splat", arg.dtype, splat, arg, prov=arg.prov, shape_op=True)

    def create_unsplat(self, arg):
        """A 1-element block back to a scalar."""
        return self._map(
            "unsplat", arg.dtype, lambda a: a.reshape(a.shape[0]), arg, prov=arg.prov, shape_op=True
        )

    def create_broadcast(self, arg, shape):
        """Broadcast a block to ``shape`` (same rank)."""
        fn = lambda a: np.broadcast_to(a, (a.shape[0], *shape))  # noqa: E731
        return self._lazy_shape("broadcast", fn, arg) or self._map(
            "broadcast", arg.dtype, fn, arg, prov=arg.prov, shape_op=True
        )

    def create_expand_dims(self, arg, axis):
        """Insert a size-1 block axis."""
        fn = lambda a: np.expand_dims(a, axis + 1)  # noqa: E731
        return self._lazy_shape("expand_dims", fn, arg) or self._map(
            "expand_dims", arg.dtype, fn, arg, prov=arg.prov, shape_op=True
        )

    def create_reshape(self, arg, shape, allow_reorder=False):
        """Reshape the block (row-major)."""
        fn = lambda a: a.reshape(a.shape[0], *shape)  # noqa: E731
        return self._lazy_shape("reshape", fn, arg) or self._map(
            "reshape", arg.dtype, fn, arg, prov=arg.prov, shape_op=True
        )

    def create_trans(self, arg, perm):
        """Permute block axes; the program axis stays first."""
        axes = (0, *[p + 1 for p in perm])
        fn = lambda a: np.transpose(a, axes)  # noqa: E731
        return self._lazy_shape("trans", fn, arg) or self._map(
            "trans", arg.dtype, fn, arg, prov=arg.prov, shape_op=True
        )

    def create_cat(self, lhs, rhs):
        """Concatenate two blocks along the first block axis."""
        return self._map("cat", lhs.dtype, lambda a, b: np.concatenate(common_batch(a, b), axis=1), lhs, rhs)

    def create_join(self, lhs, rhs):
        """Stack two blocks along a new last axis."""
        prov = lhs.prov if lhs.prov == rhs.prov else UNKNOWN
        return self._map(
            "join", lhs.dtype, lambda a, b: np.stack(common_batch(a, b), axis=-1), lhs, rhs, prov=prov
        )

    def create_split(self, val):
        """Split the last axis (of size 2) into two blocks."""
        return (
            self._map("split", val.dtype, lambda a: a[..., 0], val, prov=val.prov),
            self._map("split", val.dtype, lambda a: a[..., 1], val, prov=val.prov),
        )

    def create_gather(self, src, indices, axis):
        """tl.gather: pick along ``axis`` by index."""

        def gather(s, i):
            s, i = common_batch(s, i)
            return np.take_along_axis(s, i.astype(np.int64), axis=axis + 1)

        return self._map("gather", src.dtype, gather, src, indices)

    def create_histogram(self, data, bins, mask=None):
        """Per-program histogram over [0, bins); values outside are dropped."""
        inputs = (data,) if mask is None else (data, mask)

        def hist(d, m=None):
            d = d.reshape(d.shape[0], -1).astype(np.int64)
            valid = (d >= 0) & (d < bins)
            if m is not None:
                valid &= np.broadcast_to(m.reshape(m.shape[0], -1), d.shape)
            rows = np.broadcast_to(np.arange(d.shape[0])[:, None], d.shape)
            flat = (rows * bins + d)[valid]
            return np.bincount(flat, minlength=d.shape[0] * bins).reshape(d.shape[0], bins).astype(np.int32)

        return self._map("histogram", tl.int32, hist, *inputs)

    # ------------------------------------------------------------------ pointers and memory

    def create_addptr(self, ptr, offset):
        """ptr + offset elements (byte arithmetic wraps like the GPU's 64-bit add)."""
        size = nx.itemsize(ptr.dtype.element_ty)

        lazy = self._lazy_addptr(ptr, offset, size)
        if lazy is not None:
            return lazy

        def add(p, o):
            return p + (o.astype(np.int64) * size).view(np.uint64)

        return self._map("addptr", ptr.dtype, add, ptr, offset, prov=ptr.prov)

    def create_load(self, ptr, cache_policy=None, is_volatile=False):
        """Unmasked load."""
        return self.engine.memory_op.load(ptr, None, None)

    def create_masked_load(self, ptrs, mask, other, cache_policy=None, is_volatile=False):
        """Masked load; disabled lanes take ``other`` (or zero)."""
        return self.engine.memory_op.load(ptrs, mask, other)

    def create_store(self, ptr, value, cache_policy=None):
        """Unmasked store."""
        return self.engine.memory_op.store(ptr, value, None)

    def create_masked_store(self, ptrs, value, mask, cache_policy=None):
        """Masked store."""
        return self.engine.memory_op.store(ptrs, value, mask)

    def create_atomic_rmw(self, op, ptr, val, mask, sem=None, scope=None):
        """Atomic read-modify-write; returns the old values in program order."""
        return self.engine.memory_op.atomic_rmw(op.name, ptr, val, mask)

    def create_atomic_cas(self, ptr, cmp, val, sem=None, scope=None):
        """Atomic compare-and-swap; returns the old values in program order."""
        return self.engine.memory_op.atomic_cas(ptr, cmp, val)

    def create_atomic_load(self, ptr, mask, sem=None, scope=None):
        """An atomic load reads like a volatile load."""
        return self.engine.memory_op.load(ptr, mask, None)

    def create_atomic_store(self, ptr, val, mask, sem=None, scope=None):
        """An atomic store writes like a store."""
        return self.engine.memory_op.store(ptr, val, mask)

    # ------------------------------------------------------------------ tensor descriptors

    def create_make_tensor_descriptor(self, base, shape, strides, block_shape, is_signed, padding="zero"):
        """Device-side tensor descriptor; its rules are checked when it is made."""
        pad = "nan" if getattr(padding, "name", str(padding)).upper() in ("PAD_NAN", "NAN") else "zero"
        desc = DescriptorValue(
            base,
            list(shape),
            list(strides),
            block_shape,
            pad,
            self._node("make_tensor_descriptor", (base, *shape, *strides)),
        )
        self.engine.memory_op.check_descriptor(desc)
        return desc

    def create_descriptor_load(self, desc, indices, cache_policy=None):
        """Load a block at ``indices``; coordinates outside the shape read the padding."""
        return self.engine.memory_op.descriptor_load(desc, indices)

    def create_descriptor_store(self, desc, value, indices):
        """Store a block at ``indices``; coordinates outside the shape are not written."""
        return self.engine.memory_op.descriptor_store(desc, value, indices)

    def create_descriptor_gather(self, desc, x_offsets, y_offset, ty):
        """Gather rows ``x_offsets`` starting at column ``y_offset``."""
        return self.engine.memory_op.descriptor_gather(desc, x_offsets, y_offset)

    def create_descriptor_scatter(self, desc, value, x_offsets, y_offset):
        """Scatter rows ``x_offsets`` starting at column ``y_offset``."""
        return self.engine.memory_op.descriptor_scatter(desc, value, x_offsets, y_offset)

    def create_descriptor_reduce(self, kind, desc, value, indices):
        """Atomic reduction of a block into the descriptor's tensor."""
        return self.engine.memory_op.descriptor_reduce(kind.name, desc, value, indices)

    # ------------------------------------------------------------------ dot

    def create_dot(self, a, b, d, input_precision=None, max_num_imprecise_acc=0):
        """Matrix product honouring ``input_precision`` and the accumulator type."""
        from ...engine.dot import dot

        precision = getattr(input_precision, "name", input_precision)
        precision = (precision or self.options.default_dot_input_precision).lower()
        out_ty = d.dtype
        self.engine.emit_compute(OpKind.DOT, a, b)
        return self._map(
            "dot", out_ty, lambda x, y, acc: dot(x, y, acc, a.dtype, b.dtype, out_ty, precision), a, b, d
        )

    def create_dot_scaled(
        self, lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, fast_math, lhs_k_pack, rhs_k_pack, acc
    ):
        """Microscaled matrix product (mxfp4/mxfp8 operands with e8m0 scales)."""
        inputs = [v for v in (lhs, lhs_scale, rhs, rhs_scale, acc) if v is not None]

        def run(*_):
            return version.dot_scaled(
                lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, lhs_k_pack, rhs_k_pack, acc
            )

        return self._map("dot_scaled", tl.float32, run, *inputs)

    # ------------------------------------------------------------------ debugging

    def create_print(self, prefix, hex, values, is_signed=None):
        """device_print: one line per program, in program order."""
        self.engine.device_print(prefix, hex, values)

    def create_assert(self, condition, message):
        """device_assert: every program whose condition fails anywhere is reported."""
        self.engine.device_assert(condition, message)

    def create_assume(self, condition):
        """An assumption the compiler may use; not checked."""

    def create_barrier(self):
        """Barriers order threads of one program; a program runs as one here."""

    def create_grid_dependency_wait(self):
        """Programmatic dependent launch: no effect on the CPU."""

    def create_grid_dependency_launch_dependents(self):
        """Programmatic dependent launch: no effect on the CPU."""


def _as_float(a: np.ndarray, ty) -> np.ndarray:
    """Float data as float32/float64 arrays (fp8 and bf16 decoded)."""
    if nx.is_low_float(ty):
        return nx.to_float32(a, ty)
    return a


_WIDE = {"add": np.add, "sub": np.subtract, "mul": np.multiply}


def _carry_wrapped(fn, inputs, shape: tuple, shape_op: bool) -> np.ndarray | None:
    """Lanes of a result that depend on a wrapped int32 computation.

    Shape ops move the mask exactly as they move the data; elementwise ops OR their inputs' masks.
    """
    masks = [v.wrapped if v.wrapped is not None else np.zeros(v.data.shape, dtype=bool) for v in inputs]
    if shape_op:
        return np.asarray(fn(*masks))
    out = np.zeros(shape, dtype=bool)
    for m in masks:
        try:
            out |= np.broadcast_to(m, shape)
        except ValueError:
            continue
    return out
