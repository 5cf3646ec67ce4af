"""The block-pointer codemod: source text in, migrated source text and a site-by-site account out.

Descriptor families (see :mod:`tilescope.migrate.families`) become ``tl.make_tensor_descriptor``
plus a tuple of integer offsets that ``advance`` updates; every other block-pointer call becomes
the same call on :mod:`tilescope.compat`. Deterministic: the output depends on the input text only.
"""

from __future__ import annotations

import ast
import re

import libcst as cst
from libcst.metadata import PositionProvider

from tilescope.migrate.dataflow import BP, Dataflow, analyse
from tilescope.migrate.families import Family, _code, _int, _tuple, find_families
from tilescope.migrate.sites import FileResult, Site

COMPAT_ALIAS = "tlc"
COMPAT_IMPORT = f"import tilescope.compat as {COMPAT_ALIAS}"
MODES = ("auto", "compat-pointer", "compat-descriptor")
DESCRIPTOR_CONTRACT = (
    "descriptor rules proven from the source; at launch the base must be 16-byte aligned "
    "and the other strides multiples of 16 bytes (as for any TMA descriptor)"
)
_STEM = re.compile(r"^(p_)?(?P<stem>.+?)(_block_ptr|_blk_ptr|_bptr|_bp|_ptr|_block|_blk)?$")


def _stem(name: str) -> str:
    match = _STEM.match(name)
    return match.group("stem") if match else name


class _Namer:
    """Fresh identifiers that collide with nothing already in the function."""

    def __init__(self, fn: cst.FunctionDef) -> None:
        taken: set[str] = set()

        class Names(cst.CSTVisitor):
            def visit_Name(self, node: cst.Name) -> None:
                taken.add(node.value)

        fn.visit(Names())
        self.taken = taken

    def fresh(self, wanted: str) -> str:
        name, i = wanted, 1
        while name in self.taken:
            name, i = f"{wanted}_{i}", i + 1
        self.taken.add(name)
        return name


class _Plan:
    """What to do with each node, keyed by node identity."""

    def __init__(self) -> None:
        self.creations: dict[int, tuple[Family, str, str]] = {}  # stmt -> family, desc, offsets
        self.advances: dict[int, str] = {}  # stmt -> new statement code
        self.accesses: dict[int, str] = {}  # call or `bp.dtype.element_ty` -> new expression code
        self.families: dict[int, Family] = {}  # make_block_ptr call -> family
        self.inside: set[int] = set()  # calls inside rewritten statements: no site of their own


def _plan_descriptors(flow: Dataflow, module: cst.Module, mode: str, plan: _Plan) -> None:
    for fn in flow.functions.values():
        families = find_families(flow, fn, module)
        namer = _Namer(fn)
        for family in families:
            plan.families[id(family.call)] = family
            if mode != "auto" or not family.descriptor:
                continue
            desc = namer.fresh(_stem(family.names[0]) + "_desc")
            offsets = {n: namer.fresh(_stem(n) + "_off") for n in family.names}
            plan.creations[id(family.creation)] = (family, desc, offsets[family.names[0]])
            plan.inside.add(id(family.call))
            for stmt, target, source, delta in family.advances:
                plan.inside.add(id(stmt.body[0].value))
                new = [
                    f"{offsets[source]}[{d}]" + ("" if _int(item) == 0 else f" + {_code(item)}")
                    for d, item in enumerate(_tuple(delta))
                ]
                plan.advances[id(stmt)] = (
                    f"{offsets[target]} = ({', '.join(new)}{',' if len(new) == 1 else ''})"
                )
            for attr in family.dtypes:
                plan.accesses[id(attr)] = f"{desc}.dtype"
            for call in family.accesses:
                name = call.args[0].value.value
                if flow.tl_call(call, "load"):
                    plan.accesses[id(call)] = f"{desc}.load({offsets[name]})"
                else:
                    value = next(
                        a.value
                        for i, a in enumerate(call.args)
                        if (a.keyword and a.keyword.value == "value") or (not a.keyword and i == 1)
                    )
                    plan.accesses[id(call)] = f"{desc}.store({offsets[name]}, {_code(value)})"


