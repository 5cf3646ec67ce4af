"""The racecheck report: races as compiler diagnostics, JSON and SARIF 2.1.0."""

from __future__ import annotations

from dataclasses import dataclass

from ..base import Finding
from ..diagnostics import DiagnosticReport
from ..sanitizer.programs import summarize
from .findings import KIND, headline
from .sharedrace import KIND as SHARED_KIND


@dataclass
class RaceReport(DiagnosticReport):
    """Races found by :class:`~tilescope.clients.racecheck.RaceCheck`, one per (site pair, tensor)."""

    client_name = "racecheck"
    rules_help = {KIND: "Two programs of one launch access the same bytes, at least one writes, and no "
                        "release/acquire synchronisation orders them.",
                  SHARED_KIND: "A program reads shared memory that an asynchronous copy (a TMA load) still "
                              "writes, or two warp-specialised partitions access the same shared memory "
                              "with no mbarrier arrive and wait ordering them."}  # fmt: skip

    @staticmethod
    def caret_label(finding: Finding) -> str:
        """``races with the store of program (3, 0)`` and the first element."""
        d = finding.details
        if finding.kind == SHARED_KIND:
            return f"not ordered with the other access; fix: {d.get('fix')}"
        first = d.get("first") or {}
        element = d.get("element_text")
        where = f" on {element}" if element else ""
        return f"{d.get('race')}{where} with the {first.get('access')} of program {first.get('program_text')}"

    @classmethod
    def merge_findings(cls, a: Finding, b: Finding) -> Finding:
        """Counts per race kind add up too."""
        merged = super().merge_findings(a, b)
        kinds = dict(a.details.get("kinds") or {})
        for kind, n in (b.details.get("kinds") or {}).items():
            kinds[kind] = kinds.get(kind, 0) + n
        merged.details["kinds"] = dict(sorted(kinds.items()))
        return merged

    @classmethod
    def finish_merged(cls, finding: Finding) -> Finding:
        """The headline and program summary from the merged totals."""
        d = dict(finding.details)
        d["programs"] = len(finding.program_ids)
        d["program_summary"] = summarize(finding.program_ids, int(d.get("grid_rank") or 3))
        finding.details = d
        if finding.kind != SHARED_KIND:
            finding.message = headline(d)
        return finding
