"""The client API: what an analysis client subscribes to, what it needs, and what it reports.

A client declares the op kinds it wants (``kinds``), the fault kinds it turns into findings
(``fault_kinds``; faults nobody handles raise), what it needs from the core (``needs``: values,
addresses only, overflow taint, loop events, argument events; :class:`~tilescope.ir.Need`), and
whether its events may stream before an attempt commits (``buffered = False``). It receives
launch/attempt/op/loop/argument/fault hooks and yields a :class:`Report`.

Reports are mergeable: a run split across processes or machines adds up to the report one process
would give (:meth:`Report.merge`, keyed by finding kind, site and argument), and they round-trip
through JSON (:meth:`Report.to_json`, :func:`Report.from_json`).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

from ..ir import ArgumentInfo, ComputeCount, Fault, LaunchInfo, LoopEvent, Need, OpKind, OpRecord

#: the counters of a finding's details that add up when findings merge
_COUNTS = ("lanes", "programs", "launches")
#: details that list where a finding was seen (sweep cells, tests): merged findings list them all
ORIGINS = ("cells", "tests")


@dataclass
class Finding:
    """One problem a client found, in the fields every client shares."""

    kind: str
    severity: str  # "error", "warning", "note"
    message: str
    kernel: str
    file: str
    line: int
    column: int
    program_ids: list[tuple[int, int, int]]
    details: dict = field(default_factory=dict)

    @property
    def key(self) -> tuple:
        """What findings are merged by: kind, site, tensor argument (and the other site of a pair)."""
        return (
            self.kind,
            self.file,
            self.line,
            self.column,
            self.details.get("argument"),
            self.details.get("other_site"),
        )

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        d = asdict(self)
        d["program_ids"] = [list(p) for p in self.program_ids]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Finding:
        """The finding of :meth:`to_dict`'s output."""
        fields = dict(d)
        fields["program_ids"] = [tuple(p) for p in d.get("program_ids", [])]
        return cls(**fields)


