"""The blast-radius report as markdown: per-stage changes, resource deltas, per-kernel diffstats, failures."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from tilescope.bench.report import table
from tilescope.blast.normalize import STAGES
from tilescope.blast.radius import KernelChange, StageSummary

STAGE_TITLES = {
    "ttir": "TTIR",
    "ttgir": "TTGIR",
    "llir": "LLIR",
    "ptx": "PTX",
    "amdgcn": "AMDGCN",
    "sass": "SASS",
}


def _cell(changed: int, total: int, added: int, removed: int) -> str:
    return f"{changed}/{total}" + (f" (+{added} −{removed})" if changed else "")


def markdown(meta: dict[str, Any], changes: Sequence[KernelChange], summary: Sequence[StageSummary]) -> str:
    """The full report."""
    out = [f"# Blast radius: {meta['base']['label']} → {meta['head']['label']}", ""]
    for side in ("base", "head"):
        m = meta[side]
        extra = "".join(f", {k}={v}" for k, v in {**m["variables"], **m["options"]}.items())
        out.append(f"- {side}: Triton {m['triton']} ({m['python']}{extra})")
    out.append(
        f"- corpus: {meta['corpus']}; {meta['kernels']} kernel compilation(s) × targets "
        f"{', '.join(meta['targets'])}; {meta['seconds']:.0f} s with {meta['parallel']} processes "
        f"({meta['cached']} of {meta['jobs_total']} builds from cache)"
    )
    out.append(
        "- a kernel counts as changed in a stage when its normalised text differs (locations, SSA names, "
        "register and label numbering, debug info and version strings removed); (+a −r) is the line "
        "diffstat summed over the changed kernels"
    )
    out += ["", "## Kernels changed per stage", ""]
    stages = [s for s in STAGES if any(x.stage == s for x in summary)]
    rows = []
    for target in meta["targets"]:
        cells = {x.stage: x for x in summary if x.target == target}
        if cells:
            rows.append(
                [target]
                + [
                    _cell(c.changed, c.compared, c.added, c.removed) if (c := cells.get(s)) else "–"
                    for s in stages
                ]
            )
    out.append(table(["target"] + [STAGE_TITLES[s] for s in stages], rows) if rows else "(nothing compared)")
    out += ["", "## Resource changes", ""]
    res_rows = []
    for c in changes:
        for name, (a, b) in c.resource_deltas().items():
            res_rows.append([c.kernel, c.label, c.target, name, a, b, f"{b - a:+d}"])
    out.append(
        table(["kernel", "benchmark", "target", "resource", "base", "head", "Δ"], res_rows)
        if res_rows
        else "No register, spill, scratch or shared-memory figure changed."
    )
    out += ["", "## Changed kernels", ""]
    k_rows = []
    for c in changes:
        if c.status == "compared" and any(v["changed"] for v in c.stages.values()):
            k_rows.append(
                [c.kernel, c.label, c.target]
                + [
                    (f"+{v['added']} −{v['removed']}" if v["changed"] else "=")
                    if (v := c.stages.get(s))
                    else "–"
                    for s in stages
                ]
            )
    out.append(
        table(["kernel", "benchmark", "target"] + [STAGE_TITLES[s] for s in stages], k_rows)
        if k_rows
        else "No kernel changed."
    )
    failed = [c for c in changes if c.status != "compared"]
    if failed:
        out += ["", "## Builds that failed", ""]
        grouped = Counter((c.target, c.status, c.message) for c in failed)
        out.append(
            table(
                ["target", "which side", "kernels", "message"],
                [[t, s, n, m] for (t, s, m), n in sorted(grouped.items())],
            )
        )
    return "\n".join(out) + "\n"
