"""The launch an NKI kernel is running in: what ``nl.*`` and ``nisa.*`` calls act on."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

_LOCAL = threading.local()


@dataclass
class Context:
    """One running batch of an NKI launch.

    ``allocate(shape, dtype, name)`` makes a ``nl.shared_hbm`` output (once per launch: the n-th
    allocation of every attempt is the same tensor); ``allocations`` counts them in this attempt.
    """

    launch: Any
    allocate: Callable[[tuple, Any, str], Any]
    allocations: int = 0


def current() -> Context:
    """The running NKI launch; a clear error when an NKI function is called outside a kernel."""
    ctx = getattr(_LOCAL, "context", None)
    if ctx is None:
        raise RuntimeError(
            "an nki.language / nki.isa function was called outside an NKI kernel launch; call it inside "
            "a function decorated with @nki.jit, launched as kernel[grid](...)"
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
