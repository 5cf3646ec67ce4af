"""Rewrite a ``@triton.jit`` function's source so that plain Python runs it with Triton semantics.

Triton compiles the body of a kernel; we execute it for a whole batch of programs at once. Five
constructs mean something different in the two worlds and are rewritten, keeping every line and
column where the user wrote it:

- ``x = value`` converts Python scalars to Triton tensors, as the compiler's assignment does;
- ``a < b < c`` on tensors becomes an elementwise ``and`` (Triton's interpreter does the same);
- ``if`` asks the runtime for the batch's decision: when the programs disagree, both sides run
  under masks (predication) and the names either side assigns are merged per program, as the
  compiler's ``scf.if`` yields them (those a later read can see: ``independent.carried_names``);
- ``for``/``while`` go through the runtime, which tracks loop iterations for reports, hands out the
  induction variable as a Triton integer, and runs loops whose trip count differs per program
  under a per-program mask; the names a loop body assigns (those a later read can see) are frozen
  for programs that left it;
- ``assert cond, msg`` becomes ``tl.device_assert``.

``and``/``or``/``not`` on tensors are elementwise, as in the compiler's code generator.

Rewritten code is kept on disk (:mod:`codecache`), so a fresh process skips the rewrite. The
rewritten function reads the kernel module's globals live (so later definitions resolve) and
reaches the runtime through ``__tilescope__``, which is never written into the user's module.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from typing import Any

from ... import methodcache
from ...engine.sites import code_objects
from . import codecache, version

RUNTIME_NAME = "__tilescope__"


TEMP = "__ts_"  # prefix of the names the rewrite introduces


def _rt(attr: str) -> ast.Attribute:
    return ast.Attribute(value=ast.Name(id=RUNTIME_NAME, ctx=ast.Load()), attr=attr, ctx=ast.Load())


class _Stores(ast.NodeVisitor):
    """Names a block of statements assigns, in order (nested functions and comprehensions excluded)."""

    def __init__(self):
        self.names: dict[str, None] = {}

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store) and not node.id.startswith(TEMP):
            self.names.setdefault(node.id, None)

    def _skip(self, node: ast.AST) -> None:
        return None

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _skip
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _skip


def assigned(stmts: list[ast.stmt]) -> list[str]:
    """The names ``stmts`` assign (in first-assignment order)."""
    finder = _Stores()
    for stmt in stmts:
        finder.visit(stmt)
    return list(finder.names)


def _returns(stmts: list[ast.stmt]) -> bool:
    """True when ``stmts`` contain a ``return`` of their own function."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def _save(prefix: str, names: list[str]) -> str:
    """Statements copying each name to ``prefix + name`` (UNDEF when it is not bound yet)."""
    undef = f"{RUNTIME_NAME}.UNDEF"
    return "".join(f"try:\n    {prefix}{n} = {n}\nexcept NameError:\n    {prefix}{n} = {undef}\n"
                   for n in names)  # fmt: skip


def _restore(prefix: str, names: list[str]) -> str:
    """Statements putting each name back as ``_save`` found it (unbinding it if it was not bound)."""
    return "".join(
        f"if {prefix}{n} is {RUNTIME_NAME}.UNDEF:\n    try:\n        del {n}\n    except NameError:\n"
        f"        pass\nelse:\n    {n} = {prefix}{n}\n"
        for n in names
    )


def _indent(code: str, level: int = 1) -> str:
    pad = "    " * level
    return "".join(pad + line + "\n" for line in code.splitlines()) or pad + "pass\n"


class _Template:
    """Statements parsed from source text, placed at a node's position, with markers spliced in."""

    def __init__(self, code: str, at: ast.AST, **slots: Any):
        self.code, self.at, self.slots = code, at, slots

    def build(self) -> list[ast.stmt]:
        tree = ast.parse(self.code)
        at = self.at
        for node in ast.walk(tree):
            if "lineno" in node._attributes:
                node.lineno, node.col_offset = at.lineno, at.col_offset
                node.end_lineno, node.end_col_offset = at.lineno, at.col_offset
        slots = self.slots

        class Splice(ast.NodeTransformer):
            def visit_Expr(self, node: ast.Expr) -> Any:
                if isinstance(node.value, ast.Name) and node.value.id in slots:
                    return slots[node.value.id] or [ast.copy_location(ast.Pass(), at)]
                return self.generic_visit(node)

            def visit_Name(self, node: ast.Name) -> Any:
                return slots.get(node.id, node) if not isinstance(slots.get(node.id), list) else node

        return Splice().visit(tree).body


