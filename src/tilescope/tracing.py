"""``tilescope.trace``: run a tile-language kernel on the CPU engine under analysis clients.

The one user-facing entry point for every frontend: it picks the frontend that accepts the
kernel, builds the clients, checks the options (engine options, client options, the frontend's
own) and returns the frontend's launcher. Unknown options are an error naming the allowed ones.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .clients import client_options, make_clients
from .engine.errors import LaunchError
from .engine.grid import ExecutionOptions
from .frontends import frontend_for
from .session import Session, current

#: engine options every frontend takes (see :class:`~tilescope.engine.grid.ExecutionOptions`)
ENGINE_OPTIONS = tuple(f.name for f in dataclasses.fields(ExecutionOptions))


def trace(kernel: Any = None, *, clients: Any = None, session: Session | None = None, **options: Any) -> Any:
    """Run a tile-language kernel on the CPU engine (Triton: ``tilescope.trace(kernel)[grid](*args)``).

    Also a decorator, above or below the DSL's own (``@tilescope.trace`` or
    ``@tilescope.trace(clients="sanitizer")``). ``clients``: a name, a comma-separated string, a
    list of names or client objects (default: ``TILESCOPE_CLIENTS``). Engine options: ``mode``
    ("batched", "serial" or "concurrent"), ``batch_size``, ``compute_outputs`` (False: addresses and
    masks only), ``bounds`` ("view" or "storage"), ``seed`` and ``slots`` (concurrent mode's
    schedule and programs in flight), ``schedules`` (run each launch under that many seeded
    concurrent schedules), ``spin_limit``, ``value_budget_bytes``, ``numerics`` ("gpu",
    the default: the bits the modelled GPU computes; "ideal": every operation correctly rounded; see
    docs/numerics.md). Client options go to the clients that declare them (``trace_dir``,
    ``fail_fast``, ...); the frontend's own options (Triton: ``config``, ``autotune``, ``debug``,
    ``sanitize_overflow``, ``gpu_compiler``) to it.
    """
    if kernel is None:
        return lambda k: trace(k, clients=clients, session=session, **options)
    kernel = getattr(kernel, "__tilescope_kernel__", kernel)  # a launcher: trace its kernel again
    session = session or current()
    frontend, how = frontend_for(kernel)
    if how == "function":
        session.mark(kernel, {"clients": clients, **options})
        return kernel
    engine = {k: v for k, v in options.items() if k in ENGINE_OPTIONS}
    progress = options.get("progress")
    allowed_clients = client_options(clients)
    for_clients = {k: v for k, v in options.items() if k in allowed_clients}
    rest = {k: v for k, v in options.items() if k not in engine and k not in for_clients and k != "progress"}
    unknown = sorted(set(rest) - set(frontend.options))
    if unknown:
        known = sorted({*ENGINE_OPTIONS, *allowed_clients, *frontend.options, "progress"})
        raise LaunchError(
            f"tilescope.trace: unknown option{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(map(repr, unknown))} for a {frontend.name} kernel; options are {', '.join(known)}"
        )
    try:
        execution = ExecutionOptions(**engine)
    except ValueError as exc:
        raise LaunchError(f"tilescope.trace: {exc}") from None
    launcher = frontend.launcher(
        kernel, clients=make_clients(clients, **for_clients), options=execution, session=session, **rest
    )
    if progress is not None:
        launcher.progress = progress
    return launcher
