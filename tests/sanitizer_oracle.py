"""Brute-force per-lane sanitizer oracle built on Triton 3.9's own interpreter.

``run_oracle(case)`` returns the findings a sanitizer must report for one corpus case. It shares no
code with tilescope: it runs the kernel one program at a time with Triton's interpreter
(``triton.runtime.interpreter``), in-process, and replaces every interpreter builder method that
touches memory, so no raw pointer is ever dereferenced.

How it runs a kernel
  * In-process, without ``TRITON_INTERPRET`` in the environment: the corpus kernels stay
    ``JITFunction`` objects (what tilescope's engine takes), and for the length of one run the oracle
    sets ``knobs.runtime.interpret``, routes nested ``@triton.jit`` calls (``tl.cdiv``, ``tl.sum``,
    user helpers) to interpreted copies, patches Triton's language namespaces the way the interpreter
    does, and restores everything afterwards. The launch loop is the oracle's own (it knows each
    argument's name), visiting programs in linear order ``x + gx * (y + gy * z)``.
  * ``options.debug`` follows ``kernel.debug`` (``@triton.jit(debug=True)``) or a ``debug=True``
    launch keyword, so ``tl.device_assert`` is emitted exactly as in a debug build. Triton's own
    overflow asserts (``sanitize_overflow``) stay off; overflow is checked as described below.

Memory model
  * Every tensor argument (and the base of every host ``TensorDescriptor``) is an allocation whose
    valid bytes are the *view's* extent: ``data_ptr`` up to the end of the view's last element
    (``data_ptr + (sum((size-1)*stride) + 1) * itemsize``), not the whole storage.
  * Every pointer-typed ``TensorHandle`` carries a per-lane tag array in ``handle.attr``: the
    argument the pointer was derived from (provenance) and an int32-overflow taint bit. Tags follow
    addptr, splat, broadcast, expand_dims, reshape, trans/``.T``, select/where, cat, join, split,
    gather, bitcasts and integer arithmetic (so ``ptr -> int -> ptr`` keeps provenance). A pointer
    loaded from memory, or made from an untagged integer, takes the allocation containing its
    address as provenance.
  * A lane is bad when it is enabled (mask true) and its access ``[addr, addr + size)`` is not
    inside the extent of its provenance argument (so a pointer derived from ``a`` that lands inside
    ``b`` is bad). Bad lanes read 0 and write nothing; good lanes read and write through NumPy views
    of the tensors' storages (a gather, never a raw address). Atomics apply lane by lane in row-major
    order.
  * Tensor descriptors: rules (rank 1-5, base 16-byte aligned, last stride 1, other strides
    multiples of 16 bytes, last block dimension >= 16 bytes) are checked on the runtime values
    before Triton's own checks (which raise or assert on some of them). A broken descriptor gives one
    ``descriptor rule`` event per program that makes it, and its loads return padding and its stores
    do nothing (no further findings from it). For a valid descriptor, coordinates outside its shape
    are padding (disabled lanes); lanes inside its shape are checked against the allocation like
    any other access. Triton's interpreter-only assertion that the innermost block offset is
    16-byte aligned is not applied.

Int32 overflow (sound for the address path, by taint)
  Each signed integer add, sub, mul or shl narrower than 64 bits is recomputed in int64; a lane
  whose int64 result differs from the wrapped one is tainted, as is a lane of a signed narrowing
  cast that changes the value. Taint follows the data flow into addptr. At a memory access, an
  enabled lane whose pointer is tainted is reported as ``int32 overflow`` (and, like an
  out-of-bounds lane, reads 0 and writes nothing) instead of being bounds-checked. Wraps in values
  that never reach an address (hashes, masks) are not reported; unsigned arithmetic wraps
  legitimately and is never tainted.

Finding format (one per site, kind and argument)
  ``kind``, ``argument`` (name of the tensor argument; None for device asserts), ``line``/``column``
  (1-based; the start of the access call expression, taken from ``co_positions`` of the innermost
  frame outside Triton), ``program_ids`` (sorted ``(x, y, z)`` tuples), ``lanes`` (bad lane-events
  over all programs and iterations; for descriptor rules, the number of programs that broke one;
  for asserts, failing lanes), ``first_element`` and ``iteration`` of the first bad event in order
  (linear program id, then execution order, then row-major lane index).

  ``first_element`` for memory findings is the element the first bad lane addresses, in the
  argument's view coordinates: with ``e = (addr - data_ptr) // itemsize`` (floor division, so
  addresses before the view give negative values), the dimensions with a non-zero stride are visited
  from the largest stride to the smallest (ties in dimension order) with
  ``i_d, e = divmod(e, stride_d)``; stride-0 dimensions get 0 and a remainder left after the smallest
  stride is dropped. For a contiguous ``(M, N)`` tensor that is ``divmod(e, N)``, e.g. ``(64, 0)``
  one row past a 64-row tensor, ``(-1, N - 1)`` one element before it; a 0-d tensor gives ``(e,)``. For device
  asserts it is the row-major lane index in the condition's block (``()`` for a scalar); for
  descriptor rules it is None. ``iteration`` is the 0-based iteration index of the innermost
  ``for``/``while`` loop running at that moment (None outside loops).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import triton
import triton.language as tl
from triton.runtime import interpreter as _interp
from triton.runtime.jit import JITFunction
from triton.tools.tensor_descriptor import TensorDescriptor

KINDS = (
    "out-of-bounds load",
    "out-of-bounds store",
    "out-of-bounds atomic",
    "descriptor rule",
    "int32 overflow",
    "device assert",
)

_TAG = "tilescope_oracle_tag"  # per-lane int64: ((argument index + 1) << 1) | overflow taint
_TRITON_DIR = os.path.dirname(triton.__file__)
_THIS_FILE = os.path.abspath(__file__)


# ----------------------------------------------------------------------------------------------
# Findings


@dataclasses.dataclass
class _Acc:
    """Aggregate of one (site, kind, argument) key while a launch runs."""

    kind: str
    argument: str | None
    line: int
    column: int
    program_ids: set = dataclasses.field(default_factory=set)
    lanes: int = 0
    first_element: tuple | None = None
    iteration: int | None = None
    seen: bool = False

    def as_dict(self) -> dict:
        return {
            "kind": self.kind,
            "argument": self.argument,
            "line": self.line,
            "column": self.column,
            "program_ids": sorted(self.program_ids),
            "lanes": self.lanes,
            "first_element": self.first_element,
            "iteration": self.iteration,
        }


class _Recorder:
    def __init__(self) -> None:
        self.acc: dict[tuple, _Acc] = {}
        self.order: list[tuple] = []
        self.pid: tuple[int, int, int] = (0, 0, 0)

    def add(self, kind: str, argument: str | None, lanes: int, first_element, site=None) -> None:
        file, line, column = site if site is not None else _user_site()
        key = (file, line, column, kind, str(argument))
        acc = self.acc.get(key)
        if acc is None:
            acc = self.acc[key] = _Acc(kind, argument, line, column)
            self.order.append(key)
        acc.program_ids.add(self.pid)
        acc.lanes += int(lanes)
        if not acc.seen:
            acc.seen = True
            acc.first_element = first_element
            acc.iteration = _LOOPS.current()

    def findings(self) -> list[dict]:
        return [self.acc[k].as_dict() for k in sorted(self.order)]


# tilescope guards Triton's builtins (pass-through outside its own launches): skip its frames too
_TILESCOPE_DIR = os.path.dirname(os.path.abspath(__import__("tilescope").__file__))


def _user_site() -> tuple[str, int, int]:
    """(file, line, column) of the call running in the innermost frame outside Triton and here."""
    frame = sys._getframe(1)
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if not name.startswith(_TRITON_DIR) and name != _THIS_FILE and not name.startswith(_TILESCOPE_DIR):
            positions = list(frame.f_code.co_positions())
            line, _end, col, _end_col = positions[frame.f_lasti // 2]
            return name, (line if line is not None else frame.f_lineno), (col + 1 if col is not None else 0)
        frame = frame.f_back
    return ("", 0, 0)


# ----------------------------------------------------------------------------------------------
# Loop iteration counters, inserted into the kernel's AST


class _LoopStack:
    """Iteration index of every loop currently running in the kernel, innermost last."""

    def __init__(self) -> None:
        self.stack: list[int] = []

    def current(self) -> int | None:
        return self.stack[-1] if self.stack else None

    def iterate(self, iterable):
        self.stack.append(-1)
        depth = len(self.stack)
        try:
            for value in iterable:
                self.stack[depth - 1] += 1
                yield value
        finally:
            del self.stack[depth - 1 :]

    def enter(self) -> None:
        self.stack.append(0)

    def tick(self) -> None:
        self.stack[-1] += 1

    def leave(self) -> None:
        self.stack.pop()


_LOOPS = _LoopStack()
_LOOPS_NAME = "__tilescope_oracle_loops__"


class _LoopCounter(ast.NodeTransformer):
    """Wraps ``for`` iterables and ``while`` bodies so the oracle knows the current iteration."""

    def _call(self, method: str, args: list) -> ast.Call:
        func = ast.Attribute(value=ast.Name(id=_LOOPS_NAME, ctx=ast.Load()), attr=method, ctx=ast.Load())
        return ast.Call(func=func, args=args, keywords=[])

    def visit_For(self, node: ast.For):
        self.generic_visit(node)
        node.iter = ast.copy_location(self._call("iterate", [node.iter]), node.iter)
        return node

    def visit_While(self, node: ast.While):
        self.generic_visit(node)
        # The condition evaluated before iteration i belongs to iteration i (Triton has no continue).
        node.body = node.body + [ast.copy_location(ast.Expr(self._call("tick", [])), node)]
        enter = ast.copy_location(ast.Expr(self._call("enter", [])), node)
        leave = ast.copy_location(ast.Expr(self._call("leave", [])), node)
        return [enter, node, leave]


class _Rewriter(_interp.FunctionRewriter):
    """Triton's interpreter rewrite plus loop counters, compiled without touching module globals."""

    def _transform_ast(self, src):
        tree = _LoopCounter().visit(super()._transform_ast(src))
        ast.fix_missing_locations(tree)
        return tree

    def _compile_and_exec(self, transformed_ast):
        # Triton's version adds the interpreter's globals to the kernel module's; a snapshot instead
        # leaves the user's and Triton's modules as they were.
        code = compile(transformed_ast, filename=self.filename, mode="exec")
        scope = {**vars(_interp), **self.fn.__globals__, _LOOPS_NAME: _LOOPS}
        local: dict = {}
        exec(code, scope, local)
        return local[self.fn.__name__]


