"""Block-pointer families inside one function, and whether a tensor descriptor provably serves each.

A family is a ``make_block_ptr`` assignment plus every name derived from it by ``advance``
assignments. It may become a descriptor only when every use is local and understood (loads,
stores, advances), and the descriptor rules are provable from the source text alone:

- base is a bare pointer parameter (so its alignment is the caller's contract, as with any TMA code);
- shape, strides, offsets and block_shape are tuple literals of one rank, 1 to 5;
- the last stride is the literal ``1``;
- the last block dimension is at least 16 elements (hence 16 bytes for any dtype): a literal, a
  module constant, or a name bounded by ``tl.static_assert(NAME >= c)`` in the function;
- every load and store checks every dimension, or the dimension is exact (same shape and block
  expression, offset 0, never advanced);
- all loads agree on the padding (zero or nan) and pass nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import ParentNodeProvider

from tilescope.engine.descriptor_rules import ALIGN_BYTES, MAX_RANK, MIN_BLOCK_BYTES
from tilescope.migrate.dataflow import Dataflow

MAKE_ARGS = ("base", "shape", "strides", "offsets", "block_shape", "order")
#: a last block dimension of this many elements spans MIN_BLOCK_BYTES whatever the (unknown) dtype
MIN_INNER_ELEMENTS = MIN_BLOCK_BYTES


@dataclass
class Family:
    """One block pointer's creation, its advanced descendants, and their uses."""

    creation: cst.SimpleStatementLine
    call: cst.Call
    names: list[str]
    args: dict[str, cst.BaseExpression] = field(default_factory=dict)
    advances: list[tuple[cst.SimpleStatementLine, str, str, cst.BaseExpression]] = field(default_factory=list)
    accesses: list[cst.Call] = field(default_factory=list)  # tl.load / tl.store calls
    dtypes: list[cst.Attribute] = field(default_factory=list)  # `name.dtype.element_ty` expressions
    reason: str = ""  # why not a descriptor; empty when it is one
    padding: str = ""

    @property
    def descriptor(self) -> bool:
        """True when the family becomes a tensor descriptor."""
        return not self.reason


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node).strip()


