"""The determinism report: nondeterministic outputs as diagnostics at the op that wrote them last."""

from __future__ import annotations

from dataclasses import dataclass

from ..base import Finding
from ..diagnostics import DiagnosticReport

KIND = "nondeterministic result"


def headline(details: dict) -> str:
    """```c` (fp32[32, 32]): 1024 elements differ between schedules (seeds 0..3), by up to 2.4e-07``."""
    tensor = details.get("tensor") or {}
    seeds = details.get("seeds") or []
    n = int(details.get("elements") or 0)
    shape = ", ".join(map(str, tensor.get("shape", [])))
    seed_text = f"seeds {min(seeds)}..{max(seeds)}" if seeds else "several seeds"
    plural = "s" if n != 1 else ""
    return (f"`{details.get('argument')}` ({tensor.get('dtype')}[{shape}]): {n} element{plural} "
            f"differ between schedules ({seed_text}), by up to {details.get('max_spread', 0):.3g}")


@dataclass
class DeterminismReport(DiagnosticReport):
    """Output elements whose bits changed with the schedule, one finding per (writing site, tensor)."""

    client_name = "determinism"
    rules_help = {KIND: "An output element's bits depend on the order the launch's programs ran in."}

    @staticmethod
    def caret_label(finding: Finding) -> str:
        """``first differing element c[0, 3], last written by this atomic add (sem=..., scope=...)``."""
        d = finding.details
        return f"first differing element {d.get('element_text')}, last written by this {d.get('access')}"

    @classmethod
    def finish_merged(cls, finding: Finding) -> Finding:
        """The headline from the merged counts."""
        d = dict(finding.details)
        d["elements"] = d.get("lanes", d.get("elements"))
        finding.details = d
        finding.message = headline(d)
        return finding
