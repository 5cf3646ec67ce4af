"""Client findings as overlays on a launch: which lines, which elements, which programs.

Reports live next to the trace in ``DIR/reports/*.json`` (``Report.to_json()`` documents, as
``tilescope run`` writes them, or :func:`write_reports`). Any client's findings are drawn through
one generic overlay, so the race detector and the profiler need nothing of their own here:

- a finding belongs to a launch when its ``kernel`` matches and its ``file:line`` (or a
  ``details["sites"]`` entry's) is a site of the launch;
- it marks elements named by ``details["argument"]`` + ``details["first_element"]`` (the
  sanitizer), each entry of ``details["sites"]`` with ``argument`` and ``element`` (both sides of a
  race) and each entry of ``details["elements"]`` (``argument``, ``element``, optional
  ``program``);
- an out-of-bounds finding also lights up every lane of its site that fell outside the tensor,
  computed from the trace's own addresses;
- its lines (the finding's, the sites', the notes') get a marker and a count in the source view.

When no sanitizer report is present, the viewer derives out-of-bounds findings itself from the
trace's addresses and each argument's address, shape and strides (client ``viewer``).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from .aggregate import LaunchMaps
from .geometry import Geometry
from .rows import Rows

REPORTS = "reports"
_MAX_PROGRAMS = 64
_DETAIL_KEYS = (
    "argument",
    "first_element",
    "element_text",
    "relation",
    "lanes",
    "programs",
    "iteration",
    "first_program",
    "program_summary",
    "tensor",
    "loops",
    "launches",
)


def write_reports(trace_dir: str | os.PathLike, reports: list[Any]) -> list[Path]:
    """Store client reports (objects with ``client`` and ``to_json()``) beside a trace for the viewer.

    One file per report, ``reports/<client>.json``; an existing file is never overwritten (the next
    is ``<client>-2.json``), so several runs appending to one trace each keep their findings.
    """
    folder = Path(trace_dir) / REPORTS
    written: list[Path] = []
    if reports:
        folder.mkdir(parents=True, exist_ok=True)
    for report in reports:
        name = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(report.client)) or "client"
        text = report.to_json()
        for n in range(1, 10_000):
            path = folder / (f"{name}.json" if n == 1 else f"{name}-{n}.json")
            try:
                with open(path, "x", encoding="utf-8") as fh:
                    fh.write(text)
                written.append(path)
                break
            except FileExistsError:
                continue
    return written


def read_reports(trace_dir: str | os.PathLike) -> tuple[list[dict], list[str]]:
    """The reports stored beside a trace, and a line per report file that could not be read."""
    reports, problems = [], []
    folder = Path(trace_dir) / REPORTS
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            problems.append(f"{path}: not a readable report ({exc})")
            continue
        found = data.get("reports", [data]) if isinstance(data, dict) else []
        for report in found:
            if isinstance(report, dict) and isinstance(report.get("findings", []), list):
                reports.append(
                    {
                        "client": str(report.get("client", path.stem)),
                        "summary": report.get("summary", {}),
                        "findings": report.get("findings", []),
                        "file": path.name,
                    }
                )
            else:
                problems.append(f"{path}: not a tilescope report")
    return reports, problems


def all_findings(reports: list[dict]) -> list[dict]:
    """Every finding of every report, each with its ``client`` and a stable ``id``."""
    out = []
    for report in reports:
        for finding in report["findings"]:
            if isinstance(finding, dict):
                out.append({**finding, "client": report["client"], "id": len(out)})
    return out


def _same_file(a: str, b: str) -> bool:
    if not a or not b:
        return False
    if a == b:
        return True
    return os.path.basename(a) == os.path.basename(b) and (not os.path.isabs(a) or not os.path.isabs(b))


def _locations(finding: dict) -> list[tuple[str, int]]:
    places = [(str(finding.get("file", "")), int(finding.get("line") or 0))]
    details = finding.get("details") or {}
    for side in details.get("sites") or []:
        if isinstance(side, dict):
            places.append((str(side.get("file", finding.get("file", ""))), int(side.get("line") or 0)))
    return places


def matching_sites(finding: dict, launch: dict, sites: list[dict]) -> list[int] | None:
    """Site ids of ``launch`` the finding points at; None when it is not about this launch."""
    kernel = finding.get("kernel")
    if kernel and kernel != launch.get("kernel"):
        return None
    places = [(f, n) for f, n in _locations(finding) if n > 0]
    if not places:
        return [] if kernel else None
    hit = [
        int(s["site"])
        for s in sites
        if any(n == int(s["line"]) and _same_file(f, str(s["file"])) for f, n in places)
    ]
    return hit or None


def overlays(
    findings: list[dict],
    launch: dict,
    sites: list[dict],
    maps: LaunchMaps,
    grid: tuple[int, int, int],
) -> list[dict]:
    """The findings that belong to this launch, as overlays the page draws (module docstring)."""
    by_name = {t.name: k for k, t in enumerate(maps.tensors)}
    outside_sites = _outside_by_site(maps)
    out = []
    for finding in findings:
        hit = matching_sites(finding, launch, sites)
        if hit is None:
            continue
        details = finding.get("details") or {}
        is_bounds = str(finding.get("kind", "")).startswith("out-of-bounds")
        argument = details.get("argument")
        if (
            is_bounds
            and argument in by_name
            and outside_sites
            and not any((by_name[argument], s) in outside_sites for s in hit)
        ):
            continue  # the same kernel's other launch went out of bounds, not this one
        out.append(_overlay(finding, hit, maps, by_name, grid, is_bounds))
    return out


def _overlay(
    finding: dict,
    hit: list[int],
    maps: LaunchMaps,
    by_name: dict[str, int],
    grid: tuple[int, int, int],
    is_bounds: bool,
) -> dict:
    details = finding.get("details") or {}
    marks = []
    sides = [s for s in details.get("sites") or [] if isinstance(s, dict) and s.get("element") is not None]
    if not sides and details.get("argument") is not None and details.get("first_element") is not None:
        marks.append(  # a race's sides name its first element themselves, each with its own program
            _mark(
                maps,
                by_name,
                details["argument"],
                details["first_element"],
                details.get("first_program"),
                grid,
                details.get("element_text") or "first bad element",
            )
        )
    for i, side in enumerate(sides):
        if side.get("argument") is not None:
            label = side.get("access") or f"side {i + 1}"
            if side.get("program_text"):
                label += f" by program {side['program_text']}"
            marks.append(
                _mark(
                    maps,
                    by_name,
                    side["argument"],
                    side["element"],
                    side.get("program"),
                    grid,
                    f"{label}, line {side.get('line', '?')}",
                )
            )
    for item in details.get("elements") or []:
        if isinstance(item, dict) and item.get("argument") is not None and item.get("element") is not None:
            marks.append(
                _mark(
                    maps,
                    by_name,
                    item["argument"],
                    item["element"],
                    item.get("program"),
                    grid,
                    str(item.get("label", "")),
                )
            )
    lines = sorted(
        {
            int(finding.get("line") or 0),
            *(int(s.get("line") or 0) for s in details.get("sites") or [] if isinstance(s, dict)),
        }
        - {0}
    )
    notes = [
        {"label": str(n.get("label", "")), "text": str(n.get("text", "")), "line": int(n.get("line") or 0)}
        for n in details.get("notes") or []
        if isinstance(n, dict)
    ]
    programs = [list(p) for p in (finding.get("program_ids") or [])[:_MAX_PROGRAMS]]
    bad = None
    if is_bounds and details.get("argument") in by_name:
        bad = {"tensor": by_name[details["argument"]], "sites": hit}
    return {
        "id": finding.get("id", 0),
        "client": finding.get("client", ""),
        "kind": str(finding.get("kind", "")),
        "severity": str(finding.get("severity", "note")),
        "message": str(finding.get("message", "")),
        "file": str(finding.get("file", "")),
        "line": int(finding.get("line") or 0),
        "column": int(finding.get("column") or 0),
        "sites": hit,
        "lines": lines,
        "marks": [m for m in marks if m],
        "programs": programs,
        "program_count": len(finding.get("program_ids") or []),
        "bad": bad,
        "notes": notes,
        "details": {k: details[k] for k in _DETAIL_KEYS if k in details},
    }


def _mark(
    maps: LaunchMaps,
    by_name: dict[str, int],
    argument: str,
    element: Any,
    program: Any,
    grid: tuple[int, int, int],
    label: str,
) -> dict | None:
    if argument not in by_name:
        return None
    k = by_name[argument]
    g = maps.tensors[k].geometry
    coords = [int(e) for e in (element if isinstance(element, list | tuple) else [element])]
    row, col = g.coords_rc(coords)
    cell = int(g.cell_of(np.array([row]), np.array([col]))[0])
    linear = None
    if isinstance(program, list | tuple) and len(program) == 3:
        linear = int(program[0]) + grid[0] * (int(program[1]) + grid[1] * int(program[2]))
    elif isinstance(program, int):
        linear = program
    return {
        "tensor": k,
        "argument": argument,
        "element": coords,
        "row": row,
        "col": col,
        "cell": cell,
        "program": linear,
        "label": label,
    }


def _outside_by_site(maps: LaunchMaps) -> set[tuple[int, int]]:
    return {(k, int(s)) for k, t in enumerate(maps.tensors) for s in np.unique(t.outside_site)}


def derived_findings(
    launch: dict, sites: list[dict], maps: LaunchMaps, rows: Rows, grid: tuple[int, int, int]
) -> list[dict]:
    """Out-of-bounds findings computed from the trace itself (one per site and tensor), as report findings."""
    by_site = {int(s["site"]): s for s in sites}
    out = []
    for t in maps.tensors:
        if not len(t.outside_site):
            continue
        code = rows.arguments.index(t.name) if t.name in rows.arguments else -2
        mine = (rows.argument == code) & (maps.row_outside > 0)
        lanes = Counter()
        programs: dict[int, set[int]] = {}
        for site, count, program in zip(
            rows.site[mine], maps.row_outside[mine], rows.program[mine], strict=True
        ):
            lanes[int(site)] += int(count)
            programs.setdefault(int(site), set()).add(int(program))
        kinds = {int(s): rows.kinds[int(k)] for s, k in zip(rows.site[mine], rows.kind[mine], strict=True)}
        writes = {int(s) for s in rows.site[mine & rows.writes]}
        for site, count in sorted(lanes.items()):
            first = np.flatnonzero(t.outside_site == site)
            cell = int(t.outside_cell[first[0]])
            program = int(t.outside_program[first[0]])
            element = _cell_element(t.geometry, cell)
            where = by_site.get(site, {})
            kind = "atomic" if kinds[site] == "atomic" else "store" if site in writes else "load"
            progs = sorted(programs[site])
            shape = ", ".join(map(str, t.geometry.shape))
            out.append(
                {
                    "kind": f"out-of-bounds {kind}",
                    "severity": "error",
                    "message": f"{count} lane{'s' if count != 1 else ''} in {len(progs)} program"
                    f"{'s' if len(progs) != 1 else ''} fell outside `{t.name}` ({t.dtype}[{shape}])",
                    "kernel": launch.get("kernel", ""),
                    "file": str(where.get("file", "")),
                    "line": int(where.get("line") or 0),
                    "column": int(where.get("column") or 0),
                    "program_ids": [list(_pid(p, grid)) for p in progs[:_MAX_PROGRAMS]],
                    "details": {
                        "argument": t.name,
                        "first_element": element,
                        "first_program": list(_pid(program, grid)),
                        "lanes": count,
                        "programs": len(progs),
                        "element_text": f"{t.name}[{', '.join(map(str, element))}]",
                    },
                }
            )
    return out


def _pid(linear: int, grid: tuple[int, int, int]) -> tuple[int, int, int]:
    x = linear % grid[0]
    y = (linear // grid[0]) % grid[1]
    return x, y, linear // (grid[0] * grid[1])


def _cell_element(g: Geometry, cell: int) -> list[int]:
    """Element coordinates of the first element of a cell (exact when a cell is one element)."""
    cr, cc = divmod(cell, g.cell_cols)
    row = cr * g.factor_rows - g.before_rows
    col = cc * g.factor_cols - g.before_cols
    if not g.shape:
        return [row]
    if len(g.shape) == 1:
        return [row * g.wrap + col]
    coords = []
    for size in reversed(g.shape[1:-1]):  # the leading dimension absorbs any overflow
        row, rest = divmod(row, max(1, size))
        coords.append(rest)
    return [row, *reversed(coords), col]