class _Rewriter(ast.NodeTransformer):
    """The rewrites described in the module docstring."""

    def __init__(self):
        self._count = 0
        self._independent: dict = {}
        self._carried: dict = {}

    def _fresh(self) -> str:
        self._count += 1
        return f"{TEMP}{self._count}"

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
        independent = methodcache.import_module(f"{__package__}.independent")  # only a cache miss rewrites
        self._independent = independent.independent_loops(node)  # before any rewrite changes the body
        self._carried = independent.carried_names(node)
        self.generic_visit(node)
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.Assign:
        node.value = ast.Call(func=_rt("assign"), args=[self.visit(node.value)], keywords=[])
        return node

    def _carried_of(self, node: ast.If | ast.For | ast.While, stmts: list[ast.stmt]) -> list[str]:
        """The names ``stmts`` (``node``'s branches or body) assign that code after them may read: the
        ones to merge or freeze per program (every assigned name where the analysis gave up)."""
        names = assigned(stmts)
        carried = self._carried.get(id(node))
        return names if carried is None else [n for n in names if n in carried]

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

    def visit_If(self, node: ast.If) -> list[ast.stmt]:
        """``if``: the runtime's decision; both sides under masks when the batch disagrees."""
        self.generic_visit(node)
        b = self._fresh()
        names = self._carried_of(node, node.body + node.orelse)
        predicable = not _returns(node.body + node.orelse)
        merge = "".join(
            f"{b}v = {RUNTIME_NAME}.merge({b}, {b}t_{n}, {b}e_{n})\n"
            f"if {b}v is not {RUNTIME_NAME}.UNDEF:\n    {n} = {b}v\n"
            for n in names
        )
        code = (
            f"{b} = {RUNTIME_NAME}.branch(__TS_TEST__, {node.lineno}, {node.col_offset + 1}, {predicable})\n"
            f"if {b}.predicated:\n{_indent(_save(b + 'p_', names))}"
            f"if {b}.then():\n    __TS_BODY__\n"
            f"if {b}.predicated:\n{_indent(_save(b + 't_', names) + _restore(b + 'p_', names))}"
            f"if {b}.otherwise():\n    __TS_ORELSE__\n"
            f"if {b}.predicated:\n{_indent(_save(b + 'e_', names) + merge)}"
            f"{b}.done()\n"
        )
        slots = {"__TS_TEST__": node.test, "__TS_BODY__": node.body, "__TS_ORELSE__": node.orelse}
        return _Template(code, node, **slots).build()

    def _frozen_body(self, node: ast.For | ast.While) -> list[ast.stmt]:
        """A loop body whose assigned names (those a later read can see) keep their values for programs
        that left the loop."""
        f = self._fresh()
        names = self._carried_of(node, node.body)
        keep = "".join(
            f"try:\n    {n} = {RUNTIME_NAME}.keep({f}_{n}, {n})\nexcept NameError:\n    pass\n" for n in names
        )
        code = (
            f"if {RUNTIME_NAME}.freezing():\n{_indent(_save(f + '_', names))}"
            "__TS_BODY__\n"
            f"if {RUNTIME_NAME}.freezing():\n{_indent(keep)}"
        )
        return _Template(code, node, __TS_BODY__=node.body).build()

    def visit_For(self, node: ast.For) -> ast.For | list[ast.stmt]:
        independent = self._independent.get(id(node))
        self.generic_visit(node)
        call = node.iter
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "range":
            call.func = ast.copy_location(_rt("range"), call.func)  # tensor bounds stay tensors
        node.body = self._frozen_body(node)
        if independent is not None:
            return self._independent_for(node, independent)
        node.iter = ast.copy_location(
            ast.Call(
                func=_rt("loop"),
                args=[node.iter, ast.Constant(node.lineno), ast.Constant(node.col_offset + 1)],
                keywords=[],
            ),
            node.iter,
        )
        return node

    def _independent_for(self, node: ast.For, independent: Any) -> list[ast.stmt]:
        """A loop with independent iterations: the runtime may run them all at once as rows of the
        batch; the names its body reads then get one row per iteration, and every name it touches is
        put back as it was after it (no value leaves such a loop)."""
        r = self._fresh()
        names = list(dict.fromkeys((*independent.free, *independent.assigned)))
        free = "".join(f"{r}_{n}, " for n in independent.free)
        expand = "".join(f"{n}, " for n in independent.free)
        code = (
            _save(r + "_", names)
            + f"{r} = {RUNTIME_NAME}.loop(__TS_ITER__, {node.lineno}, {node.col_offset + 1}, ({free}))\n"
            f"for __TS_TARGET__ in {r}:\n"
            + (f"    if {r}.vectorized:\n        ({expand}) = {r}.expanded\n" if free else "")
            + "    __TS_BODY__\n"
            f"if {r}.vectorized:\n{_indent(_restore(r + '_', names))}"
        )
        slots = {"__TS_ITER__": node.iter, "__TS_TARGET__": node.target, "__TS_BODY__": node.body}
        return _Template(code, node, **slots).build()

    def visit_While(self, node: ast.While) -> ast.While:
        self.generic_visit(node)
        node.body = self._frozen_body(node)
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