def _int(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _int(node.expression)
        return -inner if inner is not None else None
    return None


def _tuple(node: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    if isinstance(node, (cst.Tuple, cst.List)):
        return [e.value for e in node.elements]
    return None


def call_args(call: cst.Call, names: tuple[str, ...]) -> dict[str, cst.BaseExpression] | None:
    """Bind a call's arguments to ``names``; None for star arguments or unknown keywords."""
    bound: dict[str, cst.BaseExpression] = {}
    for i, arg in enumerate(call.args):
        if arg.star:
            return None
        key = arg.keyword.value if arg.keyword else (names[i] if i < len(names) else None)
        if key is None or key in bound:
            return None
        bound[key] = arg.value
    return bound


def _static_lower_bounds(fn: cst.FunctionDef, module: cst.Module) -> dict[str, int]:
    """Return NAME -> proven lower bound, from module constants and ``tl.static_assert(NAME >= c)``."""
    bounds: dict[str, int] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for s in stmt.body:
                if (
                    isinstance(s, cst.Assign)
                    and len(s.targets) == 1
                    and isinstance(s.targets[0].target, cst.Name)
                ):
                    value = _int(s.value)
                    if value is not None:
                        bounds[s.targets[0].target.value] = value

    class Asserts(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if not (
                isinstance(node.func, cst.Attribute) and node.func.attr.value == "static_assert" and node.args
            ):
                return
            test = node.args[0].value
            if (
                isinstance(test, cst.Comparison)
                and isinstance(test.left, cst.Name)
                and len(test.comparisons) == 1
            ):
                op, right = test.comparisons[0].operator, _int(test.comparisons[0].comparator)
                if right is not None and isinstance(op, (cst.GreaterThanEqual, cst.GreaterThan)):
                    bound = right + (1 if isinstance(op, cst.GreaterThan) else 0)
                    bounds[test.left.value] = max(bound, bounds.get(test.left.value, bound))

    fn.visit(Asserts())
    return bounds


class _Uses(cst.CSTVisitor):
    """Every reference to a candidate name, classified as an understood use or an escape."""

    METADATA_DEPENDENCIES = (ParentNodeProvider,)

    def __init__(self, flow: Dataflow, fn: str, candidates: set[str]) -> None:
        super().__init__()
        self.flow, self.fn, self.candidates = flow, fn, candidates
        self.escapes: dict[str, str] = {}
        self.assigned: dict[str, list[cst.SimpleStatementLine]] = {}
        self.accesses: dict[str, list[cst.Call]] = {}
        self.advances: list[tuple[cst.SimpleStatementLine, str, str, cst.BaseExpression]] = []
        self.dtypes: dict[str, list[cst.Attribute]] = {}  # `name.dtype.element_ty` uses
        self.loops = 0
        self.in_loop: set[str] = set()

    def visit_For(self, node: cst.For) -> None:
        self.loops += 1

    def leave_For(self, node: cst.For) -> None:
        self.loops -= 1

    def visit_While(self, node: cst.While) -> None:
        self.loops += 1

    def leave_While(self, node: cst.While) -> None:
        self.loops -= 1

    def _parent(self, node: cst.CSTNode) -> cst.CSTNode:
        return self.get_metadata(ParentNodeProvider, node)

    def visit_Name(self, node: cst.Name) -> None:
        name = node.value
        if name not in self.candidates:
            return
        parent = self._parent(node)
        if isinstance(parent, cst.AssignTarget):
            assign = self._parent(parent)
            stmt = self._parent(assign)
            if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and len(assign.targets) == 1:
                self.assigned.setdefault(name, []).append(stmt)
                self._record_advance(stmt, name, assign.value)
                if self.loops and self.flow.tl_call(assign.value, "make_block_ptr"):
                    self.in_loop.add(name)
                return
            self.escapes.setdefault(name, f"`{name}` is assigned in a compound statement")
            return
        if isinstance(parent, cst.Arg):
            call = self._parent(parent)
            if isinstance(call, cst.Call) and call.args and call.args[0] is parent:
                if self.flow.tl_call(call, "load", "store"):
                    self.accesses.setdefault(name, []).append(call)
                    return
                if self.flow.tl_call(call, "advance") and self._is_advance_statement(call):
                    return
            callee = _code(call.func) if isinstance(call, cst.Call) else "an expression"
            self.escapes.setdefault(name, f"`{name}` is passed to `{callee}`")
            return
        if isinstance(parent, cst.Attribute) and parent.attr.value == "dtype" and parent.value is node:
            outer = self._parent(parent)
            if isinstance(outer, cst.Attribute) and outer.attr.value == "element_ty":
                self.dtypes.setdefault(name, []).append(outer)
                return
        if isinstance(parent, cst.Attribute) and parent.attr.value == "advance" and parent.value is node:
            call = self._parent(parent)
            if isinstance(call, cst.Call) and self._is_advance_statement(call):
                return
        what = {cst.Return: "returned", cst.Element: "put in a tuple or list"}.get(
            type(parent), "used in an expression"
        )
        if isinstance(parent, cst.Attribute) and parent.value is node:
            what = f"used as `{_code(parent)}`"
        self.escapes.setdefault(name, f"`{name}` is {what}")

    def _is_advance_statement(self, call: cst.Call) -> bool:
        assign = self._parent(call)
        return (
            isinstance(assign, cst.Assign)
            and assign.value is call
            and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
        )

    def _record_advance(self, stmt: cst.SimpleStatementLine, target: str, value: cst.BaseExpression) -> None:
        if not isinstance(value, cst.Call):
            return
        if self.flow.tl_call(value, "advance") and len(value.args) == 2:
            source, delta = value.args[0].value, value.args[1].value
        elif (
            isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "advance"
            and len(value.args) == 1
        ):
            source, delta = value.func.value, value.args[0].value
        else:
            return
        if isinstance(source, cst.Name):
            self.advances.append((stmt, target, source.value, delta))


def find_families(flow: Dataflow, fn: cst.FunctionDef, module: cst.Module) -> list[Family]:
    """Return the function's block-pointer families, each with its descriptor verdict."""
    name = fn.name.value
    candidates = {n for n, kind in flow.names.get(name, {}).items() if kind == "bp"}
    uses = _Uses(flow, name, candidates)
    cst.MetadataWrapper(cst.Module(body=[fn]), unsafe_skip_copy=True).visit(uses)
    params = {p.name.value for p in fn.params.params}
    bounds = _static_lower_bounds(fn, module)

    families: list[Family] = []
    owner: dict[str, Family] = {}
    for n, stmts in uses.assigned.items():
        for stmt in stmts:
            value = stmt.body[0].value
            if flow.tl_call(value, "make_block_ptr"):
                family = Family(stmt, value, [n])
                families.append(family)
                if n in owner:
                    owner[n].reason = owner[n].reason or f"`{n}` is assigned by more than one make_block_ptr"
                    family.reason = owner[n].reason
                owner[n] = family
    for _ in range(len(uses.advances) + 1):  # link advanced names to their family
        for _stmt, target, source, _delta in uses.advances:
            if source in owner and target not in owner:
                owner[target] = owner[source]
                owner[source].names.append(target)
    for stmt, target, source, delta in uses.advances:
        if source in owner:
            if owner.get(target) is not owner[source]:
                owner[source].reason = owner[source].reason or f"`{target}` mixes two block pointers"
            owner[source].advances.append((stmt, target, source, delta))

    for family in families:
        for n in family.names:
            family.accesses += uses.accesses.get(n, [])
            family.dtypes += uses.dtypes.get(n, [])
            others = [
                s
                for s in uses.assigned.get(n, [])
                if s is not family.creation and all(s is not a[0] for a in family.advances)
            ]
            if n in uses.escapes and not family.reason:
                family.reason = uses.escapes[n]
            elif others and not family.reason:
                family.reason = f"`{n}` is also assigned something other than this block pointer"
        if family.names[0] in uses.in_loop and not family.reason:
            family.reason = "created inside a loop (a descriptor would be rebuilt every iteration)"
        if not family.reason:
            family.reason = _descriptor_rules(flow, family, params, bounds)
    return families


def _descriptor_rules(flow: Dataflow, family: Family, params: set[str], bounds: dict[str, int]) -> str:
    """Return the first descriptor rule the family can't be proven to meet ('' when all hold)."""
    args = call_args(family.call, MAKE_ARGS)
    if args is None or set(args) != set(MAKE_ARGS):
        return "make_block_ptr's arguments are not all given plainly"
    family.args = args
    parts = {k: _tuple(args[k]) for k in ("shape", "strides", "offsets", "block_shape")}
    if any(v is None for v in parts.values()):
        missing = next(k for k, v in parts.items() if v is None)
        return f"{missing} `{_code(args[missing])}` is not a tuple literal, so the rank is unknown"
    rank = len(parts["block_shape"])
    if not 1 <= rank <= MAX_RANK or any(len(v) != rank for v in parts.values()):
        return f"rank {rank} is outside 1..{MAX_RANK} or the tuples differ in length"
    if not (isinstance(args["base"], cst.Name) and args["base"].value in params):
        return (
            f"base `{_code(args['base'])}` is pointer arithmetic, so its {ALIGN_BYTES}-byte alignment is not "
            "provable"
        )
    if _int(parts["strides"][-1]) != 1:
        return f"last stride `{_code(parts['strides'][-1])}` is not the literal 1 (contiguity not provable)"
    inner = parts["block_shape"][-1]
    inner_min = (
        _int(inner)
        if _int(inner) is not None
        else (bounds.get(inner.value) if isinstance(inner, cst.Name) else None)
    )
    if _int(inner) is not None and inner_min < MIN_INNER_ELEMENTS:
        return (
            f"last block dimension is {inner_min} elements, under {MIN_BLOCK_BYTES} bytes for dtypes "
            f"narrower than {-(-MIN_BLOCK_BYTES // inner_min)} bytes (the dtype is not in the source)"
        )
    if inner_min is None or inner_min < MIN_INNER_ELEMENTS:
        return (
            f"last block dimension `{_code(inner)}` is not provably >= {MIN_BLOCK_BYTES} bytes "
            f"(add `tl.static_assert({_code(inner)} >= {MIN_INNER_ELEMENTS})` to prove it)"
        )
    advanced = set()
    for _stmt, _target, _source, delta in family.advances:
        items = _tuple(delta)
        if items is None or len(items) != rank:
            return f"advance offsets `{_code(delta)}` are not a tuple literal of rank {rank}"
        advanced |= {d for d, item in enumerate(items) if _int(item) != 0}
    exact = {
        d
        for d in range(rank)
        if d not in advanced
        and _int(parts["offsets"][d]) == 0
        and _code(parts["shape"][d]) == _code(parts["block_shape"][d])
    }
    paddings = set()
    for call in family.accesses:
        kinds = "load" if flow.tl_call(call, "load") else "store"
        allowed = {"boundary_check", "padding_option"} if kinds == "load" else {"boundary_check"}
        bound = call_args(call, ("pointer", "value") if kinds == "store" else ("pointer",))
        if bound is None or set(bound) - allowed - {"pointer", "value"}:
            return f"a {kinds} passes arguments a descriptor {kinds} can't take"
        checked = _checked_dims(bound.get("boundary_check"))
        if checked is None:
            return "boundary_check is not a literal"
        unchecked = set(range(rank)) - checked - exact
        if unchecked:
            return (
                f"a {kinds} leaves dimension {min(unchecked)} unchecked and it is not exact "
                "(a descriptor would clip where the block pointer reads past the shape)"
            )
        if kinds == "load":
            pad = bound.get("padding_option")
            paddings.add("nan" if isinstance(pad, cst.SimpleString) and "nan" in pad.value else "zero")
    if len(paddings) > 1:
        return "loads disagree on padding_option (a descriptor has one)"
    family.padding = paddings.pop() if paddings else "zero"
    return ""


def _checked_dims(node: cst.BaseExpression | None) -> set[int] | None:
    if node is None:
        return set()
    if _int(node) is not None:
        return {_int(node)}
    items = _tuple(node)
    if items is None or any(_int(i) is None for i in items):
        return None
    return {_int(i) for i in items}
