"""The ``sanitizer`` client: every fault of every launch becomes part of a de-duplicated finding."""

from __future__ import annotations

import os

from ...errors import TilescopeError
from ...ir import Fault, LaunchInfo, Need
from ..base import Client, Finding, check_flags
from .aggregate import Accumulator
from .events import KINDS, events_of
from .findings import build
from .render import to_text
from .report import SanitizerReport


def _order(f: Finding) -> tuple:
    return (f.file, f.line, f.column, f.kind, str(f.details.get("argument")))


class SanitizerError(TilescopeError):
    """Raised by a ``fail_fast`` sanitizer at its first finding; the message is the diagnostic."""

    def __init__(self, finding: Finding):
        self.finding = finding
        super().__init__(to_text([finding]))


class Sanitizer(Client):
    """Out-of-bounds accesses, descriptor rules, int32 address overflow and device asserts.

    Options: ``fail_fast`` raises :class:`SanitizerError` at the first finding instead of carrying
    on; ``sarif_path`` writes the SARIF log there after every launch, with the findings of every
    sanitizer of the session that writes to the same path. The sanitizer only needs
    addresses and masks, so alone it lets the engine skip the values nothing depends on.
    """

    name = "sanitizer"
    fault_kinds = frozenset(KINDS)
    needs = frozenset({Need.ADDRESSES_ONLY, Need.OVERFLOW_TAINT})
    options = ("fail_fast", "sarif_path")
    report_format = "sarif"

    def __init__(self, fail_fast: bool = False, sarif_path: str | os.PathLike | None = None):
        check_flags("sanitizer", fail_fast=fail_fast)
        self.fail_fast = fail_fast
        self.sarif_path = sarif_path
        self.report_path = sarif_path
        self._accumulators: dict[tuple, Accumulator] = {}
        self._launches: dict[int, LaunchInfo] = {}
        self._tensors: dict[int, frozenset[str]] = {}
        self._launch_count = 0

    def on_launch_start(self, launch: LaunchInfo) -> None:
        """Remember the launch's grid and tensor arguments (faults refer to them by launch id)."""
        self._launches[launch.launch_id] = launch
        self._tensors[launch.launch_id] = frozenset(
            a.name for a in launch.arguments if a.kind in ("tensor", "descriptor"))
        self._launch_count += 1

    def on_launch_end(self, launch: LaunchInfo) -> None:
        """Forget the launch (its findings stay)."""
        self._launches.pop(launch.launch_id, None)
        self._tensors.pop(launch.launch_id, None)

    def on_fault(self, fault: Fault) -> None:
        """Add the fault's lanes to their findings (raising at once when ``fail_fast``)."""
        launch = self._launches[fault.launch_id]
        for event in events_of(fault, self._tensors[fault.launch_id]):
            acc = self._accumulators.get(event.key)
            if acc is None:
                acc = self._accumulators[event.key] = Accumulator(event)
            acc.add(event, launch)
            if self.fail_fast:
                raise SanitizerError(build(acc))

    def report(self) -> SanitizerReport:
        """Every finding so far, in source order."""
        findings = sorted((build(a) for a in self._accumulators.values()), key=_order)
        summary = {"launches": self._launch_count, "findings": len(findings)}
        return SanitizerReport(self.name, findings, summary)
