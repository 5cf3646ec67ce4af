"""Rewrite a ``@triton.jit`` function's source so that plain Python runs it with Triton semantics.

Triton compiles the body of a kernel; we execute it. Four constructs mean something different in
the two worlds and are rewritten, keeping every line and column where the user wrote it:

- ``x = value`` converts Python scalars to Triton tensors, as the compiler's assignment does;
- ``a < b < c`` on tensors becomes an elementwise ``and`` (Triton's interpreter does the same);
- ``for``/``while`` go through the runtime, which tracks loop iterations for reports and hands out
  the induction variable as a Triton integer;
- ``assert cond, msg`` becomes ``tl.device_assert``.

``and``/``or``/``not`` on tensors are elementwise, as in the compiler's code generator.

The rewritten function reads the kernel module's globals live (so later definitions resolve) and
reaches the runtime through ``__tilescope__``, which is never written into the user's module.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from typing import Any

from . import version

RUNTIME_NAME = "__tilescope__"


def _rt(attr: str) -> ast.Attribute:
    return ast.Attribute(value=ast.Name(id=RUNTIME_NAME, ctx=ast.Load()), attr=attr, ctx=ast.Load())


class _Rewriter(ast.NodeTransformer):
    """The four rewrites described in the module docstring."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        # decorators, annotations and default values are evaluated when the ``def`` runs; the
        # original function already did that (its defaults are copied over), so drop them here
        node.decorator_list = []
        node.returns = None
        args = node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                arg.annotation = None
        args.defaults = [ast.Constant(None) for _ in args.defaults]
        args.kw_defaults = [None if d is None else ast.Constant(None) for d in args.kw_defaults]
        self.generic_visit(node)
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.Assign:
        node.value = ast.Call(func=_rt("assign"), args=[self.visit(node.value)], keywords=[])
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        node = self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        # a < b < c  ->  chain of elementwise comparisons, each operand evaluated once
        operands = [node.left, *node.comparators]
        pairs = []
        for op in node.ops:
            fn = ast.Lambda(
                args=ast.arguments(
                    posonlyargs=[],
                    args=[ast.arg("l"), ast.arg("r")],
                    kwonlyargs=[],
                    kw_defaults=[],
                    defaults=[],
                ),
                body=ast.Compare(
                    left=ast.Name("l", ast.Load()), ops=[op], comparators=[ast.Name("r", ast.Load())]
                ),
            )
            pairs.append(fn)
        thunks = [
            ast.Lambda(
                args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                body=v,
            )
            for v in operands
        ]
        return ast.copy_location(
            ast.Call(
                func=_rt("compare_chain"),
                args=[ast.List(thunks, ast.Load()), ast.List(pairs, ast.Load())],
                keywords=[],
            ),
            node,
        )

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        kind = "logical_and" if isinstance(node.op, ast.And) else "logical_or"
        thunks = [
            ast.Lambda(
                args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                body=v,
            )
            for v in node.values
        ]
        return ast.copy_location(
            ast.Call(
                func=_rt("bool_op"), args=[ast.Constant(kind), ast.List(thunks, ast.Load())], keywords=[]
            ),
            node,
        )

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        return ast.copy_location(ast.Call(func=_rt("not_"), args=[node.operand], keywords=[]), node)

    def visit_For(self, node: ast.For) -> ast.For:
        self.generic_visit(node)
        node.iter = ast.copy_location(
            ast.Call(
                func=_rt("loop"),
                args=[node.iter, ast.Constant(node.lineno), ast.Constant(node.col_offset + 1)],
                keywords=[],
            ),
            node.iter,
        )
        return node

    def visit_While(self, node: ast.While) -> ast.While:
        self.generic_visit(node)
        test = ast.Lambda(
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=node.test,
        )
        node.test = ast.copy_location(
            ast.Call(
                func=_rt("loop_test"),
                args=[test, ast.Constant(node.lineno), ast.Constant(node.col_offset + 1)],
                keywords=[],
            ),
            node.test,
        )
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.Expr:
        self.generic_visit(node)
        msg = node.msg if node.msg is not None else ast.Constant("")
        call = ast.Call(func=_rt("device_assert"), args=[node.test, msg], keywords=[])
        return ast.copy_location(ast.Expr(call), node)


def _function_source(fn: types.FunctionType) -> tuple[str, int]:
    """Source from the ``def`` line on, wrapped so that its indentation (and columns) survive."""
    lines, first = inspect.getsourcelines(fn)
    def_index = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def "))
    body = lines[def_index:]
    src = "".join(body)
    if body and body[0][:1].isspace():
        src = "if 1:\n" + src
        return src, first + def_index - 1
    return textwrap.dedent(src), first + def_index


class _Globals(dict):
    """The rewritten function's globals: the runtime, then the kernel module's live globals.

    Nothing is added to the user's module; names defined there later still resolve.
    """

    def __init__(self, module: dict, runtime: Any):
        super().__init__({RUNTIME_NAME: runtime, "__builtins__": module.get("__builtins__", __builtins__)})
        self._module = module

    def __missing__(self, key: str) -> Any:
        return self._module[key]


def code_objects(code: types.CodeType) -> set[types.CodeType]:
    """A code object and every code object nested in it (lambdas, comprehensions)."""
    found = {code}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= code_objects(const)
    return found


def rewrite(fn: types.FunctionType, runtime: Any) -> types.FunctionType:
    """Return the rewritten version of ``fn`` (a plain function), bound to its module globals."""
    src, first_line = _function_source(fn)
    tree = ast.parse(src)
    tree = _Rewriter().visit(tree)
    ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, first_line - 1)
    code = compile(tree, filename=fn.__code__.co_filename, mode="exec")
    namespace: dict[str, Any] = {}
    exec(code, _Globals(fn.__globals__, runtime), namespace)
    new_fn = namespace[fn.__name__]
    new_fn.__defaults__ = fn.__defaults__
    new_fn.__kwdefaults__ = fn.__kwdefaults__
    new_fn.__tilescope_original__ = fn
    return new_fn


__all__ = ["rewrite", "code_objects", "RUNTIME_NAME", "version"]