class _Rewriter(cst.CSTTransformer):
    """Applies the plan and records one :class:`Site` per block-pointer call."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, flow: Dataflow, plan: _Plan, mode: str, path: str) -> None:
        super().__init__()
        self.flow, self.plan, self.mode, self.path = flow, plan, mode, path
        self.sites: list[Site] = []
        self.notes: list[str] = []
        self.fn = ""
        self.uses_compat = False

    def _pos(self, node: cst.CSTNode) -> tuple[int, int]:
        start = self.get_metadata(PositionProvider, node).start
        return start.line, start.column + 1

    def _site(self, node: cst.CSTNode, kind: str, became: str, detail: str, reason: str) -> None:
        self.sites.append(Site(*self._pos(node), kind, became, detail, reason))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value in self.flow.functions and self.flow.functions[node.name.value] is node:
            self.fn = node.name.value

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if id(original) in self.plan.creations:
            family, desc, offsets = self.plan.creations[id(original)]
            a = family.args
            pad = ', padding_option="nan"' if family.padding == "nan" else ""
            tl = min(self.flow.tl) if self.flow.tl else "triton.language"
            first = cst.parse_statement(
                f"{desc} = {tl}.make_tensor_descriptor({_code(a['base'])}, {_code(a['shape'])}, "
                f"{_code(a['strides'])}, {_code(a['block_shape'])}{pad})"
            )
            first = first.with_changes(leading_lines=original.leading_lines)
            second = cst.parse_statement(f"{offsets} = {_code(a['offsets'])}")
            second = second.with_changes(trailing_whitespace=original.trailing_whitespace)
            self._site(
                original,
                "make_block_ptr",
                "descriptor",
                f"{desc} = tl.make_tensor_descriptor(...); {offsets} = {_code(a['offsets'])}",
                DESCRIPTOR_CONTRACT,
            )
            return cst.FlattenSentinel([first, second])
        if id(original) in self.plan.advances:
            code = self.plan.advances[id(original)]
            self._site(original, "advance", "descriptor", code, "offsets carried as integers")
            new = cst.parse_statement(code)
            return new.with_changes(
                leading_lines=original.leading_lines, trailing_whitespace=original.trailing_whitespace
            )
        return updated

    def _compat_reason(self, node: cst.Call) -> str:
        family = self.plan.families.get(id(node))
        if self.mode != "auto":
            return f"--mode {self.mode}"
        if family is None:
            return "built inline (in a tuple, call or return), so its uses can't all be followed"
        return family.reason

    def _to_compat(self, call: cst.Call, attr: str) -> cst.Call:
        self.uses_compat = True
        return call.with_changes(func=cst.Attribute(cst.Name(COMPAT_ALIAS), cst.Name(attr)))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        flow, fn = self.flow, self.fn
        if id(original) in self.plan.inside:
            return updated
        if id(original) in self.plan.accesses:
            code = self.plan.accesses[id(original)]
            kind = "load" if flow.tl_call(original, "load") else "store"
            self._site(original, kind, "descriptor", code, "every dimension checked or exact")
            return cst.parse_expression(code)
        if flow.tl_call(original, "make_block_ptr"):
            family = self.plan.families.get(id(original))
            new = self._to_compat(updated, "make_block_ptr")
            lowering = "pointer lowering"
            if self.mode == "compat-descriptor" and family is not None and not family.reason:
                new = new.with_changes(
                    args=[*new.args, cst.Arg(cst.Name("True"), keyword=cst.Name("use_descriptor"))]
                )
                lowering = "descriptor lowering"
            self._site(
                original,
                "make_block_ptr",
                "compat",
                f"{COMPAT_ALIAS}.make_block_ptr ({lowering})",
                self._compat_reason(original),
            )
            return new
        if flow.tl_call(original, "advance"):
            self._site(
                original, "advance", "compat", f"{COMPAT_ALIAS}.advance", "its block pointer is compat"
            )
            return self._to_compat(updated, "advance")
        if isinstance(original.func, cst.Attribute) and original.func.attr.value == "advance":
            if flow.kind(fn, original.func.value) == BP:
                self._site(
                    original, "advance", "compat", f"{COMPAT_ALIAS}.advance", "its block pointer is compat"
                )
                self.uses_compat = True
                return cst.Call(
                    cst.Attribute(cst.Name(COMPAT_ALIAS), cst.Name("advance")),
                    [cst.Arg(updated.func.value), *updated.args],
                )
            line, _ = self._pos(original)
            self.notes.append(
                f"{self.path}:{line}: left `{_code(original)}` unchanged: can't tell whether "
                f"`{_code(original.func.value)}` is a block pointer"
            )
            return updated
        if flow.is_block_ptr_access(fn, original):
            kind = "load" if flow.tl_call(original, "load") else "store"
            keep = {"boundary_check", "padding_option"}
            args = [
                a for a in updated.args if not a.keyword or a.keyword.value in keep | {"value", "pointer"}
            ]
            dropped = [a.keyword.value for a in updated.args if a.keyword and a not in args]
            reason = "its block pointer is compat"
            if dropped:
                reason += f"; dropped {', '.join(dropped)} (no block-pointer meaning in tilescope.compat)"
            self._site(original, kind, "compat", f"{COMPAT_ALIAS}.{kind}", reason)
            return self._to_compat(updated.with_changes(args=args), kind)
        return updated

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if self.flow.functions.get(original.name.value) is original:
            self.fn = ""
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if id(original) in self.plan.accesses:
            return cst.parse_expression(self.plan.accesses[id(original)])
        inner = original.value
        if (
            original.attr.value == "element_ty"
            and isinstance(inner, cst.Attribute)
            and inner.attr.value == "dtype"
            and self.flow.kind(self.fn, inner.value) == BP
        ):
            # a block pointer's element type is its base pointer's
            return cst.parse_expression(f"{_code(updated.value.value)}[0].dtype.element_ty")
        return updated


def _add_import(module: cst.Module) -> cst.Module:
    if COMPAT_IMPORT in module.code:
        return module
    body = list(module.body)
    imports = [
        i
        for i, s in enumerate(body)
        if isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], (cst.Import, cst.ImportFrom))
    ]
    # isort order: before the first import of triton, else after the last import
    at = next((i for i in imports if _code(body[i]).split()[1].startswith("triton")), None)
    at = at if at is not None else (imports[-1] + 1 if imports else 0)
    new = cst.parse_statement(COMPAT_IMPORT)
    if at < len(body) and at in imports:
        new = new.with_changes(leading_lines=body[at].leading_lines)
        body[at] = body[at].with_changes(leading_lines=[])
    body.insert(at, new)
    return module.with_changes(body=body)


class _StrayReferences(cst.CSTVisitor):
    """Block-pointer API names used other than as calls: reported, never rewritten."""

    METADATA_DEPENDENCIES = (PositionProvider, cst.metadata.ParentNodeProvider)

    def __init__(self, flow: Dataflow, path: str) -> None:
        super().__init__()
        self.flow, self.path, self.notes = flow, path, []

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value not in ("make_block_ptr", "advance") or _code(node.value) not in self.flow.tl:
            return
        parent = self.get_metadata(cst.metadata.ParentNodeProvider, node)
        if isinstance(parent, cst.Call) and parent.func is node:
            return
        line = self.get_metadata(PositionProvider, node).start.line
        self.notes.append(f"{self.path}:{line}: left `{_code(node)}` unchanged: used other than as a call")


def migrate_source(source: str, path: str = "<string>", mode: str = "auto") -> FileResult:
    """Return the migration of ``source``: new text, every site and its outcome, notes, or the parse error."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    try:
        ast.parse(source, path)  # Python's own parser names the line and column best
        module = cst.parse_module(source)
    except SyntaxError as exc:
        return FileResult(
            path, source, source, error=f"{path}:{exc.lineno}:{exc.offset}: syntax error: {exc.msg}"
        )
    except cst.ParserSyntaxError as exc:
        return FileResult(
            path,
            source,
            source,
            error=f"{path}:{exc.raw_line}:{exc.raw_column + 1}: syntax error: {exc.message}",
        )
    flow = analyse(module)
    plan = _Plan()
    _plan_descriptors(flow, module, mode, plan)
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    strays = _StrayReferences(flow, path)
    wrapper.visit(strays)
    rewriter = _Rewriter(flow, plan, mode, path)
    new = wrapper.visit(rewriter)
    if rewriter.uses_compat:
        new = _add_import(new)
    sites = sorted(rewriter.sites, key=lambda s: (s.line, s.column))
    return FileResult(path, source, new.code, sites, sorted(set(strays.notes + rewriter.notes)))
