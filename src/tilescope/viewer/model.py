"""A trace opened for viewing: the launch list, and per launch the container the page draws from.

:class:`TraceModel` reads the trace once (``tilescope.load_trace``, which checks the manifest and
every part file) and builds a launch's container on first request: element maps and footprints
(:mod:`.aggregate`), the op rows of every program, sites with per-line counts, the kernel's source
and the finding overlays. The server and the HTML writer both use it, so the two pages show the
same thing; the HTML file just asks for smaller maps and fewer op rows.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..clients.tracer import TraceError
from ..clients.tracer.layout import read_json
from ..clients.tracer.schema import LAUNCHES, launch_stem
from .aggregate import CLASSES, FLAG_NAMES, LaunchMaps, aggregate
from .findings import all_findings, derived_findings, matching_sites, overlays, read_reports
from .geometry import wrap_width
from .pack import compress, pack
from .rows import Rows, read_rows, row_values
from .source import kernel_source

_KEEP_CONTAINERS = 4  # launches whose rows, maps and containers stay in memory
# gzip level of what the server sends over loopback: on a launch of 4,096 programs level 1 is 2
# to 3 times faster than 6 (which took a third of the first visit's CPU time once the aggregation
# was cut) for 2 to 2.6 times the bytes, which loopback does not notice; the HTML file, whose
# size matters, keeps the default
_SERVED_LEVEL = 1


@dataclass(frozen=True)
class Limits:
    """How much of a launch goes into its container."""

    max_cells: int = 1 << 22  # cells per tensor map (more: downsampled)
    max_op_rows: int | None = None  # op rows of all programs together (more: a sample of programs)
    tile_cells: int = 128 * 128  # cells of one values heatmap (more: strided)
    value_programs: int = 0  # programs whose values are inlined (0: served on request)


class TraceModel:
    """A trace directory opened for the viewer (raises ``TraceError`` naming the path when unreadable)."""

    def __init__(self, path: str | os.PathLike, reports: list | None = None):
        from ..clients.tracer.reader import load_trace

        self.path = Path(path)
        self.trace = load_trace(self.path)
        self.launch_files: dict[int, dict] = {}
        for number in self.trace.launches["launch"]:
            self.launch_files[int(number)] = read_json(
                self.path / LAUNCHES / f"{launch_stem(int(number))}.json"
            )
        stored, self.problems = read_reports(self.path)
        extra = [
            {
                "client": r.client,
                "summary": r.summary,
                "findings": [f.to_dict() for f in r.findings],
                "file": "(in memory)",
            }
            for r in reports or []
        ]
        self.reports = stored + extra
        self.findings = all_findings(self.reports)
        self.has_sanitizer = any(r["client"] == "sanitizer" for r in self.reports)
        # the most recently used launches' rows, maps and containers (memory stays bounded)
        self._rows: OrderedDict[int, Rows] = OrderedDict()
        self._maps: OrderedDict[tuple[int, int], LaunchMaps] = OrderedDict()
        self._bytes: OrderedDict[tuple[int, Limits], bytes] = OrderedDict()
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()

    # -- the launch list ------------------------------------------------------------------------

    def index(self) -> dict:
        """Every launch (kernel, grid, arguments, findings count) and the reports, as plain data."""
        launches = []
        for number, data in sorted(self.launch_files.items()):
            sites = data.get("sites", [])
            count = sum(1 for f in self.findings if matching_sites(f, data, sites) is not None)
            grid = [int(g) for g in data.get("grid", [1, 1, 1])]
            launches.append(
                {
                    "launch": number,
                    "kernel": data.get("kernel", ""),
                    "file": data.get("file", ""),
                    "line": data.get("line", 0),
                    "grid": grid,
                    "programs": int(np.prod(grid)),
                    "status": data.get("status", ""),
                    "ops": data.get("ops", 0),
                    "rows": data.get("rows", 0),
                    "values": data.get("values", "off"),
                    "constexprs": data.get("constexprs", {}),
                    "arguments": [_argument(a) for a in data.get("arguments", [])],
                    "findings": count,
                    "started": data.get("started", ""),
                }
            )
        return {
            "trace": self.path.name or str(self.path),
            "version": self.trace.version,
            "launches": launches,
            "reports": [
                {
                    "client": r["client"],
                    "file": r["file"],
                    "findings": len(r["findings"]),
                    "summary": r["summary"],
                }
                for r in self.reports
            ],
            "problems": self.problems,
            "classes": list(CLASSES),
            "flags": FLAG_NAMES,
        }

    # -- one launch -------------------------------------------------------------------------------

    def launch_data(self, number: int) -> dict:
        """The launch file of launch ``number`` (KeyError when the trace has no such launch)."""
        return self.launch_files[number]

    def rows(self, number: int) -> Rows:
        """The op rows of a launch (read once)."""
        with self._lock:
            if number not in self._rows:
                data = self.launch_data(number)
                self._rows[number] = read_rows(self.trace.parts.get(number, []), _grid(data))
                _trim(self._rows)
            self._rows.move_to_end(number)
            return self._rows[number]

    def maps(self, number: int, max_cells: int) -> LaunchMaps:
        """The element maps of a launch at a resolution (built once per resolution)."""
        rows = self.rows(number)
        with self._lock:
            key = (number, max_cells)
            if key not in self._maps:
                data = self.launch_data(number)
                self._maps[key] = aggregate(
                    rows, data.get("arguments", []), int(np.prod(_grid(data))), max_cells=max_cells
                )
                _trim(self._maps)
            self._maps.move_to_end(key)
            return self._maps[key]

    def launch_container(self, number: int, limits: Limits = Limits()) -> tuple[dict, dict[str, np.ndarray]]:
        """Meta and arrays of the page's container for one launch."""
        data = self.launch_data(number)
        grid = _grid(data)
        programs = int(np.prod(grid))
        rows = self.rows(number)
        maps = self.maps(number, limits.max_cells)
        sites = data.get("sites", [])
        findings = list(self.findings)
        if not self.has_sanitizer:
            derived = derived_findings(data, sites, maps, rows, grid)
            findings += [{**f, "client": "viewer", "id": len(findings) + i} for i, f in enumerate(derived)]
        drawn = overlays(findings, data, sites, maps, grid)
        arrays: dict[str, np.ndarray] = {}
        tensors = []
        shares = _shared_memory(data.get("arguments", []))
        for k, t in enumerate(maps.tensors):
            tensors.append(
                {
                    "index": t.index,
                    "name": t.name,
                    "dtype": t.dtype,
                    "shares": shares.get(t.name, []),
                    "geometry": t.geometry.to_json(),
                    "stats": t.stats,
                    "sites": [int(x) for x in t.sites],
                    "site_runs": t.site_runs_group is not None,
                }
            )
            if t.site_runs_group is not None:
                arrays[f"t{k}.site_runs_group"] = t.site_runs_group
                arrays[f"t{k}.site_runs_start"] = t.site_runs_start
                arrays[f"t{k}.site_runs_length"] = t.site_runs_length
            for layer in (
                "owner",
                "writers",
                "readers",
                "flags",
                "runs_group",
                "runs_start",
                "runs_length",
                "outside_site",
                "outside_cell",
                "outside_program",
            ):
                arrays[f"t{k}.{layer}"] = getattr(t, layer)
        wanted = _op_programs(rows, programs, limits.max_op_rows, drawn)
        ops_meta = _ops_arrays(rows, maps, programs, wanted, arrays)
        site_stats = _site_stats(rows, maps, sites)
        source = kernel_source(
            str(data.get("file", "")), int(data.get("line") or 0), sites, self.path.resolve().parent
        )
        meta = {
            "launch": number,
            "kernel": data.get("kernel", ""),
            "file": data.get("file", ""),
            "line": data.get("line", 0),
            "grid": list(grid),
            "programs": programs,
            "status": data.get("status", ""),
            "values": data.get("values", "off"),
            "constexprs": data.get("constexprs", {}),
            "arguments": [_argument(a) for a in data.get("arguments", [])],
            "tensors": tensors,
            "sites": site_stats,
            "lines": _line_stats(site_stats, drawn, source["file"]),
            "source": source,
            "findings": drawn,
            "ops": ops_meta,
            "loops": _loop_names(sites),
            "limits": {
                "max_cells": limits.max_cells,
                "max_op_rows": limits.max_op_rows,
                "tile_cells": limits.tile_cells,
            },
        }
        if limits.value_programs and data.get("values", "off") != "off":
            meta["inline_values"] = self._inline_values(number, rows, wanted, limits, drawn)
        return meta, arrays

    def launch_bytes(self, number: int, limits: Limits = Limits()) -> bytes:
        """The compressed container of one launch (built once, the last few kept)."""
        key = (number, limits)
        with self._build_lock:
            if key not in self._bytes:
                meta, arrays = self.launch_container(number, limits)
                self._bytes[key] = compress(pack(meta, arrays), _SERVED_LEVEL)
                _trim(self._bytes)
            self._bytes.move_to_end(key)
            return self._bytes[key]

    def warm(self, limits: Limits = Limits(), launches: int = 4) -> None:
        """Build the first ``launches`` containers ahead of the page's requests (errors wait for them)."""
        for number in sorted(self.launch_files)[:launches]:
            try:
                self.launch_bytes(number, limits)
            except TraceError:
                return

    def values_container(self, number: int, program: int, tile_cells: int = 128 * 128) -> tuple[dict, dict]:
        """Meta and arrays of one program's recorded values (one heatmap per op row that has them)."""
        rows = self.rows(number)
        mine = np.flatnonzero(rows.program == program)
        mine = mine[np.argsort(rows.op[mine], kind="stable")]
        values = row_values(rows, mine) if len(mine) else []
        tiles, arrays = [], {}
        for i, (row, v) in enumerate(zip(mine, values, strict=True)):
            if v is None:
                continue
            tile, step, shape = _tile(v, rows.shape[row], self._mask(rows, row, len(v)), tile_cells)
            arrays[f"v{len(tiles)}"] = tile
            finite = tile[np.isfinite(tile)]
            tiles.append(
                {
                    "position": i,
                    "op": int(rows.op[row]),
                    "shape": shape,
                    "step": step,
                    "tile": list(tile.shape),
                    "min": float(finite.min()) if len(finite) else 0.0,
                    "max": float(finite.max()) if len(finite) else 0.0,
                }
            )
        return {"launch": number, "program": program, "tiles": tiles}, arrays

    def values_bytes(self, number: int, program: int) -> bytes:
        """The compressed values container of one program."""
        meta, arrays = self.values_container(number, program)
        return compress(pack(meta, arrays), _SERVED_LEVEL)

    def _mask(self, rows: Rows, row: int, lanes: int) -> np.ndarray | None:
        if "mask" not in rows.table.column_names:
            return None
        value = rows.table.column("mask")[int(row)]
        if not value.is_valid:
            return None
        mask = np.asarray(value.values.to_numpy(zero_copy_only=False), dtype=bool)
        return mask if len(mask) == lanes else None

    def _inline_values(
        self, number: int, rows: Rows, wanted: np.ndarray | None, limits: Limits, drawn: list[dict]
    ) -> dict:
        from .pack import to_base64

        candidates = []
        for f in drawn:
            candidates += [m["program"] for m in f["marks"] if m.get("program") is not None]
        pool = np.unique(rows.program) if wanted is None else wanted
        if len(pool):
            picks = np.unique(np.round(np.linspace(0, len(pool) - 1, min(len(pool), limits.value_programs))))
            candidates += [int(pool[int(i)]) for i in picks]
        out: dict[str, str] = {}
        for program in dict.fromkeys(candidates):
            if len(out) >= limits.value_programs:
                break
            meta, arrays = self.values_container(number, int(program), limits.tile_cells)
            if meta["tiles"]:
                out[str(program)] = to_base64(compress(pack(meta, arrays)))
        return out


