"""The kernel's jaxpr walked on the engine: an ``eval_jaxpr`` whose values are engine values.

One loop over the equations, as in JAX's own ``eval_jaxpr``: each equation's inputs are read from
the environment, its primitive is looked up (ref accesses, grid queries and control flow here,
array primitives in :mod:`rules`), and its outputs are written back. The site of every op is the
equation's ``source_info`` (the user's Pallas line), set in :class:`JaxprSites` before the
equation runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from jax._src import core as jax_core
from jax._src import source_info_util, tree_util

from ...engine import dtypes, ops
from ...engine.errors import KernelError, TilescopeError
from ...engine.ops import Op
from ...engine.sites import SiteFinder
from ...engine.values import Value
from ...ir import Node, Site
from ..running import current
from ..values import apply_broadcast, cast
from . import refs
from .rules import RULES, engine_dtype


class JaxprSites(SiteFinder):
    """Sites from jaxpr equations: the interpreter names the equation it runs, ``find`` returns it."""

    def __init__(self):
        super().__init__()
        self._now = threading.local()

    def find(self) -> Site | None:
        """The user's line of the equation running now."""
        return getattr(self._now, "site", None)

    def set(self, site: Site | None) -> None:
        """Make ``site`` the current one (the kernel's own line, between equations)."""
        self._now.site = site

    def forget(self) -> None:
        """Drop the current site (end of a launch)."""
        self._now.site = None


def site_of(source_info: Any) -> Site | None:
    """The user's frame of a jaxpr equation as a site (columns 1-based, as the engine's are)."""
    return traceback_site(source_info.traceback if source_info is not None else None)


def traceback_site(traceback: Any) -> Site | None:
    """The innermost user frame of a JAX-recorded traceback as a site."""
    frame = source_info_util.user_frame(traceback) if traceback is not None else None
    if frame is None:
        return None
    return Site(frame.file_name, frame.start_line, frame.start_column + 1, frame.end_line,
                frame.end_column + 1, frame.function_name)  # fmt: skip


SITES = JaxprSites()


@dataclass
class Grid:
    """The grid step the kernel runs for: each grid axis's index (an engine value for the axes
    the engine runs as programs, an int for the sequential axes looped inside each program)."""

    ids: Sequence[int | None]  # per grid axis: the step of a sequential axis, None for a parallel one
    sizes: Sequence[int]
    engine_axes: Sequence[int | None]  # per grid axis: the engine's program axis it runs on
    kernel: str = ""

    def program_id(self, axis: int) -> Value:
        """``pl.program_id(axis)``, made at the current site (the user's line that asks for it)."""
        step = self.ids[axis]
        if step is not None:
            return ops.constant(step, dtypes.INT32)
        return ops.program_id(current().launch, self.engine_axes[axis])


def _literal(v: Any) -> Value:
    return ops.constant(v.val.item() if hasattr(v.val, "item") else v.val, engine_dtype(v.aval.dtype))


def _sub_jaxpr(params: dict) -> tuple[Any, Sequence[Any]] | None:
    for key in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
        found = params.get(key)
        if isinstance(found, jax_core.ClosedJaxpr):
            return found.jaxpr, found.consts
        if isinstance(found, jax_core.Jaxpr):
            return found, ()
    return None


@dataclass(frozen=True)
class _Step:
    """One equation of a jaxpr, resolved once: its site, how to read its inputs, what runs it."""

    eqn: Any
    site: Site | None  # None: an equation of a library function JAX traced without the user's frames
    reads: tuple[tuple[bool, Any], ...]  # per input: (True, variable) or (False, the literal's value)
    run: Callable[[list, Grid], list]
    writes: tuple[Any, ...]  # per output: its variable, or None (dropped)


_PLANS: dict[int, tuple[Any, tuple[_Step, ...]]] = {}


def _plan(jaxpr: Any) -> tuple[_Step, ...]:
    """The equations of ``jaxpr`` resolved for :func:`evaluate` (built once per jaxpr): the Python
    dispatch of each equation (primitive lookup, parameters, literals, source site) is paid once,
    not at every grid step and loop iteration."""
    found = _PLANS.get(id(jaxpr))
    if found is None or found[0] is not jaxpr:  # keeps ``jaxpr`` alive: its id is not reused
        used = {v for eqn in jaxpr.eqns for v in eqn.invars if not isinstance(v, jax_core.Literal)}
        used |= {v for v in jaxpr.outvars if not isinstance(v, jax_core.Literal)}
        steps = tuple(
            _Step(
                eqn,
                site_of(eqn.source_info),
                tuple(
                    (False, _literal(v)) if isinstance(v, jax_core.Literal) else (True, v) for v in eqn.invars
                ),
                _resolve(eqn, used),
                tuple(None if isinstance(v, jax_core.DropVar) else v for v in eqn.outvars),
            )
            for eqn in jaxpr.eqns
        )
        found = _PLANS[id(jaxpr)] = (jaxpr, steps)
    return found[1]


