"""Ray mode: the same cells as Ray tasks on a cluster (``tilescope sweep --ray ADDRESS``).

Each cell is one task of :func:`~.cell.run_payload`, which Ray imports by module path in its workers; a
cell's case function is imported there by name too (kernels are never pickled), so the cluster's
workers need tilescope and the case modules installed or on the spec's ``path``. Ray schedules the
tasks, retries those whose worker or node was lost (``retries``) and carries results back through
its object store. The time limit is raised inside the case as in local mode; a case that does not
stop ends its worker ``grace`` seconds later, which Ray reports as a lost worker (``crashed``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .cell import CRASHED, FAILED, CellResult, Limits, ended, payload, run_payload
from .spec import Cell


def connect(address: str, **init: Any) -> None:
    """Connect this process to the Ray cluster at ``address`` (``auto``, ``local``, ``host:port``,
    ``ray://host:port``) unless it already is."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False, **init)


def results(cells: list[Cell], limits: Limits, address: str, retries: int = 2) -> Iterator[CellResult]:
    """Run ``cells`` as Ray tasks on the cluster at ``address``; yield each result as it ends."""
    import ray
    from ray.exceptions import RayError, RayTaskError, WorkerCrashedError

    connect(address)
    task = ray.remote(num_cpus=1, max_retries=retries)(run_payload)
    pending = {task.remote(payload(cell, limits)): cell for cell in cells}
    try:
        while pending:
            # whatever ended within a second, not one ref per call: a sweep may hold thousands
            done, _ = ray.wait(list(pending), num_returns=len(pending), timeout=1.0)
            for ref in done:
                cell = pending.pop(ref)
                try:
                    yield CellResult.from_dict(ray.get(ref))
                except WorkerCrashedError:
                    tries = f"{retries + 1} time{'s' if retries else ''}"
                    yield ended(cell, CRASHED, None, f"its Ray worker died (tried {tries}; a segfault, the "
                                                     "memory monitor, or a case stuck past its time limit)")
                except RayTaskError as exc:  # the task itself raised: tilescope could not run the cell
                    yield ended(cell, FAILED, None, f"the Ray task failed: {exc.cause!r}")
                except RayError as exc:
                    yield ended(cell, CRASHED, None, f"Ray lost the task: {type(exc).__name__}: {exc}")
    finally:
        for ref in pending:  # the caller gave up early
            ray.cancel(ref, force=True)
