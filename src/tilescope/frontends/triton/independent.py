"""What a kernel's loops and branches carry, read from its source: which ``for`` loops have
independent iterations (:func:`independent_loops`), and which names a predicated branch or loop
must merge or freeze per program (:func:`carried_names`).

A loop's iterations are independent when no value flows from one iteration to the next or out of
the loop: every name the body assigns (the loop variable included) is assigned in an iteration
before that iteration reads it, and is never read outside the loop. MoE's loop over an expert's
row blocks is one (each block computes and stores its own tile); a K loop accumulating ``acc`` is
not. The engine may run the iterations of such a loop as extra rows of the batch, all at once
(:mod:`tilescope.engine.iterations`); memory is checked at run time, since two iterations may
still meet through memory.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

#: statements under which an iteration could leave early or bind names in ways not followed here
_UNSUPPORTED = (
    ast.Return,
    ast.Break,
    ast.Continue,
    ast.Yield,
    ast.YieldFrom,
    ast.Global,
    ast.Nonlocal,
    ast.Delete,
    ast.Try,
    ast.With,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.NamedExpr,
    ast.Match,
)


@dataclass(frozen=True)
class Independent:
    """An independent loop: ``free`` are the local names its body reads but does not assign (they
    get one row per iteration), ``assigned`` the names it assigns (put back as they were after it)."""

    free: tuple[str, ...]
    assigned: tuple[str, ...]


def _loads(node: ast.AST) -> set[str]:
    """Names ``node`` reads (``x += y`` reads ``x``)."""
    names = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            names.add(n.id)
        elif isinstance(n, ast.AugAssign):
            names |= _stores(n.target)
    return names


def _stores(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _reading(node: ast.AST) -> bool:
    """Whether ``node`` is one of the nodes that read names (a load, or an augmented assignment)."""
    return (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)) or isinstance(node, ast.AugAssign)


def _reads_before_assigning(stmts: list[ast.stmt], defined: set[str], watch: set[str]) -> bool:
    """True when ``stmts`` may read a name of ``watch`` before assigning it (``defined``: the names
    surely assigned so far; updated with those ``stmts`` surely assign)."""
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            if (_loads(stmt.test) & watch) - defined:
                return True
            then, other = set(defined), set(defined)
            if _reads_before_assigning(stmt.body, then, watch):
                return True
            if _reads_before_assigning(stmt.orelse, other, watch):
                return True
            defined |= then & other
        elif isinstance(stmt, (ast.For, ast.While)):
            header = stmt.iter if isinstance(stmt, ast.For) else stmt.test
            if (_loads(header) & watch) - defined:
                return True
            inner = set(defined) | (_stores(stmt.target) if isinstance(stmt, ast.For) else set())
            if _reads_before_assigning(stmt.body, inner, watch):
                return True
            if isinstance(stmt, ast.While) and (_loads(stmt.test) & watch) - inner:
                return True  # the test after an iteration reads what the body may not have assigned
            if _reads_before_assigning(stmt.orelse, set(defined), watch):
                return True
        else:
            if (_loads(stmt) & watch) - defined:
                return True
            defined |= _stores(stmt)
    return False


def _is_range(call: ast.expr) -> bool:
    """``range(...)`` or ``tl.range(...)`` (not ``tl.static_range``, which the compiler unrolls)."""
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    return (isinstance(func, ast.Name) and func.id == "range") or (
        isinstance(func, ast.Attribute) and func.attr == "range"
    )


def independent_loops(function: ast.FunctionDef) -> dict[int, Independent]:
    """The independent ``for`` loops of ``function``, by ``id`` of their AST node."""
    args = function.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
    local = params | _stores(function)
    found: dict[int, Independent] = {}
    for loop in ast.walk(function):
        if not isinstance(loop, ast.For) or loop.orelse or not isinstance(loop.target, ast.Name):
            continue
        if not _is_range(loop.iter) or any(
            isinstance(n, _UNSUPPORTED) for s in loop.body for n in ast.walk(s)
        ):
            continue
        assigned = {loop.target.id} | {n for s in loop.body for n in _stores(s)}
        if _reads_before_assigning(loop.body, {loop.target.id}, assigned):
            continue
        inside = {id(n) for s in loop.body for n in ast.walk(s)} | {id(loop.target)}
        outside = set().union(*(_loads(n) for n in ast.walk(function) if _reading(n) and id(n) not in inside))
        if assigned & outside:
            continue  # a value leaves the loop
        reads = {n for s in loop.body for n in _loads(s)}
        free = sorted((reads & local) - assigned)
        found[id(loop)] = Independent(tuple(free), tuple(sorted(assigned)))
    return found


def _region(node: ast.If | ast.For | ast.While) -> list[list[ast.stmt]]:
    """The statement lists whose assignments a predicated ``if`` merges or a loop body freezes."""
    return [node.body, node.orelse] if isinstance(node, ast.If) else [node.body]


def carried_names(function: ast.FunctionDef) -> dict[int, frozenset[str] | None]:
    """For each ``if``, ``for`` and ``while`` of ``function`` (by ``id`` of its AST node), the names its
    branches or body assign whose values code after them may read; ``None`` means all of them.

    A name needs a per-program merge (a predicated ``if``) or freeze (a loop some programs left) only
    if some read can see it afterwards: a read anywhere in the function outside those statements
    (after them, or in a later iteration of an enclosing loop, or a ``while`` test), or a read inside
    them before they assign it (a later iteration of the loop, or of an enclosing loop, reads the
    previous value). The temporaries of an iteration (offsets, masks, loaded tiles) are neither,
    and merging them would cost a full select per name and iteration. Bodies with statements this
    analysis does not follow (``return``, ``break``, ``try``, nested functions, ...) keep every name.
    """
    reading = [(n, _loads(n)) for n in ast.walk(function) if _reading(n)]
    found: dict[int, frozenset[str] | None] = {}
    for node in ast.walk(function):
        if not isinstance(node, (ast.If, ast.For, ast.While)):
            continue
        lists = _region(node)
        if any(isinstance(n, _UNSUPPORTED) for stmts in lists for s in stmts for n in ast.walk(s)):
            found[id(node)] = None
            continue
        inside = {id(n) for stmts in lists for s in stmts for n in ast.walk(s)}
        outside = set().union(*(names for n, names in reading if id(n) not in inside))
        start = _stores(node.target) if isinstance(node, ast.For) else set()
        names = {n for stmts in lists for s in stmts for n in _stores(s)}
        found[id(node)] = frozenset(
            n
            for n in names
            if n in outside or any(_reads_before_assigning(stmts, set(start), {n}) for stmts in lists)
        )
    return found