def _function_source(fn: types.FunctionType, source: tuple[list[str], int] | None) -> tuple[str, int]:
    """Source from the ``def`` line on, wrapped so that its indentation (and columns) survive.

    ``source``: what ``inspect.getsourcelines(fn)`` returns, where the caller has it already (Triton
    reads it when it decorates a kernel; reading it again tokenizes the function, ~1 ms).
    """
    lines, first = source or inspect.getsourcelines(fn)
    def_index = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def "))
    body = lines[def_index:]
    src = "".join(body)
    if body and body[0][:1].isspace():
        src = "if 1:\n" + src
        return src, first + def_index - 1
    return textwrap.dedent(src), first + def_index


class _Globals(dict):
    """The rewritten function's globals: the runtime, then the kernel module's live globals.

    Nothing is added to the user's module; names defined there later still resolve. A name bound to
    one of ``tl.extra.libdevice``'s backend-neutral stubs (``from triton.language.extra.libdevice
    import rsqrt``) resolves to the CUDA implementation, as the GPU compiler resolves it; a name bound
    to a Triton builtin before tilescope patched Triton (``gather = tl.gather`` in a library imported
    first) resolves to the patched builtin.
    """

    def __init__(self, module: dict, runtime: Any):
        super().__init__({RUNTIME_NAME: runtime, "__builtins__": module.get("__builtins__", __builtins__)})
        self._module = module
        self._runtime = runtime

    def __missing__(self, key: str) -> Any:
        value = self._module[key]
        if not callable(value):
            return value
        stub = self._runtime.libdevice_stub_names.get(id(value))
        if stub is not None:
            return version.backend_libdevice(stub)
        return self._runtime.patched_builtins.get(id(value), value)


def rewrite(
    fn: types.FunctionType, runtime: Any, source: tuple[list[str], int] | None = None
) -> types.FunctionType:
    """Return the rewritten version of ``fn`` (a plain function), bound to its module globals.

    ``source``: ``inspect.getsourcelines(fn)``, where the caller already has it (None: read here).
    """
    src, first_line = _function_source(fn, source)
    filename = fn.__code__.co_filename
    cached = codecache.key(src, filename, first_line)
    code = codecache.load(cached)
    if code is None:
        tree = ast.parse(src)
        tree = _Rewriter().visit(tree)
        ast.fix_missing_locations(tree)
        ast.increment_lineno(tree, first_line - 1)
        code = compile(tree, filename=filename, mode="exec")
        codecache.store(cached, code)
    namespace: dict[str, Any] = {}
    exec(code, _Globals(fn.__globals__, runtime), namespace)
    new_fn = namespace[fn.__name__]
    new_fn.__defaults__ = fn.__defaults__
    new_fn.__kwdefaults__ = fn.__kwdefaults__
    new_fn.__tilescope_original__ = fn
    return new_fn


__all__ = ["rewrite", "code_objects", "RUNTIME_NAME", "version"]
