"""``tilescope.trace``: run a tile-language kernel on the CPU engine under analysis clients.

The one user-facing entry point for every frontend: it picks the frontend that accepts the
kernel, builds the clients, checks the options (engine options, client options, the frontend's
own) and returns the frontend's launcher. :func:`check_options` is the one check every entry point
that takes these options uses (``trace``, ``Session.intercept`` and ``intercepting``, ``tilescope
run``, the pytest plug-in): an unknown option, an invalid value or a conflicting combination is a
:class:`~tilescope.engine.errors.OptionError` (a ``LaunchError`` and a ``ValueError``) naming the
option and what it may be.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from dataclasses import dataclass
from typing import Any

from .clients import Client, client_needs, client_options, make_clients
from .engine.errors import OptionError
from .engine.grid import ExecutionOptions
from .engine.memory import BOUNDS
from .frontends import Frontend, frontend_for, frontends
from .ir import Need
from .session import Session, current

#: engine options every frontend takes (see :class:`~tilescope.engine.grid.ExecutionOptions`)
ENGINE_OPTIONS = tuple(f.name for f in dataclasses.fields(ExecutionOptions))
#: the bounds policy when a launch does not name one (``tilescope run --bounds`` sets it for its children)
BOUNDS_ENV = "TILESCOPE_BOUNDS"


@dataclass
class CheckedOptions:
    """The options of one entry point, checked and split by who takes them."""

    execution: ExecutionOptions
    clients: list[Client]
    frontend: dict[str, Any]
    progress: Any = None


def check_options(
    options: dict[str, Any],
    clients: Any = None,
    frontend: Frontend | None = None,
    where: str = "tilescope.trace",
) -> CheckedOptions:
    """Check ``options`` for clients ``clients`` and ``frontend`` (None: any installed frontend), as
    ``where`` takes them; the engine options, client instances and the frontend's own options.

    Engine options are :class:`~tilescope.engine.grid.ExecutionOptions` (``bounds`` defaults to
    ``TILESCOPE_BOUNDS``), client options go to the clients that declare them, the rest must be
    the frontend's (which checks their values); ``progress`` is a callable.
    """
    engine = {k: v for k, v in options.items() if k in ENGINE_OPTIONS}
    if "bounds" not in engine and os.environ.get(BOUNDS_ENV):
        engine["bounds"] = os.environ[BOUNDS_ENV]
        if engine["bounds"] not in BOUNDS:
            allowed = ", ".join(map(repr, BOUNDS))
            raise OptionError(f"{BOUNDS_ENV} must be one of {allowed}; got {engine['bounds']!r}")
    try:
        allowed_clients = client_options(clients)
    except ValueError as exc:
        raise OptionError(f"{where}: {exc}") from None
    candidates = [frontend] if frontend is not None else frontends()
    frontend_names = {o for f in candidates for o in f.options}
    unknown = sorted(set(options) - {*ENGINE_OPTIONS, *allowed_clients, *frontend_names, "progress"})
    if unknown:
        known = sorted({*ENGINE_OPTIONS, *allowed_clients, *frontend_names, "progress"})
        kind = f" for a {frontend.name} kernel" if frontend is not None else ""
        close = [f"{m[0]!r} for {u!r}" for u in unknown if (m := difflib.get_close_matches(u, known, 1))]
        hint = f"; did you mean {' and '.join(close)}?" if close else ""
        raise OptionError(
            f"{where}: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}"
            f"{kind}; options are {', '.join(known)}{hint}"
        )
    try:
        execution = ExecutionOptions(**engine)
    except ValueError as exc:
        raise OptionError(f"{where}: {exc}") from None
    serial_ones = execution.mode == "serial" and execution.batch_size == 1  # what serial means anyway
    if "batch_size" in engine and execution.mode != "batched" and not serial_ones:
        raise OptionError(
            f"{where}: batch_size={execution.batch_size} conflicts with mode={execution.mode!r}, which runs "
            "one program at a time (batch_size is how many programs mode='batched' runs per pass)"
        )
    progress = options.get("progress")
    if progress is not None and not callable(progress):
        raise OptionError(f"{where}: progress must be a callable (done, total) or None; got {progress!r}")
    for f in candidates:
        check = getattr(f, "check_options", None)
        if check is not None:
            try:
                check({k: v for k, v in options.items() if k in f.options})
            except ValueError as exc:
                raise OptionError(f"{where}: {exc}") from None
    for_clients = {k: v for k, v in options.items() if k in allowed_clients}
    if execution.compute_outputs is False:
        for name, needs in client_needs(clients, **for_clients).items():
            if Need.VALUES in needs:
                raise OptionError(
                    f"{where}: compute_outputs=False conflicts with the {name} client, which records values "
                    "(computing no outputs computes no values)"
                )
    try:
        made = make_clients(clients, **for_clients)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"{where}: {exc}") from None
    rest = {k: v for k, v in options.items() if k in frontend_names}
    return CheckedOptions(execution, made, rest, progress)


def trace(kernel: Any = None, *, clients: Any = None, session: Session | None = None, **options: Any) -> Any:
    """Run a tile-language kernel on the CPU engine (Triton: ``tilescope.trace(kernel)[grid](*args)``).

    Also a decorator, above or below the DSL's own (``@tilescope.trace`` or
    ``@tilescope.trace(clients="sanitizer")``). ``clients``: a name, a comma-separated string, a
    list of names or client objects (default: ``TILESCOPE_CLIENTS``). Engine options: ``mode``
    ("batched", "serial" or "concurrent"), ``batch_size``, ``compute_outputs`` (False: addresses and
    masks only), ``bounds`` ("warn": an access outside its argument's view but inside its storage is
    a warning and runs as on the GPU; "view": it is out of bounds; "storage": it is fine; default
    ``TILESCOPE_BOUNDS`` or "warn"), ``seed`` and ``slots`` (concurrent mode's
    schedule and programs in flight), ``schedules`` (run each launch under that many seeded
    concurrent schedules), ``spin_limit``, ``value_budget_bytes``, ``numerics`` ("gpu",
    the default: the bits the modelled GPU computes; "ideal": every operation correctly rounded; see
    docs/numerics.md). Client options go to the clients that declare them (``trace_dir``,
    ``fail_fast``, ...); the frontend's own options (Triton: ``config``, ``autotune``, ``debug``,
    ``sanitize_overflow``, ``gpu_compiler``, ``gpu_layouts``, ``gpu_sfu``) to it.
    """
    if kernel is None:
        return lambda k: trace(k, clients=clients, session=session, **options)
    kernel = getattr(kernel, "__tilescope_kernel__", kernel)  # a launcher: trace its kernel again
    session = session or current()
    frontend, how = frontend_for(kernel)
    if how == "function":
        check_options(options, clients, frontend)
        session.mark(kernel, {"clients": clients, **options})
        return kernel
    checked = check_options(options, clients, frontend)
    launcher = frontend.launcher(
        kernel, clients=checked.clients, options=checked.execution, session=session, **checked.frontend
    )
    if checked.progress is not None:
        launcher.progress = checked.progress
    return launcher
