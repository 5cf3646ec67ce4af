"""A/B comparison: interleaved worker processes, per-process medians, and a verdict per kernel.

The schedule is ``rounds`` pairs; each pair runs one process of each side in a random order (drawn
from a seeded generator), so slow drifts of the machine hit both sides alike and the two samples
stay exchangeable under "no change", which is what the rank test assumes.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tilescope.bench import stats
from tilescope.bench.procs import JobOutcome, Side


def interleaved(sides: Sequence[Side], rounds: int, seed: int) -> list[Side]:
    """``rounds`` blocks, each holding every side once in a freshly shuffled order."""
    rng = random.Random(seed)
    order: list[Side] = []
    for _ in range(rounds):
        block = list(sides)
        rng.shuffle(block)
        order.extend(block)
    return order


Key = tuple[str, int, str]  # bench, shape index, variant


def per_process_medians(
    outcomes: Iterable[JobOutcome],
) -> tuple[dict[str, dict[Key, list[float]]], dict[str, Any]]:
    """Median latency of each process grouped by side and (bench, shape index, variant), plus failures.

    The second value maps ``side:bench`` (or ``side:*`` for a process that failed as a whole) to the
    first failure message seen, so one broken kernel or environment is reported, not hidden.
    """
    medians: dict[str, dict[Key, list[float]]] = {}
    failures: dict[str, Any] = {}
    for out in outcomes:
        side = medians.setdefault(out.side.name, {})
        if out.failure:
            failures.setdefault(f"{out.side.name}:*", out.failure)
        for res in out.results:
            if res["status"] != "ok" or res.get("median_ms") is None:
                failures.setdefault(
                    f"{out.side.name}:{res['bench']}", f"{res['status']}: {res.get('message', '')}"
                )
                continue
            side.setdefault((res["bench"], int(res.get("case_index", 0)), res["variant"]), []).append(
                res["median_ms"]
            )
    return medians, failures


@dataclass(frozen=True)
class KernelVerdict:
    """The comparison of one kernel (bench, shape index, variant) between the base and head sides."""

    bench: str
    case_index: int
    variant: str
    comparison: stats.Comparison


def verdicts(
    medians: dict[str, dict[Key, list[float]]], base: str, head: str, *, threshold: float, alpha: float
) -> list[KernelVerdict]:
    """One verdict per kernel measured by at least two processes on both sides."""
    a_side, b_side = medians.get(base, {}), medians.get(head, {})
    out = []
    for key in sorted(set(a_side) & set(b_side)):
        a, b = a_side[key], b_side[key]
        if len(a) >= 2 and len(b) >= 2:
            out.append(KernelVerdict(*key, stats.compare(a, b, threshold=threshold, alpha=alpha)))
    return out