_REWRITTEN: dict[Callable, Callable] = {}


def _rewritten(fn: Callable) -> Callable:
    if fn not in _REWRITTEN:
        _REWRITTEN[fn] = _Rewriter(fn).rewrite_ast()
    return _REWRITTEN[fn]


# ----------------------------------------------------------------------------------------------
# Allocations and tags


@dataclasses.dataclass
class _Allocation:
    name: str
    index: int
    data_ptr: int
    itemsize: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    lo: int  # first valid byte address of the view
    hi: int  # one past the last valid byte address of the view
    storage_ptr: int
    storage: np.ndarray  # the whole storage as writable bytes (shares memory with the tensor)

    @classmethod
    def of(cls, name: str, index: int, t: torch.Tensor) -> _Allocation:
        if any(s < 0 for s in t.stride()):
            raise NotImplementedError(f"{name}: negative strides")
        last = sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True))
        span = 0 if t.numel() == 0 else last + 1
        storage = t.untyped_storage()
        data = torch.empty(0, dtype=torch.uint8).set_(storage).numpy()
        return cls(
            name,
            index,
            t.data_ptr(),
            t.element_size(),
            tuple(t.shape),
            tuple(t.stride()),
            t.data_ptr(),
            t.data_ptr() + span * t.element_size(),
            storage.data_ptr(),
            data,
        )

    def coordinates(self, addr: int) -> tuple[int, ...]:
        """View coordinates of the element at ``addr`` (see the module docstring for the rule)."""
        delta = (int(addr) - self.data_ptr + 2**63) % 2**64 - 2**63  # signed 64-bit, as the GPU sees it
        e = delta // self.itemsize
        if not self.shape:
            return (e,)
        coords = [0] * len(self.shape)
        for d in sorted(
            (d for d in range(len(self.shape)) if self.strides[d]), key=lambda d: -self.strides[d]
        ):
            coords[d], e = divmod(e, self.strides[d])
        return tuple(int(c) for c in coords)


