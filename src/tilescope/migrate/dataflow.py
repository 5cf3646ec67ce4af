"""Which expressions of a module are block pointers: names, helper parameters, helper results, tuples.

Flow-insensitive and per module: a name is a block pointer if it is ever assigned one; a helper's
parameter is one if any call passes one; a helper returns one if any ``return`` does. Iterated to a
fixed point so that chains through helpers resolve.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

BP, TUPLE = "bp", "tuple"
BLOCK_PTR_KWARGS = {"boundary_check", "padding_option"}


def triton_language_aliases(module: cst.Module) -> set[str]:
    """Return the names under which ``triton.language`` is imported (``tl`` usually)."""
    aliases = set()
    for node in module.body:
        if not isinstance(node, cst.SimpleStatementLine):
            continue
        for stmt in node.body:
            if isinstance(stmt, cst.Import):
                for name in stmt.names:
                    if _dotted(name.name) == "triton.language" and name.asname:
                        aliases.add(name.asname.name.value)
            elif isinstance(stmt, cst.ImportFrom) and stmt.module is not None:
                if _dotted(stmt.module) == "triton" and not isinstance(stmt.names, cst.ImportStar):
                    for name in stmt.names:
                        if name.name.value == "language":
                            aliases.add(name.asname.name.value if name.asname else "language")
    return aliases


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


@dataclass
class Dataflow:
    """Block-pointer facts about one module."""

    tl: set[str]
    functions: dict[str, cst.FunctionDef]
    names: dict[str, dict[str, str]] = field(default_factory=dict)  # function -> name -> BP/TUPLE
    params: dict[str, dict[str, str]] = field(default_factory=dict)  # function -> parameter -> kind
    returns: dict[str, str] = field(default_factory=dict)  # function -> kind of what it returns

    def tl_call(self, node: cst.CSTNode, *names: str) -> str | None:
        """Return which of ``tl.<names>`` the call ``node`` is, or None."""
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
            return None
        owner = _dotted(node.func.value)
        attr = node.func.attr.value
        if attr in names and (owner in self.tl or owner == "triton.language"):
            return attr
        return None

    def kind(self, fn: str, node: cst.BaseExpression) -> str | None:
        """Return BP, TUPLE or None for an expression inside function ``fn``."""
        if isinstance(node, cst.Call):
            if self.tl_call(node, "make_block_ptr", "advance"):
                return BP
            if (
                isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "advance"
                and self.kind(fn, node.func.value) == BP
            ):
                return BP
            if isinstance(node.func, cst.Name):
                return self.returns.get(node.func.value)
            return None
        if isinstance(node, cst.Name):
            return self.names.get(fn, {}).get(node.value)
        if isinstance(node, cst.Subscript):
            return BP if self.kind(fn, node.value) == TUPLE else None
        if isinstance(node, cst.Tuple) and node.elements:
            kinds = {self.kind(fn, e.value) for e in node.elements}
            return TUPLE if kinds <= {BP, TUPLE} else None
        if isinstance(node, cst.IfExp):
            body, orelse = self.kind(fn, node.body), self.kind(fn, node.orelse)
            return body if body == orelse else None
        return None

    def is_block_ptr_access(self, fn: str, call: cst.Call) -> bool:
        """True for ``tl.load``/``tl.store`` whose pointer is a block pointer."""
        if not self.tl_call(call, "load", "store") or not call.args:
            return False
        if any(a.keyword and a.keyword.value in BLOCK_PTR_KWARGS for a in call.args):
            return True
        return self.kind(fn, call.args[0].value) == BP


class _Collector(cst.CSTVisitor):
    """One pass over a function, recording what its assignments, calls and returns carry."""

    def __init__(self, flow: Dataflow, fn: str) -> None:
        self.flow, self.fn, self.changed = flow, fn, False

    def _set(self, table: dict[str, str], key: str, kind: str | None) -> None:
        if kind and table.get(key) != kind:
            table[key] = kind
            self.changed = True

    def visit_Assign(self, node: cst.Assign) -> None:
        names = self.flow.names.setdefault(self.fn, {})
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Name):
                self._set(names, t.value, self.flow.kind(self.fn, node.value))
            elif isinstance(t, (cst.Tuple, cst.List)):
                value = node.value
                for i, element in enumerate(t.elements):
                    if not isinstance(element.value, cst.Name):
                        continue
                    if isinstance(value, cst.Tuple) and i < len(value.elements):
                        kind = self.flow.kind(self.fn, value.elements[i].value)
                    else:
                        kind = BP if self.flow.kind(self.fn, value) == TUPLE else None
                    self._set(names, element.value.value, kind)

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Name) or node.func.value not in self.flow.functions:
            return
        callee = node.func.value
        params = [p.name.value for p in self.flow.functions[callee].params.params]
        table = self.flow.params.setdefault(callee, {})
        for i, arg in enumerate(node.args):
            name = (
                arg.keyword.value
                if arg.keyword
                else (params[i] if i < len(params) and not arg.star else None)
            )
            if name:
                self._set(table, name, self.flow.kind(self.fn, arg.value))

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._set(self.flow.returns, self.fn, self.flow.kind(self.fn, node.value))


def analyse(module: cst.Module) -> Dataflow:
    """Return the block-pointer facts of ``module`` (a fixed point over all top-level functions)."""
    functions = {n.name.value: n for n in module.body if isinstance(n, cst.FunctionDef)}
    flow = Dataflow(triton_language_aliases(module), functions)
    for _ in range(20):  # chains through helpers are short; 20 rounds is far beyond any real module
        changed = False
        for name, fn in functions.items():
            names = flow.names.setdefault(name, {})
            for param, kind in flow.params.get(name, {}).items():
                if names.get(param) != kind:
                    names[param] = kind
                    changed = True
            collector = _Collector(flow, name)
            fn.visit(collector)
            changed |= collector.changed
        if not changed:
            break
    return flow