def evaluate(jaxpr: Any, consts: Sequence[Any], args: Sequence[Any], grid: Grid) -> list[Any]:
    """Run ``jaxpr`` on engine values (and refs) ``args`` for the running batch; its outputs."""
    env: dict = {}
    for v, x in zip(jaxpr.constvars, consts, strict=True):
        env[v] = _constant(x)
    for v, x in zip(jaxpr.invars, args, strict=True):
        env[v] = x
    outer = SITES.find()
    for step in _plan(jaxpr):
        site = step.site or outer
        SITES.set(site)
        invals = [env[x] if var else x for var, x in step.reads]
        try:
            outs = step.run(invals, grid)
        except (TilescopeError, NotImplementedError) as exc:
            if isinstance(exc, TilescopeError):
                raise
            raise KernelError(f"{exc}", kernel=grid.kernel, site=site) from None
        except Exception as exc:  # a primitive's rule failed: say which, at the user's line
            raise KernelError(f"{step.eqn.primitive.name}: {type(exc).__name__}: {exc}", kernel=grid.kernel,
                              site=site) from exc  # fmt: skip
        for v, o in zip(step.writes, outs, strict=True):
            if v is not None:
                env[v] = o
    return [_literal(v) if isinstance(v, jax_core.Literal) else env[v] for v in jaxpr.outvars]


def _constant(x: Any) -> Value:
    """A jaxpr constant (an array captured by the kernel) as a value shared by every program."""
    array = np.asarray(x)
    return Value(array[None], engine_dtype(array.dtype), Node("const", None))


def _resolve(eqn: Any, used: set) -> Callable[[list, Grid], list]:
    """What runs ``eqn``: ``run(invals, grid)`` gives its outputs (``used``: what its jaxpr reads)."""
    name = eqn.primitive.name
    params = eqn.params
    if name in _SWAPS:
        swap, wanted = _SWAPS[name], eqn.outvars[0] in used  # a swap's old value is loaded only if read
        return lambda invals, grid: swap(eqn, invals, wanted)
    special = _SPECIAL.get(name)
    if special is not None:
        return lambda invals, grid: special(eqn, invals, grid)
    rule = RULES.get(name)
    if rule is not None:
        typed = {**params, "_in": [v.aval for v in eqn.invars], "_out": [v.aval for v in eqn.outvars]}
        return lambda invals, grid: rule(typed, *invals)
    inner = _sub_jaxpr(params)
    if inner is not None:  # pjit, custom_jvp_call, closed_call, checkpoint: their body inline
        jaxpr, consts = inner
        n_consts = int(params.get("num_consts", 0)) if name.startswith("custom_vjp") else 0
        return lambda invals, grid: evaluate(jaxpr, consts, invals[n_consts:], grid)

    def unsupported(invals: list, grid: Grid) -> list:
        raise NotImplementedError(
            f"the JAX primitive `{name}` is not supported by tilescope's Pallas frontend "
            "(see docs/frontends.md)"
        )

    return unsupported


# --- refs


def _transformed(ref: refs.Ref, transforms: Any) -> refs.Ref:
    for t in transforms or ():
        if not hasattr(t, "indices"):
            raise NotImplementedError(f"ref transform {type(t).__name__} (bitcast, reshape) on `{ref.name}`")
        ref = ref.index(t)
    return ref


def _get(eqn: Any, invals: list, grid: Grid) -> list:
    ref, *flat = invals
    transforms = tree_util.tree_unflatten(eqn.params["tree"], flat)
    return [refs.load(_transformed(ref, transforms))]


def _swap(eqn: Any, invals: list, wanted: bool) -> list:
    ref, value, *flat = invals
    view = _transformed(ref, tree_util.tree_unflatten(eqn.params["tree"], flat))
    old = refs.load(view) if wanted else None
    refs.store(view, value)
    return [old]


def _addupdate(eqn: Any, invals: list, grid: Grid) -> list:
    ref, value, *flat = invals
    view = _transformed(ref, tree_util.tree_unflatten(eqn.params["tree"], flat))
    refs.store(view, apply_broadcast(Op.ADD, [refs.load(view), cast(value, view.element)]))
    return []


def _mask(mask: Any) -> Value | None:
    return None if mask is None else cast(mask, dtypes.BOOL)