def _trim(cache: OrderedDict) -> None:
    while len(cache) > _KEEP_CONTAINERS:
        cache.popitem(last=False)


def _grid(data: dict) -> tuple[int, int, int]:
    grid = [int(g) for g in data.get("grid", [1, 1, 1])] + [1, 1, 1]
    return grid[0], grid[1], grid[2]


def _argument(a: dict) -> dict:
    return {
        "index": a.get("index"),
        "name": a.get("name"),
        "kind": a.get("kind"),
        "dtype": a.get("dtype", ""),
        "shape": a.get("shape", []),
        "strides": a.get("strides", []),
        "value": a.get("value"),
    }


def _op_programs(rows: Rows, programs: int, max_rows: int | None, drawn: list[dict]) -> np.ndarray | None:
    """Programs whose op rows go into the container: all (None) or a sample of whole programs."""
    if max_rows is None or len(rows) <= max_rows:
        return None
    per_program = max(1, len(rows) // max(1, len(np.unique(rows.program))))
    budget = max(1, max_rows // per_program)
    chosen = [m["program"] for f in drawn for m in f["marks"] if m.get("program") is not None]
    present = np.unique(rows.program)
    picks = np.round(np.linspace(0, len(present) - 1, min(len(present), budget))).astype(np.int64)
    return np.unique(np.r_[np.array(chosen, dtype=np.int64), present[picks]])


def _ops_arrays(
    rows: Rows, maps: LaunchMaps, programs: int, wanted: np.ndarray | None, arrays: dict[str, np.ndarray]
) -> dict:
    order = np.lexsort((rows.op, rows.program))
    if wanted is not None:
        order = order[np.isin(rows.program[order], wanted)]
    offsets = np.searchsorted(rows.program[order], np.arange(programs + 1)).astype(np.int32)
    arrays["ops.offsets"] = offsets
    arrays["ops.op"] = rows.op[order].astype(np.int32)
    arrays["ops.kind"] = rows.kind[order].astype(np.int16)
    arrays["ops.site"] = rows.site[order].astype(np.int32)
    arrays["ops.argument"] = rows.argument[order].astype(np.int16)
    arrays["ops.dtype"] = rows.dtype[order].astype(np.int16)
    arrays["ops.lanes"] = rows.lanes[order].astype(np.int32)
    arrays["ops.active"] = rows.active[order].astype(np.int32)
    arrays["ops.bytes"] = rows.nbytes[order].astype(np.float64)
    arrays["ops.outside"] = maps.row_outside[order].astype(np.int32)
    arrays["ops.shape"] = rows.shape[order].astype(np.int32).reshape(-1)
    arrays["ops.loop_sites"] = rows.loop_sites[order].reshape(-1)
    arrays["ops.loop_iterations"] = rows.loop_iterations[order].reshape(-1)
    return {
        "rows": int(len(order)),
        "total_rows": int(len(rows)),
        "complete": wanted is None,
        "programs_included": int(len(np.unique(rows.program[order]))) if len(order) else 0,
        "kinds": rows.kinds,
        "arguments": rows.arguments,
        "dtypes": rows.dtypes,
        "rank": int(rows.shape.shape[1]),
        "loop_depth": int(rows.loop_sites.shape[1]),
    }


def _site_stats(rows: Rows, maps: LaunchMaps, sites: list[dict]) -> list[dict]:
    out = []
    for s in sites:
        site = int(s.get("site", -1))
        mine = rows.site == site
        out.append(
            {
                **{
                    k: s.get(k)
                    for k in (
                        "site",
                        "file",
                        "line",
                        "column",
                        "end_line",
                        "end_column",
                        "function",
                        "source",
                        "expression",
                    )
                },
                "rows": int(mine.sum()),
                "lanes": int(rows.active[mine].sum()),
                "bytes": int(rows.nbytes[mine].sum()),
                "outside": int(maps.row_outside[mine].sum()),
                "kinds": sorted({rows.kinds[int(k)] for k in np.unique(rows.kind[mine]) if k >= 0}),
            }
        )
    return out


def _line_stats(sites: list[dict], drawn: list[dict], file: str) -> dict[str, dict]:
    lines: dict[int, dict] = {}
    for s in sites:
        if s.get("file") != file or not s["rows"]:
            continue
        entry = lines.setdefault(
            int(s["line"]), {"rows": 0, "lanes": 0, "bytes": 0, "outside": 0, "findings": 0}
        )
        for key in ("rows", "lanes", "bytes", "outside"):
            entry[key] += s[key]
    for f in drawn:
        for line in f["lines"]:
            entry = lines.setdefault(line, {"rows": 0, "lanes": 0, "bytes": 0, "outside": 0, "findings": 0})
            entry["findings"] += 1
    return {str(k): v for k, v in sorted(lines.items())}


def _loop_names(sites: list[dict]) -> dict[str, str]:
    import re

    names = {}
    for s in sites:
        match = re.search(r"\bfor\s+(\w+)\s+in\b", str(s.get("source", "")))
        if match:
            names[str(s["site"])] = match.group(1)
    return names


def _tile(
    values: np.ndarray, shape_row: np.ndarray, mask: np.ndarray | None, cells: int
) -> tuple[np.ndarray, int, list[int]]:
    """A values heatmap: 2-D float32, NaN where a lane was disabled, strided down to at most ``cells``."""
    shape = [int(d) for d in shape_row if d >= 0]
    v = values.astype(np.float32)
    if mask is not None:
        v = np.where(mask, v, np.float32(np.nan))
    if len(shape) >= 2:
        grid = v.reshape(-1, shape[-1])
    elif len(v) > 1:
        width = wrap_width(len(v))
        grid = np.full(-(-len(v) // width) * width, np.nan, dtype=np.float32)
        grid[: len(v)] = v
        grid = grid.reshape(-1, width)
    else:
        grid = v.reshape(1, -1)
    step = 1
    while (grid.shape[0] // step) * (grid.shape[1] // step) > cells:
        step *= 2
    return np.ascontiguousarray(grid[::step, ::step]), step, shape


def _shared_memory(arguments: list[dict]) -> dict[str, list[str]]:
    """Per tensor argument, the other tensor arguments whose bytes overlap its own (an in-place
    call's ``x`` and ``out``, a view of another argument), by name."""
    spans = [
        (str(a["name"]), int(a.get("address") or 0), int(a.get("address") or 0) + int(a.get("nbytes") or 0))
        for a in arguments
        if a.get("kind") in ("tensor", "descriptor") and int(a.get("nbytes") or 0) > 0
    ]
    return {
        name: [other for other, olo, ohi in spans if other != name and olo < hi and lo < ohi]
        for name, lo, hi in spans
    }