@dataclass
class Report:
    """What one client has to say about the launches it saw."""

    client: str
    findings: list[Finding] = field(default_factory=list)
    summary: dict = field(default_factory=dict)

    #: report classes by client name (subclasses register themselves with ``client_name``)
    types: ClassVar[dict[str, type[Report]]] = {}
    client_name: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.client_name:
            Report.types[cls.client_name] = cls

    @property
    def errors(self) -> list[Finding]:
        """Findings of severity ``error``."""
        return [f for f in self.findings if f.severity == "error"]

    def to_dict(self) -> dict:
        """JSON-ready dict (stable schema: client, summary, findings)."""
        return {
            "client": self.client,
            "summary": self.summary,
            "findings": [f.to_dict() for f in self.findings],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON (stable schema: client, summary, findings)."""
        return json.dumps(self.to_dict(), indent=indent, default=str)

    @staticmethod
    def from_json(text: str | dict) -> Report:
        """A report back from :meth:`to_json` (as the client's own report class when it is known)."""
        d = json.loads(text) if isinstance(text, str) else text
        cls = Report.types.get(d.get("client", ""), Report)
        return cls(
            d["client"], [Finding.from_dict(f) for f in d.get("findings", [])], dict(d.get("summary", {}))
        )

    def save(self, path: str | os.PathLike, format: str = "json") -> None:
        """Write the report to ``path`` (as JSON; subclasses know more formats)."""
        if format != "json":
            raise ValueError(f"a {self.client} report cannot be written as {format!r}")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.to_json())

    # ------------------------------------------------------------------ merging

    @staticmethod
    def merge(reports: list[Report]) -> Report:
        """One report of one client from several (other processes, machines, launchers).

        Findings with the same kind, site and argument become one; counts and program ids add up,
        the lists of where they were seen (:data:`ORIGINS`) join; the summary's numbers add up. The
        result does not depend on the order of ``reports``, and ``reports`` are not changed.
        """
        if not reports:
            raise ValueError("no reports to merge")
        names = {r.client for r in reports}
        if len(names) > 1:
            raise ValueError(f"cannot merge reports of different clients: {', '.join(sorted(names))}")
        cls = type(reports[0])
        merged: dict[tuple, Finding] = {}
        for report in reports:
            for finding in report.findings:
                have = merged.get(finding.key)
                merged[finding.key] = (
                    replace(finding, details=dict(finding.details))
                    if have is None
                    else cls.merge_findings(have, finding)
                )  # the inputs stay as they are
        summary: dict = {}
        for report in reports:
            for key, value in report.summary.items():
                summary[key] = _merge_value(summary.get(key), value)
        findings = sorted(
            merged.values(), key=lambda f: (f.file, f.line, f.column, f.kind, str(f.details.get("argument")))
        )
        if isinstance(summary.get("findings"), int):
            summary["findings"] = len(findings)  # a count of findings counts the merged ones
        return cls(reports[0].client, [cls.finish_merged(f) for f in findings], summary)

    @classmethod
    def merge_findings(cls, a: Finding, b: Finding) -> Finding:
        """One finding from two with the same key: ``first_*`` details from the one that comes first."""
        first, other = (a, b) if _first_order(a) <= _first_order(b) else (b, a)
        details = dict(first.details)
        for name in _COUNTS:
            if name in a.details or name in b.details:
                details[name] = int(a.details.get(name) or 0) + int(b.details.get(name) or 0)
        for name in ORIGINS:
            if name in a.details or name in b.details:
                details[name] = sorted({*a.details.get(name, ()), *b.details.get(name, ())})
        programs = sorted(set(map(tuple, a.program_ids)) | set(map(tuple, b.program_ids)))
        return Finding(first.kind, first.severity, first.message, first.kernel, first.file, first.line,
                       first.column, programs, details)  # fmt: skip

    @classmethod
    def finish_merged(cls, finding: Finding) -> Finding:
        """Hook for subclasses: rebuild what depends on the merged totals (a headline, a summary)."""
        return finding

    def __rich__(self) -> Any:
        from ..render import render_report

        return render_report(self)


def merge_by_client(reports: list[Report]) -> list[Report]:
    """One merged report per client name, in order of each client's first report."""
    groups: dict[str, list[Report]] = {}
    for report in reports:
        groups.setdefault(report.client, []).append(report)
    return [Report.merge(group) for group in groups.values()]


def merge_by_origin(origins: list[tuple[str | None, list[Report]]], key: str) -> list[Report]:
    """One merged report per client from the reports of named origins (``key`` is ``"cells"`` for a
    sweep's cells, ``"tests"`` for a test session's tests): each merged finding's ``details[key]``
    lists the origins whose reports had it, in the order of ``origins`` (then by name, for labels
    that came inside already merged reports). An origin named None adds reports as they are.
    The reports given are not changed.
    """
    labelled = []
    for label, reports in origins:
        for report in reports:
            findings = (
                report.findings
                if label is None
                else [
                    replace(f, details={**f.details, key: sorted({*f.details.get(key, ()), label})})
                    for f in report.findings
                ]
            )
            labelled.append(replace(report, findings=findings))
    merged = merge_by_client(labelled)
    order = {label: i for i, (label, _) in enumerate(origins) if label is not None}
    for report in merged:
        for finding in report.findings:
            if key in finding.details:
                finding.details[key] = sorted(
                    finding.details[key], key=lambda o: (order.get(o, len(order)), o)
                )
    return merged


def _first_order(f: Finding) -> tuple:
    """Which of two findings of one key comes first: lowest first program (z, y, x), then its lane,
    element and loop iteration (the order a sanitizer uses within one process)."""
    d = f.details
    program = tuple(d.get("first_program") or (0, 0, 0))
    element = d.get("first_element")
    return (
        tuple(reversed(program)),
        tuple(d.get("first_lane") or ()),
        tuple(element) if isinstance(element, (list, tuple)) else (),
        d.get("iteration") if d.get("iteration") is not None else -1,
        f.message,
    )


def _merge_value(have: Any, new: Any) -> Any:
    if have is None:
        return new
    if isinstance(have, bool) or isinstance(new, bool):
        return have or new
    if isinstance(have, (int, float)) and isinstance(new, (int, float)):
        return have + new
    if isinstance(have, list) and isinstance(new, list):
        return have + [v for v in new if v not in have]
    return have


def check_flags(client: str, **flags: Any) -> None:
    """Raise ValueError naming the first of a client's bool options that is not a bool."""
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise ValueError(f"{client} option {name} must be True or False; got {value!r}")


class Client:
    """Base class of analysis clients; override the hooks you need.

    ``report_path``: when set, the session writes this client's report there (merged with every
    other client writing to the same path) after each launch, in ``report_format``.
    """

    name: str = "client"
    kinds: frozenset[OpKind] = frozenset()
    fault_kinds: frozenset[str] = frozenset()
    needs: frozenset[Need] = frozenset()
    buffered: bool = True
    options: tuple[str, ...] = ()
    report_path: str | os.PathLike | None = None
    report_format: str = "json"
    #: the GPU (a ``tilescope.gpu.specs.SPECS`` name) whose offline compile ``Need.COMPILED_RESOURCES``
    #: serves; None: the modelled GPU's
    compile_gpu: str | None = None

    @classmethod
    def needs_with(cls, **options: Any) -> frozenset[Need]:
        """What a client made with ``options`` needs (override where the needs depend on options)."""
        return frozenset(cls.needs)

    def on_launch_start(self, launch: LaunchInfo) -> None:
        """A launch begins (its arguments are in ``launch.arguments``)."""

    def on_launch_end(self, launch: LaunchInfo) -> None:
        """A launch ended."""

    def on_attempt_begin(self, program_ids) -> None:
        """Streaming clients only: a batch of programs starts."""

    def on_attempt_commit(self) -> None:
        """Streaming clients only: the batch's events are final."""

    def on_attempt_abort(self) -> None:
        """Streaming clients only: drop the batch's events."""

    def on_op(self, record: OpRecord) -> None:
        """One op executed by a batch of programs."""

    def on_loop(self, event: LoopEvent) -> None:
        """A loop was entered, iterated or left (clients that need ``Need.LOOP_EVENTS``)."""

    def on_argument(self, argument: ArgumentInfo) -> None:
        """A tensor was registered mid-launch (clients that need ``Need.ARGUMENT_EVENTS``)."""

    def on_fault(self, fault: Fault) -> None:
        """A fault of a kind in ``fault_kinds``."""

    def on_memory(self, argument: ArgumentInfo, elements: Any) -> None:
        """A tensor argument's elements (a NumPy copy) as the launch ends (for ``Need.MEMORY``)."""

    def on_compute(self, count: ComputeCount) -> None:
        """How many programs ran one compute op in an attempt that committed (for
        ``Need.COMPUTE_COUNTS``: the FLOPs of every compute op without a record per op)."""

    def report(self) -> Report:
        """The client's report so far."""
        return Report(self.name)