def _masked_load(eqn: Any, invals: list, grid: Grid) -> list:
    ref, transforms, mask, other = tree_util.tree_unflatten(eqn.params["args_tree"], invals)
    return [refs.load(_transformed(ref, transforms), _mask(mask), other)]


def _masked_swap(eqn: Any, invals: list, wanted: bool) -> list:
    ref, transforms, value, mask = tree_util.tree_unflatten(eqn.params["args_tree"], invals)
    view = _transformed(ref, transforms)
    old = refs.load(view, _mask(mask)) if wanted else None
    refs.store(view, value, _mask(mask))
    return [old]


def _atomic_rmw(eqn: Any, invals: list, grid: Grid) -> list:
    ref, transforms, value, mask = tree_util.tree_unflatten(eqn.params["args_tree"], invals)
    combine = str(getattr(eqn.params["atomic_type"], "value", eqn.params["atomic_type"]))
    return [refs.atomic(_transformed(ref, transforms), combine, [value], _mask(mask))]


def _atomic_cas(eqn: Any, invals: list, grid: Grid) -> list:
    ref, expected, value = invals
    return [refs.atomic(ref, "cas", [expected, value])]


# --- grid and control flow


def _program_id(eqn: Any, invals: list, grid: Grid) -> list:
    return [grid.program_id(int(eqn.params["axis"]))]


def _num_programs(eqn: Any, invals: list, grid: Grid) -> list:
    return [ops.constant(grid.sizes[int(eqn.params["axis"])], dtypes.INT32)]


def _decide(value: Value) -> int:
    launch = current().launch
    return int(launch.decide(value.data, launch.site()))


def _cond(eqn: Any, invals: list, grid: Grid) -> list:
    index, *operands = invals
    branch = eqn.params["branches"][_decide(index)]
    return evaluate(branch.jaxpr, branch.consts, operands, grid)


def _loop(eqn: Any, grid: Grid, body: Callable[[int], bool]) -> None:
    """Run ``body(i)`` for i = 0, 1, ... while it returns True, with loop events at the equation's site."""
    launch = current().launch
    frame = launch.loop_enter(launch.site(), key=id(eqn))
    try:
        i = 0
        while True:
            launch.loop_iterate(frame, i)
            if not body(i):
                break
            i += 1
    finally:
        launch.loop_exit(frame)


def _scan(eqn: Any, invals: list, grid: Grid) -> list:
    p = eqn.params
    n_consts, n_carry, length = int(p["num_consts"]), int(p["num_carry"]), int(p["length"])
    if len(invals) != n_consts + n_carry or len(eqn.outvars) != n_carry:
        raise NotImplementedError("lax.scan over arrays (xs/ys): the Pallas frontend runs fori_loop-style "
                                  "scans (carries only)")  # fmt: skip
    consts, carry = invals[:n_consts], list(invals[n_consts:])
    body = p["jaxpr"]
    site = SITES.find()

    def step(i: int) -> bool:
        if i >= length:
            return False
        carry[:] = evaluate(body.jaxpr, body.consts, [*consts, *carry], grid)
        SITES.set(site)
        return True

    _loop(eqn, grid, step)
    return carry


def _while(eqn: Any, invals: list, grid: Grid) -> list:
    p = eqn.params
    nc, nb = int(p["cond_nconsts"]), int(p["body_nconsts"])
    cond_consts, body_consts, carry = invals[:nc], invals[nc : nc + nb], list(invals[nc + nb :])
    cond, body = p["cond_jaxpr"], p["body_jaxpr"]
    site = SITES.find()

    def step(i: int) -> bool:
        (go,) = evaluate(cond.jaxpr, cond.consts, [*cond_consts, *carry], grid)
        SITES.set(site)
        if not _decide(go):
            return False
        carry[:] = evaluate(body.jaxpr, body.consts, [*body_consts, *carry], grid)
        SITES.set(site)
        return True

    _loop(eqn, grid, step)
    return carry


def _ignored(eqn: Any, invals: list, grid: Grid) -> list:
    return [None] * len(eqn.outvars)


_SPECIAL: dict[str, Callable[[Any, list, Grid], list]] = {
    "get": _get, "addupdate": _addupdate, "masked_load": _masked_load, "atomic_rmw": _atomic_rmw,
    "atomic_cas": _atomic_cas,
    "program_id": _program_id,
    "num_programs": _num_programs, "cond": _cond, "scan": _scan, "while": _while,
    "debug_print": _ignored, "debug_callback": _ignored,
}  # fmt: skip

#: ref writes that also return the old contents: loaded only when the old value is read
_SWAPS: dict[str, Callable[[Any, list, bool], list]] = {"swap": _swap, "masked_swap": _masked_swap}
