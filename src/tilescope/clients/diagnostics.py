"""Reports that read as compiler diagnostics: terminal text, JSON and SARIF 2.1.0, for any client.

A client's report subclasses :class:`DiagnosticReport` and names its SARIF rules (finding kind ->
help) and, optionally, what the caret under the source line says.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import render
from . import sarif
from .base import Finding, Report


@dataclass
class DiagnosticReport(Report):
    """A :class:`Report` that renders as compiler diagnostics and exports SARIF 2.1.0."""

    #: SARIF rules: finding kind -> one-sentence help
    rules_help: ClassVar[dict[str, str]] = {}
    #: finding kind -> its SARIF rule's default level, where not "error"
    rules_levels: ClassVar[dict[str, str]] = {}

    @staticmethod
    def caret_label(finding: Finding) -> str:
        """What the caret under the finding's source line says (nothing by default)."""
        return ""

    def save(self, path: str | os.PathLike, format: str = "json") -> None:
        """Write the report to ``path`` as JSON, or as a SARIF log with ``format="sarif"``."""
        if format == "sarif":
            self.write_sarif(path)
        else:
            super().save(path)

    def to_text(self) -> str:
        """Plain-text diagnostics, one block per finding, and a closing count."""
        body = render.to_text(self.findings, self.caret_label)
        return (body + "\n\n" if body else "") + self._tally()

    def _tally(self) -> str:
        n = len(self.findings)
        launches = self.summary.get("launches", 0)
        plural = "es" if launches != 1 else ""
        return f"{self.client}: {n} finding{'s' if n != 1 else ''} in {launches} launch{plural}"

    def to_sarif(self, root: str | os.PathLike | None = None) -> dict:
        """The findings as a SARIF 2.1.0 log (a dict ready for ``json.dump``)."""
        from .. import __version__

        return sarif.to_sarif(self.findings, f"tilescope-{self.client}", __version__, self.rules_help, root,
                              self.rules_levels)  # fmt: skip

    def write_sarif(self, path: str | os.PathLike) -> None:
        """Write :meth:`to_sarif` to ``path`` (paths in it relative to the working directory)."""
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_sarif(), fh, indent=2)

    def __str__(self) -> str:
        return self.to_text()

    def __rich__(self) -> Any:
        from rich.console import Group
        from rich.text import Text

        return Group(render.to_rich(self.findings, self.caret_label), Text(""),
                     Text(self._tally(), style="bold"))  # fmt: skip
