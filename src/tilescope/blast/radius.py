"""The blast radius: which kernels and stages a change touched, by how many lines, with resource deltas."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tilescope.blast.build import Job, Outcome, load_artifacts
from tilescope.blast.normalize import STAGES, name_blind, normalize

RESOURCE_ORDER = (
    "registers",
    "spill_store_bytes",
    "spill_load_bytes",
    "stack_bytes",
    "vgprs",
    "sgprs",
    "agprs",
    "vgpr_spills",
    "sgpr_spills",
    "scratch_bytes",
    "shared_bytes",
)


def diffstat(a: str, b: str) -> tuple[int, int]:
    """Lines added and removed going from ``a`` to ``b``."""
    added = removed = 0
    for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


@dataclass
class KernelChange:
    """One compiled kernel compared between base and head."""

    bench: str
    kernel: str
    spec: int
    target: str
    status: str  # compared, base-failed, head-failed, both-failed
    message: str = ""
    stages: dict[str, dict[str, int]] = field(
        default_factory=dict
    )  # stage -> {changed, added, removed, lines}
    base_resources: dict[str, int] = field(default_factory=dict)
    head_resources: dict[str, int] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The benchmark and, for a benchmark with several compile specs, which one (``attention_fwd#1``)."""
        return f"{self.bench}#{self.spec}" if self.spec else self.bench

    def resource_deltas(self) -> dict[str, tuple[int, int]]:
        """Resources whose value differs, as (base, head)."""
        keys = [k for k in RESOURCE_ORDER if k in self.base_resources or k in self.head_resources]
        pairs = {k: (self.base_resources.get(k, 0), self.head_resources.get(k, 0)) for k in keys}
        return {k: v for k, v in pairs.items() if v[0] != v[1]}


def compare_job(job: Job, base: Outcome, head: Outcome, cache: Path) -> KernelChange:
    """Compare one job's artifacts between the two sides, stage by stage after normalisation."""
    change = KernelChange(job.bench, job.kernel, job.spec, job.target, "compared")
    if base.status != "ok" or head.status != "ok":
        change.status = {
            (False, False): "both-failed",
            (False, True): "base-failed",
            (True, False): "head-failed",
        }[(base.status == "ok", head.status == "ok")]
        change.message = " / ".join(
            m
            for m in (base.message and f"base: {base.message}", head.message and f"head: {head.message}")
            if m
        )
        return change
    a, b = load_artifacts(cache, base.key), load_artifacts(cache, head.key)
    change.base_resources, change.head_resources = a["resources"], b["resources"]
    for stage in STAGES:
        if stage in a["stages"] and stage in b["stages"]:
            na, nb = normalize(stage, a["stages"][stage]), normalize(stage, b["stages"][stage])
            added, removed = (0, 0)
            if na != nb:  # count on name-blind text; a pure rewiring of values still counts its lines
                added, removed = diffstat(name_blind(na), name_blind(nb))
                if (added, removed) == (0, 0):
                    added, removed = diffstat(na, nb)
            change.stages[stage] = {
                "changed": int(na != nb),
                "added": added,
                "removed": removed,
                "lines": nb.count("\n"),
            }
    return change


@dataclass
class StageSummary:
    """Per (target, stage): how many kernels changed out of how many compared, and the total diffstat."""

    target: str
    stage: str
    changed: int
    compared: int
    added: int
    removed: int
    lines: int


def summarize(changes: Sequence[KernelChange], targets: Sequence[str]) -> list[StageSummary]:
    """Aggregate kernel changes per target and stage, in target then stage order."""
    out = []
    for target in targets:
        for stage in STAGES:
            rows = [c.stages[stage] for c in changes if c.target == target and stage in c.stages]
            if rows:
                out.append(
                    StageSummary(
                        target,
                        stage,
                        sum(r["changed"] for r in rows),
                        len(rows),
                        sum(r["added"] for r in rows),
                        sum(r["removed"] for r in rows),
                        sum(r["lines"] for r in rows),
                    )
                )
    return out


def as_json(
    meta: dict[str, Any], changes: Sequence[KernelChange], summary: Sequence[StageSummary]
) -> dict[str, Any]:
    """The whole report as plain data."""
    return {
        "meta": meta,
        "summary": [asdict(s) for s in summary],
        "kernels": [{**asdict(c), "resource_deltas": c.resource_deltas()} for c in changes],
    }