def _tag_of(h) -> np.ndarray:
    tag = h.attr.get(_TAG) if isinstance(h, _interp.TensorHandle) else None
    return tag if tag is not None else np.zeros((), np.int64)


def _set_tag(h, tag) -> None:
    if not isinstance(h, _interp.TensorHandle):
        return
    tag = np.asarray(tag, np.int64)
    if tag.any():
        h.attr[_TAG] = np.broadcast_to(tag, h.data.shape) if tag.shape != h.data.shape else tag
    else:
        h.attr.pop(_TAG, None)


def _combine(*tags: np.ndarray) -> np.ndarray:
    """Elementwise combination: taint is OR-ed, provenance is the first operand's that has one."""
    taint = np.zeros((), np.int64)
    prov = np.zeros((), np.int64)
    for tag in tags:
        taint = taint | (tag & 1)
        prov = np.where(prov != 0, prov, tag >> 1)
    return (prov << 1) | taint


def _is_signed_narrow(dtype) -> bool:
    scalar = getattr(dtype, "scalar", dtype)
    return scalar.is_int_signed() and scalar.int_bitwidth < 64


# ----------------------------------------------------------------------------------------------
# The oracle run


class _Run:
    """State of one oracle launch: allocations, findings, builder patches."""

    def __init__(self) -> None:
        self.allocs: list[_Allocation] = []
        self.rec = _Recorder()
        self.builder = _interp.interpreter_builder
        self.semantic = _interp.interpreter_semantic

    # -- addresses ----------------------------------------------------------------------------

    def alloc_containing(self, addr: int) -> _Allocation | None:
        for a in self.allocs:
            if a.lo <= addr < a.hi:
                return a
        return None

    def tag_by_address(self, addrs: np.ndarray) -> np.ndarray:
        out = np.zeros(addrs.shape, np.int64)
        for a in self.allocs:
            inside = (addrs >= a.lo) & (addrs < a.hi)
            out = np.where(inside & (out == 0), (a.index + 1) << 1, out)
        return out

    def check(self, kind: str, ptrs, mask: np.ndarray | None, size: int):
        """Classify the lanes of one access; record findings; return (good mask, allocation per lane)."""
        addrs = np.asarray(ptrs.data, dtype=np.uint64)
        shape = addrs.shape
        enabled = np.ones(shape, bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), shape)
        tag = np.broadcast_to(_tag_of(ptrs), shape)
        untagged = (tag >> 1) == 0
        if untagged.any():
            tag = np.where(untagged, self.tag_by_address(addrs) | (tag & 1), tag)
        prov = (tag >> 1) - 1
        tainted = enabled & ((tag & 1) == 1)
        good = np.zeros(shape, bool)
        if tainted.any():
            self.report("int32 overflow", tainted, prov, addrs)
        checkable = enabled & ~tainted
        oob = np.zeros(shape, bool)
        for a in self.allocs:
            mine = checkable & (prov == a.index)
            if not mine.any():
                continue
            inside = (addrs >= np.uint64(a.lo)) & (addrs + np.uint64(size) <= np.uint64(a.hi))
            good |= mine & inside
            oob |= mine & ~inside
        oob |= checkable & (prov < 0)
        if oob.any():
            self.report(kind, oob, prov, addrs)
        return good, prov

    def report(self, kind: str, bad: np.ndarray, prov: np.ndarray, addrs: np.ndarray) -> None:
        flat_bad = bad.ravel()
        flat_prov = np.broadcast_to(prov, bad.shape).ravel()
        flat_addr = addrs.ravel()
        site = _user_site()
        for p in sorted(set(flat_prov[flat_bad].tolist())):
            lanes = flat_bad & (flat_prov == p)
            first = int(np.flatnonzero(lanes)[0])
            if p >= 0:
                alloc = self.allocs[p]
                name, coords = alloc.name, alloc.coordinates(int(flat_addr[first]))
            else:
                name, coords = None, None
            self.rec.add(kind, name, int(lanes.sum()), coords, site)

    # -- memory -------------------------------------------------------------------------------

    def _byte_index(self, addrs, good, prov, size):
        """Index of each good lane's bytes into its allocation's storage, grouped by allocation."""
        for a in self.allocs:
            sel = good & (prov == a.index)
            if sel.any():
                idx = np.flatnonzero(sel.ravel())
                offs = addrs.ravel()[idx].astype(np.int64) - a.storage_ptr
                yield a, idx, offs[:, None] + np.arange(size)

    def load(self, kind, ptrs, mask, other, dtype_tt):
        dtype_np = _interp._get_np_dtype(dtype_tt)
        size = dtype_np.itemsize
        addrs = np.asarray(ptrs.data, np.uint64)
        good, prov = self.check(kind, ptrs, mask, size)
        enabled = np.ones(addrs.shape, bool) if mask is None else np.broadcast_to(mask, addrs.shape)
        out = np.zeros(addrs.shape, dtype_np).ravel()
        if other is not None:
            out[:] = np.broadcast_to(other, addrs.shape).ravel()
            out[enabled.ravel()] = 0
        for a, idx, bidx in self._byte_index(addrs, good, prov, size):
            out[idx] = a.storage[bidx].copy().view(dtype_np).ravel()
        return out.reshape(addrs.shape)

    def store(self, kind, ptrs, value, mask):
        addrs = np.asarray(ptrs.data, np.uint64)
        dtype_np = _interp._get_np_dtype(ptrs.get_element_ty())
        size = dtype_np.itemsize
        good, prov = self.check(kind, ptrs, mask, size)
        vals = np.ascontiguousarray(np.broadcast_to(value, addrs.shape).astype(dtype_np)).ravel()
        for a, idx, bidx in self._byte_index(addrs, good, prov, size):
            a.storage[bidx] = vals[idx].view(np.uint8).reshape(len(idx), size)

    # -- builder patches ----------------------------------------------------------------------

    def patches(self) -> dict[str, Callable]:
        b = self.builder
        orig = {name: getattr(b, name) for name in dir(type(b)) if name.startswith("create_")}
        run = self
        p: dict[str, Callable] = {}

        def masked_load(ptrs, mask, other, cache_policy, is_volatile):
            dtype_tt = ptrs.get_element_ty()
            data = run.load(
                "out-of-bounds load", ptrs, mask.data, None if other is None else other.data, dtype_tt
            )
            out = _interp.TensorHandle(data, dtype_tt)
            if isinstance(dtype_tt, tl.pointer_type):
                _set_tag(out, run.tag_by_address(data.astype(np.uint64)))
            return out

        def masked_store(ptrs, value, mask, cache_policy):
            run.store("out-of-bounds store", ptrs, value.data, mask.data)

        def atomic_rmw(rmw_op, ptr, val, mask, sem, scope):
            return _interp.TensorHandle(run.atomic(rmw_op, ptr, val.data, mask.data, None), val.dtype.scalar)

        def atomic_cas(ptr, cmp, val, sem, scope):
            return _interp.TensorHandle(run.atomic(None, ptr, val.data, None, cmp.data), cmp.dtype.scalar)

        def assert_(condition, message):
            cond = np.asarray(condition.data, bool)
            failing = ~cond
            if failing.any():
                first = int(np.flatnonzero(failing.ravel())[0])
                coords = (
                    () if cond.shape == (1,) else tuple(int(i) for i in np.unravel_index(first, cond.shape))
                )
                run.rec.add("device assert", None, int(failing.sum()), coords)

        p.update(
            create_masked_load=masked_load,
            create_masked_store=masked_store,
            create_atomic_rmw=atomic_rmw,
            create_atomic_cas=atomic_cas,
            create_assert=assert_,
        )
        p.update(run.descriptor_patches())
        p["create_load"] = lambda ptr, cache, vol: masked_load(
            ptr, _interp.TensorHandle(np.ones(ptr.data.shape, bool), tl.int1), None, cache, vol
        )
        p["create_store"] = lambda ptr, val, cache: masked_store(
            ptr, val, _interp.TensorHandle(np.ones(ptr.data.shape, bool), tl.int1), cache
        )

        # provenance / taint through value-carrying ops
        def elementwise(name, wraps=None):
            f = orig[name]

            def op(*args):
                out = f(*args)
                handles = [a for a in args if isinstance(a, _interp.TensorHandle)]
                if name == "create_select":
                    handles = handles[1:]
                tags = [_tag_of(h) for h in handles if _TAG in h.attr]
                extra = None
                if wraps is not None and _is_signed_narrow(out.dtype):
                    extra = wraps(*handles[:2], out)
                if tags or extra is not None:
                    if name == "create_select":
                        tag = np.where(args[0].data, _tag_of(args[1]), _tag_of(args[2]))
                    else:
                        tag = _combine(*tags) if tags else np.zeros((), np.int64)
                    if extra is not None:
                        tag = tag | extra.astype(np.int64)
                    _set_tag(out, np.broadcast_to(tag, out.data.shape))
                return out

            return op

        def wrap_check(np_op):
            def check(lhs, rhs, out):
                exact = np_op(lhs.data.astype(np.int64), rhs.data.astype(np.int64))
                return exact != out.data.astype(np.int64)

            return check

        wrapping = {
            "create_add": wrap_check(np.add),
            "create_sub": wrap_check(np.subtract),
            "create_mul": wrap_check(np.multiply),
            "create_shl": wrap_check(np.left_shift),
        }
        for name in (
            "create_add",
            "create_sub",
            "create_mul",
            "create_shl",
            "create_sdiv",
            "create_udiv",
            "create_srem",
            "create_urem",
            "create_lshr",
            "create_ashr",
            "create_and",
            "create_or",
            "create_xor",
            "create_minsi",
            "create_maxsi",
            "create_minui",
            "create_maxui",
            "create_select",
            "create_bitcast",
            "create_ptr_to_int",
            "create_fp_to_si",
            "create_fp_to_ui",
        ):
            p[name] = elementwise(name, wrapping.get(name))

        def int_cast(src, dst_type, is_signed):
            out = orig["create_int_cast"](src, dst_type, is_signed)
            tag = _tag_of(src)
            if _is_signed_narrow(dst_type):
                changed = out.data.astype(np.int64) != src.data.astype(np.int64)
                if src.data.dtype == np.uint64:
                    changed = changed | (src.data > np.iinfo(np.int64).max)
                tag = tag | changed.astype(np.int64)
            _set_tag(out, np.broadcast_to(tag, out.data.shape))
            return out

        def int_to_ptr(src, dst_type):
            out = orig["create_int_to_ptr"](src, dst_type)
            tag = np.broadcast_to(_tag_of(src), out.data.shape)
            if not ((tag >> 1) != 0).all():
                tag = np.where(
                    (tag >> 1) != 0, tag, run.tag_by_address(out.data.astype(np.uint64)) | (tag & 1)
                )
            _set_tag(out, tag)
            return out

        def addptr(ptr, offset):
            out = orig["create_addptr"](ptr, offset)
            _set_tag(out, np.broadcast_to(_combine(_tag_of(ptr), _tag_of(offset)), out.data.shape))
            return out

        p.update(create_int_cast=int_cast, create_int_to_ptr=int_to_ptr, create_addptr=addptr)

        def reshaping(name, arg_pos):
            f = orig[name]

            def op(*args):
                out = f(*args)
                src = args[arg_pos]
                if isinstance(src, _interp.TensorHandle) and _TAG in src.attr:
                    shadow = list(args)
                    shadow[arg_pos] = _interp.TensorHandle(
                        np.broadcast_to(_tag_of(src), src.data.shape), tl.int64
                    )
                    t = f(*shadow)
                    if isinstance(out, tuple):
                        for o, s in zip(out, t, strict=False):
                            _set_tag(o, s.data)
                    else:
                        _set_tag(out, t.data)
                return out

            return op

        for name, pos in (
            ("create_expand_dims", 0),
            ("create_broadcast", 0),
            ("create_reshape", 0),
            ("create_trans", 0),
            ("create_splat", 1),
            ("create_unsplat", 0),
            ("create_split", 0),
            ("create_gather", 0),
        ):
            p[name] = reshaping(name, pos)

        def pairwise(name):
            f = orig[name]

            def op(lhs, rhs):
                out = f(lhs, rhs)
                if _TAG in lhs.attr or _TAG in rhs.attr:
                    t = f(
                        *(
                            _interp.TensorHandle(np.broadcast_to(_tag_of(h), h.data.shape), tl.int64)
                            for h in (lhs, rhs)
                        )
                    )
                    _set_tag(out, t.data)
                return out

            return op

        p["create_cat"] = pairwise("create_cat")
        p["create_join"] = pairwise("create_join")
        return p

    # -- atomics ------------------------------------------------------------------------------

    def atomic(self, rmw_op, ptr, val, mask, cmp):
        A = _interp._ir.ATOMIC_OP
        addrs = np.asarray(ptr.data, np.uint64)
        dtype_np = _interp._get_np_dtype(ptr.get_element_ty())
        size = dtype_np.itemsize
        good, prov = self.check("out-of-bounds atomic", ptr, mask, size)
        vals = np.broadcast_to(np.asarray(val).astype(dtype_np), addrs.shape).ravel()
        cmps = None if cmp is None else np.broadcast_to(np.asarray(cmp).astype(dtype_np), addrs.shape).ravel()
        old = np.zeros(addrs.shape, dtype_np).ravel()
        unsigned = dtype_np.kind == "i" and rmw_op in (A.UMIN, A.UMAX)
        ops = {
            A.ADD: np.add,
            A.FADD: np.add,
            A.MIN: np.minimum,
            A.UMIN: np.minimum,
            A.MAX: np.maximum,
            A.UMAX: np.maximum,
            A.AND: np.bitwise_and,
            A.OR: np.bitwise_or,
            A.XOR: np.bitwise_xor,
            A.XCHG: lambda a, b: b,
        }
        for a, idx, bidx in self._byte_index(addrs, good, prov, size):
            for i, bi in zip(idx, bidx, strict=False):
                cur = a.storage[bi].copy().view(dtype_np)[0]
                old[i] = cur
                if cmp is not None:
                    new = vals[i] if cur == cmps[i] else cur
                elif unsigned:
                    u = np.dtype(f"u{size}")
                    new = ops[rmw_op](np.asarray(cur).view(u), np.asarray(vals[i]).view(u)).view(dtype_np)
                else:
                    new = ops[rmw_op](cur, vals[i])
                a.storage[bi] = np.asarray([new], dtype_np).view(np.uint8)
        return old.reshape(addrs.shape)

    # -- descriptors --------------------------------------------------------------------------

    def descriptor_patches(self) -> dict[str, Callable]:
        run = self

        def ptrs_and_mask(desc, offsets, block_shape=None):
            block_shape = list(block_shape or desc.block_shape)
            itemsize = desc.base.dtype.element_ty.primitive_bitwidth // 8
            ptrs = np.broadcast_to(np.asarray(desc.base.data, np.uint64).reshape(()), block_shape)
            mask = np.ones(block_shape, bool)
            taint = np.zeros(block_shape, np.int64)
            for dim in range(len(block_shape)):
                bcast = [1] * len(block_shape)
                bcast[dim] = block_shape[dim]
                off_h = offsets[dim]
                off = int(np.asarray(off_h.data).reshape(-1)[0]) + np.arange(block_shape[dim]).reshape(bcast)
                taint = taint | (int(_tag_of(off_h).reshape(-1)[0]) & 1)
                stride = int(np.asarray(desc.strides[dim].data).reshape(-1)[0])
                ptrs = ptrs + (itemsize * off * stride).astype(np.uint64)
                mask = mask & (off >= 0) & (off < int(np.asarray(desc.shape[dim].data).reshape(-1)[0]))
            handle = _interp.TensorHandle(ptrs, desc.base.dtype.scalar)
            _set_tag(handle, np.broadcast_to(_tag_of(desc.base), ptrs.shape) | taint)
            return handle, mask

        def other_for(desc, shape, dtype_tt):
            dtype_np = _interp._get_np_dtype(dtype_tt)
            if desc.padding == _interp._ir.PADDING_OPTION.PAD_NAN:
                return np.full(shape, np.nan, dtype=dtype_np)
            return np.zeros(shape, dtype_np)

        def desc_load(desc, indices, cache_policy):
            dtype_tt = desc.base.dtype.element_ty
            if getattr(desc, "broken", False):
                return _interp.TensorHandle(other_for(desc, desc.block_shape, dtype_tt), dtype_tt)
            ptrs, mask = ptrs_and_mask(desc, indices)
            data = run.load("out-of-bounds load", ptrs, mask, other_for(desc, mask.shape, dtype_tt), dtype_tt)
            if desc.round_f32_to_tf32 and dtype_tt == tl.float32:
                data = _interp._round_f32_to_tf32(data)
            return _interp.TensorHandle(data, dtype_tt)

        def desc_store(desc, value, indices):
            if getattr(desc, "broken", False):
                return
            ptrs, mask = ptrs_and_mask(desc, indices)
            run.store("out-of-bounds store", ptrs, value.data, mask)

        def gather_ptrs(desc, x_offsets, y_offset):
            rows = np.asarray(x_offsets.data, np.int64).reshape(-1)
            ptr_rows, mask_rows = [], []
            for r in rows:
                h, m = ptrs_and_mask(
                    desc,
                    [_interp.TensorHandle(np.array([r], np.int32), tl.int32), y_offset],
                    [1, desc.block_shape[-1]],
                )
                ptr_rows.append(h.data[0])
                mask_rows.append(m[0])
            handle = _interp.TensorHandle(np.stack(ptr_rows), desc.base.dtype.scalar)
            _set_tag(handle, np.broadcast_to(_tag_of(desc.base), handle.data.shape))
            return handle, np.stack(mask_rows)

        def desc_gather(desc, x_offsets, y_offset, type):
            dtype_tt = desc.base.dtype.element_ty
            shape = (len(np.asarray(x_offsets.data).reshape(-1)), desc.block_shape[-1])
            if getattr(desc, "broken", False):
                return _interp.TensorHandle(other_for(desc, shape, dtype_tt), dtype_tt)
            ptrs, mask = gather_ptrs(desc, x_offsets, y_offset)
            return _interp.TensorHandle(
                run.load("out-of-bounds load", ptrs, mask, other_for(desc, shape, dtype_tt), dtype_tt),
                dtype_tt,
            )

        def desc_scatter(desc, value, x_offsets, y_offset):
            if getattr(desc, "broken", False):
                return
            ptrs, mask = gather_ptrs(desc, x_offsets, y_offset)
            run.store("out-of-bounds store", ptrs, value.data, mask)

        return {
            "create_descriptor_load": desc_load,
            "create_descriptor_store": desc_store,
            "create_descriptor_gather": desc_gather,
            "create_descriptor_scatter": desc_scatter,
        }

    def make_tensor_descriptor(self, orig: Callable) -> Callable:
        """Checks the descriptor rules on runtime values, then builds the descriptor (broken or not)."""
        run = self

        def make(base, shape, strides, block_shape, padding_option="zero"):
            def value(x):
                x = tl.core._unwrap_if_constexpr(x)
                if isinstance(x, tl.tensor):
                    return int(np.asarray(x.handle.data).reshape(-1)[0])
                return int(x)

            elem = base.dtype.element_ty.primitive_bitwidth // 8
            blocks = [value(b) for b in block_shape]
            svals = [value(s) for s in strides]
            broken = []
            if not 1 <= len(shape) <= 5:
                broken.append("rank must be 1 to 5")
            if int(np.asarray(base.handle.data).reshape(-1)[0]) % 16:
                broken.append("base must be 16-byte aligned")
            if svals and svals[-1] != 1:
                broken.append("last stride must be 1")
            if any((s * elem) % 16 for s in svals[:-1]):
                broken.append("strides must be multiples of 16 bytes")
            if blocks and blocks[-1] * elem < 16:
                broken.append("last block dimension must be at least 16 bytes")
            if not broken:
                return orig(base, shape, strides, block_shape, padding_option)
            ptag = _tag_of(base.handle).reshape(-1)
            prov = int(ptag[0] >> 1) - 1 if ptag.size else -1
            if prov < 0:
                found = run.alloc_containing(int(np.asarray(base.handle.data).reshape(-1)[0]))
                prov = found.index if found else -1
            run.rec.add("descriptor rule", run.allocs[prov].name if prov >= 0 else None, 1, None)
            shape_h = [run.semantic.make_scalar(value(x), tl.int32) for x in shape]
            strides_h = [run.semantic.make_scalar(s, tl.int64) for s in svals]
            ty = tl.block_type(base.type.element_ty, blocks)
            padding = run.semantic._str_to_padding_option(padding_option)
            handle = _interp.TensorDescHandle(
                base.handle, [s.handle for s in shape_h], [s.handle for s in strides_h], blocks, padding
            )
            handle.broken = broken
            return tl.tensor_descriptor(handle, shape_h, strides_h, ty)

        return make

    # -- launch -------------------------------------------------------------------------------

    def argument(self, name: str, arg: Any):
        """The interpreter value for one launch argument, tagged with its allocation."""
        if isinstance(arg, torch.Tensor):
            alloc = _Allocation.of(name, len(self.allocs), arg)
            self.allocs.append(alloc)
            handle = _interp._implicit_cvt(arg)
            _set_tag(handle.handle, np.full(handle.handle.data.shape, (alloc.index + 1) << 1, np.int64))
            return handle
        if isinstance(arg, TensorDescriptor):
            base = self.argument(name, arg.base)
            strides = [_interp._implicit_cvt(s) for s in arg.strides]
            strides[-1] = tl.constexpr(1)
            desc = self.semantic.make_tensor_descriptor(
                base=base,
                shape=[_interp._implicit_cvt(s) for s in arg.shape],
                strides=strides,
                block_shape=[tl.constexpr(b) for b in arg.block_shape],
                padding_option=arg.padding,
            )
            desc.handle.round_f32_to_tf32 = arg.round_f32_to_tf32
            return desc
        if isinstance(arg, tuple):
            return _interp._tuple_create(arg, [self.argument(f"{name}[{i}]", a) for i, a in enumerate(arg)])
        return _interp._implicit_cvt(arg)


