"""The launch a frontend's kernel is running in: what the DSL's functions (``nl.load``, ``ct.load``) act on.

Frontends whose language is a set of Python functions (NKI, cuTile) make the running batch the
current context while the kernel body runs; the functions ask :func:`current` for it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

_LOCAL = threading.local()


@dataclass
class Context:
    """One running batch of a launch.

    ``allocate(shape, dtype, name)``, for DSLs whose kernels allocate device memory (NKI's
    ``nl.shared_hbm`` outputs), makes a tensor once per launch: the n-th allocation of every attempt
    is the same tensor; ``allocations`` counts them in this attempt.
    """

    launch: Any
    allocate: Callable[[tuple, Any, str], Any] | None = None
    allocations: int = 0


def current() -> Context:
    """The running NKI launch; a clear error when an NKI function is called outside a kernel."""
    ctx = getattr(_LOCAL, "context", None)
    if ctx is None:
        raise RuntimeError(
            "a tile-language function (nki.language, cuda.tile, ...) was called outside a kernel launch; "
            "call it inside a kernel (@nki.jit, @ct.kernel) launched on a grid"
        )
    return ctx


@contextlib.contextmanager
def running(ctx: Context) -> Iterator[Context]:
    """Make ``ctx`` the running launch for the calls inside."""
    outer = getattr(_LOCAL, "context", None)
    _LOCAL.context = ctx
    try:
        yield ctx
    finally:
        _LOCAL.context = outer


def loop_range(*bounds: Any) -> Iterator[int]:
    """``range(*bounds)`` for a kernel's loop, with the engine told where the loop is (loop events, the
    iteration findings name); a bound that is a tile is the same for every program or splits the batch."""
    launch = current().launch
    steps = range(*(int(b) for b in bounds))
    frame = launch.loop_enter(launch.site())
    try:
        for i, k in enumerate(steps):
            launch.loop_iterate(frame, i)
            yield k
    finally:
        launch.loop_exit(frame)
