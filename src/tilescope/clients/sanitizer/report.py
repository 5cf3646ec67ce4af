"""The sanitizer's report: findings plus the ways to show them (terminal, text, JSON, SARIF)."""

from __future__ import annotations

from dataclasses import dataclass

from ..base import Finding
from ..diagnostics import DiagnosticReport
from .events import severity
from .findings import merged
from .render import caret_label

#: SARIF rules: one per finding kind
RULES_HELP = {
    "out-of-bounds load": "An enabled lane of a load reads outside the tensor its pointer was derived from.",
    "out-of-bounds store": "An enabled lane of a store writes outside the tensor its pointer was derived "
                           "from.",
    "out-of-bounds atomic": "An enabled lane of an atomic updates memory outside the tensor its pointer "
                            "was derived from.",
    "load outside view": "An enabled lane of a load reads outside the view its pointer was derived from, "
                         "inside the view's storage (memory-safe; a gather through as_strided does it).",
    "store outside view": "An enabled lane of a store writes outside the view its pointer was derived "
                          "from, inside the view's storage.",
    "atomic outside view": "An enabled lane of an atomic updates memory outside the view its pointer was "
                           "derived from, inside the view's storage.",
    "descriptor rule": "A tensor descriptor breaks a hardware rule (alignment, strides, block size, rank) "
                       "or reaches outside its tensor.",
    "tile rule": "An on-chip tile breaks a hardware rule of its DSL's machine (NKI: partition dimension, "
                 "PSUM bank size, matmul operand sizes).",
    "int32 overflow": "An address was computed with int32 arithmetic that wrapped around.",
    "device assert": "A tl.device_assert condition is false.",
}


@dataclass
class SanitizerReport(DiagnosticReport):
    """A :class:`Report` that renders as compiler diagnostics and exports SARIF 2.1.0."""

    client_name = "sanitizer"
    rules_help = RULES_HELP
    rules_levels = {kind: severity(kind) for kind in RULES_HELP if severity(kind) != "error"}
    caret_label = staticmethod(caret_label)

    @classmethod
    def finish_merged(cls, finding: Finding) -> Finding:
        """A merged finding's headline and program summary, from the merged totals."""
        return merged(finding)