class _Patches:
    """Attribute patches applied for one run and undone in reverse order."""

    def __init__(self) -> None:
        self.undo: list[tuple[Any, str, Any, bool]] = []

    def set(self, obj, name, value) -> None:
        had = name in vars(obj)
        self.undo.append((obj, name, getattr(obj, name, None), had))
        setattr(obj, name, value)

    def restore(self) -> None:
        while self.undo:
            obj, name, old, had = self.undo.pop()
            if had:
                setattr(obj, name, old)
            else:
                delattr(obj, name)


def run_oracle(case) -> list[dict]:
    """Runs ``case`` program by program on Triton's interpreter and returns its expected findings."""
    rng = np.random.default_rng(0)
    args, kwargs = case.make_args(rng)
    return run_kernel(case.kernel, case.grid, args, kwargs)


def run_kernel(kernel: JITFunction, grid, args: list, kwargs: dict) -> list[dict]:
    """Launches ``kernel[grid](*args, **kwargs)`` under the oracle; returns the findings."""
    kwargs = dict(kwargs)
    declared = getattr(kernel, "debug", None) or getattr(kernel, "kwargs", {}).get("debug")
    debug = bool(kwargs.pop("debug", False) or declared)
    run = _Run()
    fn = kernel.fn
    patches = _Patches()
    lang_scopes: list = []
    patched_langs: set[int] = set()

    def patch_lang_for(f) -> None:
        langs = {id(v) for v in f.__globals__.values() if inspect.ismodule(v) and v in (tl, tl.core)}
        if not langs <= patched_langs:
            lang_scopes.append(_interp._patch_lang(f))
            patched_langs.update(langs)

    def nested(self, *a, **kw):
        kw = {k: v for k, v in kw.items() if k not in ("_semantic", "_generator")}
        patch_lang_for(self.fn)
        return _rewritten(self.fn)(*a, **kw)

    def lang_tensor(tensor, scope):
        orig_patch_lang_tensor(tensor, scope)

        def transpose(self):
            handle = self.handle
            out = _interp.TensorHandle(np.transpose(handle.data), handle.dtype)
            if _TAG in handle.attr:
                _set_tag(out, np.transpose(np.broadcast_to(_tag_of(handle), handle.data.shape)))
            shape = list(self.type.shape)
            shape[-1], shape[-2] = shape[-2], shape[-1]
            return tl.core.tensor(out, tl.core.block_type(self.dtype, shape))

        scope.set_attr(tensor, "T", property(transpose))

    orig_patch_lang_tensor = _interp._patch_lang_tensor
    builder = run.builder
    was_interpret = triton.knobs.runtime.interpret
    try:
        triton.knobs.runtime.interpret = True
        patches.set(JITFunction, "__call__", nested)
        # jit functions registered as tensor members (``x.sum(axis=1)``) must bind like methods
        patches.set(
            JITFunction,
            "__get__",
            lambda self, obj, owner=None: self if obj is None else functools.partial(self, obj),
        )
        patches.set(_interp, "_patch_lang_tensor", lang_tensor)
        patches.set(builder, "options", _interp.InterpreterOptions(debug=debug, sanitize_overflow=False))
        for name, f in run.patches().items():
            patches.set(builder, name, f)
        patches.set(
            run.semantic,
            "make_tensor_descriptor",
            run.make_tensor_descriptor(run.semantic.make_tensor_descriptor),
        )
        patch_lang_for(fn)
        rewritten = _rewritten(fn)
        argspec = inspect.getfullargspec(fn)
        kwargs = {k: v for k, v in kwargs.items() if k in argspec.args or k in argspec.kwonlyargs}
        bound = inspect.getcallargs(fn, *args, **kwargs)
        annotations = {k: str(v) for k, v in inspect.get_annotations(fn).items()}
        values = {}
        for name, arg in bound.items():
            is_constexpr = "constexpr" in annotations.get(name, "")
            values[name] = arg if is_constexpr else run.argument(name, arg)
        g = grid(bound) if callable(grid) else grid
        g = tuple(int(x) for x in g) + (1,) * (3 - len(g))
        builder.set_grid_dim(*g)
        for z in range(g[2]):
            for y in range(g[1]):
                for x in range(g[0]):
                    builder.set_grid_idx(x, y, z)
                    run.rec.pid = (x, y, z)
                    _LOOPS.stack.clear()
                    rewritten(**values)
    finally:
        while lang_scopes:
            lang_scopes.pop().restore()
        patches.restore()
        triton.knobs.runtime.interpret = was_interpret
        _LOOPS.stack.clear()
    return run.rec.findings()
