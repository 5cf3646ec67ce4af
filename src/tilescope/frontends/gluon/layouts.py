"""Gluon's layouts as data: the rules a layout must keep, and the layout an op's result gets.

A Gluon tensor's type carries its layout (``gl.distributed_type``); Gluon's own semantic checks
that the operands of an elementwise op share one (``Layout mismatch in broadcast``) and gives most
results their operand's layout. For the ops whose result layout Gluon's compiler *infers*
(``expand_dims``, reductions, ``permute``), the rules below compute it from the operand's layout,
as the compiler's layout inference does for those layouts; other inferences are refused with a
clear error rather than guessed. :func:`problems` states what the compiler's verifier rejects in a
blocked layout (lanes per warp, warps per program).
"""

from __future__ import annotations

import math
from typing import Any

from triton.experimental.gluon.language import _layouts as gll

from ...engine.layout import Blocked

WARP = 32

#: layouts whose place is chosen later by the compiler: every inference keeps them
DEFERRED = (gll.AutoLayout, gll.CoalescedLayout)


def problems(layout: Any, num_warps: int) -> list[str]:
    """What is wrong with ``layout`` for a program of ``num_warps`` warps (empty: nothing).

    A blocked layout must place exactly the 32 lanes of a warp and exactly the program's warps;
    a slice layout is checked through its parent.
    """
    if isinstance(layout, gll.SliceLayout):
        return problems(layout.parent, num_warps)
    if not isinstance(layout, gll.BlockedLayout):
        return []
    found = []
    lanes = math.prod(layout.threads_per_warp)
    if lanes != WARP:
        found.append(
            f"threads_per_warp {list(layout.threads_per_warp)} places {lanes} lanes; a warp has {WARP}"
        )
    warps = math.prod(layout.warps_per_cta)
    if warps != num_warps:
        found.append(f"warps_per_cta {list(layout.warps_per_cta)} places {warps} warps; the kernel runs "
                     f"num_warps={num_warps}")  # fmt: skip
    if sorted(layout.order) != list(range(layout.rank)):
        found.append(f"order {list(layout.order)} is not a permutation of the {layout.rank} dimensions")
    return found


def as_blocked(layout: Any) -> Blocked | None:
    """``layout`` as the engine's :class:`~tilescope.engine.layout.Blocked` (per dimension: elements
    per thread, lanes, warps), which orders "gpu" numerics' sums; a slice keeps its parent's
    dimensions but the sliced one. None for a layout that is not blocked or a slice of one."""
    if isinstance(layout, gll.SliceLayout):
        parent = as_blocked(layout.parent)
        if parent is None:
            return None
        keep = [d for d in range(len(parent.size_per_thread)) if d != layout.dim]
        per_dim = (parent.size_per_thread, parent.threads_per_warp, parent.warps_per_cta)
        return Blocked(*(tuple(dims[d] for d in keep) for dims in per_dim))
    if not isinstance(layout, gll.BlockedLayout):
        return None
    return Blocked(tuple(layout.size_per_thread), tuple(layout.threads_per_warp), tuple(layout.warps_per_cta))


def expand_dims(layout: Any, axis: int) -> Any:
    """The layout of ``gl.expand_dims(x, axis)`` for ``x`` of ``layout`` (Gluon's semantic has
    already checked that it is a slice along ``axis``): the slice's parent."""
    if isinstance(layout, DEFERRED):
        return layout
    return layout.parent


def reduced(layout: Any, axis: int) -> Any:
    """The layout of a reduction of a tensor of ``layout`` along ``axis``: its slice along ``axis``."""
    if isinstance(layout, DEFERRED):
        return layout
    return gll.SliceLayout(axis, layout)


def permuted(layout: Any, dims: tuple[int, ...]) -> Any | None:
    """The layout of ``gl.permute(x, dims)`` for ``x`` of ``layout``; None where it is not modelled.

    A blocked layout permutes with its dimensions: per dimension the same elements per thread,
    lanes and warps, and the fastest-first order renamed to the new dimensions.
    """
    if isinstance(layout, DEFERRED):
        return layout
    if not isinstance(layout, gll.BlockedLayout) or layout.cga_layout:
        return None
    position = {old: new for new, old in enumerate(dims)}
    return gll.BlockedLayout(
        [layout.size_per_thread[d] for d in dims],
        [layout.threads_per_warp[d] for d in dims],
        [layout.warps_per_cta[d] for d in dims],
        [position[d] for d in layout.order],
    )


def describe(layout: Any) -> str:
    """A short text of ``layout`` for messages."""
    if isinstance(layout, gll.BlockedLayout):
        return (f"BlockedLayout(size_per_thread={list(layout.size_per_thread)}, threads_per_warp="
                f"{list(layout.threads_per_warp)}, warps_per_cta={list(layout.warps_per_cta)}, "
                f"order={list(layout.order)})")  # fmt: skip
    if isinstance(layout, gll.SliceLayout):
        return f"SliceLayout(dim={layout.dim}, parent={describe(layout.parent)})"
    return repr(layout)
