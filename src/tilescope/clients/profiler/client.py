"""The ``profiler`` client: where a kernel wastes memory traffic, masks and registers, per source line.

It reads only the op stream: memory records give the traffic of every site (how a warp would issue
the lanes, in 32-byte sectors), the masks and the sectors each program touches; the engine's compute
counts (``Need.COMPUTE_COUNTS``: one per distinct compute op of a committed attempt, not a record
per op) give the FLOPs. It needs addresses and masks only, so alone it lets the engine skip the arithmetic
that only feeds values. At the end of each launch the launch becomes one entry of the report
(sites sorted by wasted bytes, reuse and wave footprint, roofline, compiled resources when the
frontend served them) and its actionable parts become findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...gpu.specs import DEFAULT, ROOFS, SPECS, GPUSpec, gpu_spec
from ...ir import ArgumentInfo, ComputeCount, LaunchInfo, Need, OpKind, OpRecord, Site, ViewInfo
from ..base import Client, Finding
from . import coalescing, roofline
from .findings import launch_findings
from .masks import MaskState
from .places import Places
from .report import SCHEMA, ProfilerReport
from .resources import occupancy
from .reuse import Sectors

#: Triton's default warps per program when the launch names none
DEFAULT_WARPS = 4


@dataclass
class _Site:
    """What the records of one (site, kind, tensor) showed in one launch."""

    site: Site | None
    kind: str
    argument: str | None
    dtype: str
    itemsize: int
    traffic: coalescing.Traffic = field(default_factory=coalescing.Traffic)
    pending: coalescing.Pending = field(default_factory=coalescing.Pending)  #: requests not in traffic yet
    records: int = 0
    pattern: str = "broadcast"
    stride: int = 0
    vector: int = 0
    achievable: int = 0
    fast_axis: int = 0
    shape: tuple[int, ...] = ()
    mask: MaskState = field(default_factory=MaskState)
    issue: coalescing.Issue | None = None
    places: Places = field(default_factory=Places)

    def add(self, record: OpRecord, issue: coalescing.Issue, traffic: coalescing.Traffic) -> None:
        """Take one record of the site, as a warp issues it, into account."""
        self.records += 1
        self.traffic.add(traffic)
        if coalescing.PATTERNS.index(issue.pattern) >= coalescing.PATTERNS.index(self.pattern):
            self.pattern, self.stride = issue.pattern, issue.stride_bytes
        self.vector = min(self.vector or issue.vector, issue.vector)
        self.achievable = min(self.achievable or issue.achievable, issue.achievable)
        self.fast_axis, self.shape, self.issue = issue.fast_axis, record.shape, issue
        self.mask.add(record)

    def entry(self, launch: LaunchInfo) -> dict:
        """The site's JSON entry (schema in ``docs/profiler.md``)."""
        self.traffic.add(self.pending.total())
        self.pending = coalescing.Pending()
        t = self.traffic
        site = self.site
        mask = self.mask
        return {
            "file": site.file if site else "",
            "line": site.line if site else 0,
            "column": site.column if site else 0,
            "source": site.source.strip() if site else "",
            "kind": self.kind,
            "argument": self.argument,
            "dtype": self.dtype,
            "itemsize": self.itemsize,
            "shape": list(self.shape),
            "records": self.records,
            "lanes": t.lanes,
            "active_lanes": t.active,
            "mask_utilisation": _ratio(t.active, t.lanes),
            "requests": t.requests,
            "sectors": t.sectors,
            "lines": t.lines,
            "sectors_per_request": _ratio(t.sectors, t.requests, 3),
            "requested_bytes": t.active * self.itemsize,
            "useful_bytes": t.useful_bytes,
            "moved_bytes": t.moved_bytes,
            "efficiency": _ratio(t.useful_bytes, t.moved_bytes),
            "wasted_bytes": t.moved_bytes - t.useful_bytes,
            "pattern": self.pattern,
            "stride_bytes": self.stride,
            "fast_axis": self.fast_axis,
            "vector_width": self.vector,
            "layout": _layout(self.issue),
            "achievable_vector_width": self.achievable,
            "wasted_elements": self.places.sectors or [],
            "masked_elements": self.places.masked or [],
            "mask": {
                "present": mask.present,
                "redundant": mask.redundant,
                "depends_on_memory": mask.present and mask.from_memory,
                "expression": mask.expression,
                "line": mask.line,
                "reason": mask.reason(launch) if mask.redundant else "",
                "bounds": mask.bounds(launch) if mask.present else {},
            },
        }


def _layout(issue: coalescing.Issue | None) -> dict | None:
    """The blocked layout requests were cut from, and whether it is the compiled kernel's."""
    if issue is None or issue.layout is None:
        return None
    lay = issue.layout
    return {
        "size_per_thread": list(lay.size_per_thread),
        "threads_per_warp": list(lay.threads_per_warp),
        "warps_per_cta": list(lay.warps_per_cta),
        "order": list(lay.order),
        "compiled": issue.compiled,
    }


def _ratio(a: int, b: int, digits: int = 4) -> float | None:
    return round(a / b, digits) if b else None


class _Launch:
    """The state of one launch being profiled."""

    def __init__(self, info: LaunchInfo):
        self.info = info
        warps = info.meta.get("num_warps")
        self.num_warps = int(warps) if isinstance(warps, int) and warps > 0 else DEFAULT_WARPS
        self.sites: dict[tuple, _Site] = {}
        self.sectors = Sectors()
        self.issues: dict = {}  #: what factored blocks gave (coalescing.analyse's cache)
        self.work: dict[str, int] = {}
        gx, gy, _ = info.grid
        self.strides = np.array([1, gx, gx * gy], dtype=np.int64)
        self.shifts: dict[str, int] = {}
        self.views: dict[str, ViewInfo] = {}
        for argument in info.arguments:
            self.place(argument)
        self.accesses = {(a["file"], a["line"], a["column"], a["kind"]): a
                         for a in info.resources.get("accesses", ())}  # fmt: skip

    def compiled(self, site: Site | None, kind: str) -> dict | None:
        """The offline compile's entry (``vector_bytes``, ``layout``) for the access of ``kind`` at
        ``site`` (None: not known)."""
        return None if site is None else self.accesses.get((site.file, site.line, site.column, kind))

    def place(self, argument: ArgumentInfo) -> None:
        """Remember where the GPU would put a tensor argument."""
        if argument.kind in ("tensor", "descriptor"):
            self.shifts[argument.name] = coalescing.placement(argument)
            self.views[argument.name] = argument.view_info()


class Profiler(Client):
    """Memory efficiency, mask utilisation and redundant masks, reuse across programs, roofline and
    compiled resources, per source site and per launch.

    Options: ``gpu`` names the GPU to model (``h200`` by default, or the GPU ``tilescope run --gpu``
    models): its warp size, SM count (a wave), L2 size and roofline; ``wave`` overrides the programs
    in one wave (default: the GPU's SM count); ``profile_path`` writes the report there as JSON after
    every launch (merged with every other profiler of the session writing there).
    """

    name = "profiler"
    kinds = frozenset(k for k in OpKind if k.is_memory)
    needs = frozenset(
        {Need.ADDRESSES_ONLY, Need.ARGUMENT_EVENTS, Need.COMPILED_RESOURCES, Need.COMPUTE_COUNTS}
    )
    options = ("gpu", "wave", "profile_path")

    def __init__(self, gpu: str | None = None, wave: int | None = None, profile_path: str | None = None):
        self.report_path = profile_path
        self.spec_name = _spec_name(gpu)
        self.spec: GPUSpec = SPECS[self.spec_name]
        self.compile_gpu = self.spec_name  # registers and occupancy of the GPU the profile is for
        self.wave = int(wave) if wave else self.spec.multi_processor_count
        if self.wave < 1:
            raise ValueError(f"profiler: wave must be at least 1 program, got {wave}")
        self._active: dict[int, _Launch] = {}
        self._launches: list[dict] = []
        self._findings: list[Finding] = []

    def on_launch_start(self, launch: LaunchInfo) -> None:
        """Start counting for a launch."""
        self._active[launch.launch_id] = _Launch(launch)

    def on_compute(self, count: ComputeCount) -> None:
        """Add one compute op's FLOPs to its roof."""
        state = self._active.get(count.launch_id)
        n = roofline.flops(count) if state is not None else 0
        if n:
            roof = roofline.roof_of(count)
            state.work[roof] = state.work.get(roof, 0) + n

    def on_op(self, record: OpRecord) -> None:
        """Count one memory record's traffic, masks and touched sectors."""
        state = self._active.get(record.launch_id)
        if state is None:
            return
        if record.address is None and record.address_affine is None and record.address_rows is None:
            return
        shift = state.shifts.get(record.argument or "", 0)
        compiled = state.compiled(record.site, record.kind.value)
        key = (record.site, record.kind.value, record.argument)
        site = state.sites.get(key)
        if site is None:
            site = state.sites[key] = _Site(record.site, record.kind.value, record.argument, record.dtype,
                                            record.itemsize)  # fmt: skip
        prepared = coalescing.lanes(record, shift)
        issue, traffic = coalescing.analyse(record, prepared, self.spec.warp_size, state.num_warps, compiled,
                                            state.issues, site.pending)  # fmt: skip
        site.add(record, issue, traffic)
        site.places.add(record, issue, state.views.get(record.argument or ""), shift)
        state.sectors.add(record, prepared, record.program_ids.astype(np.int64) @ state.strides)

    def on_argument(self, argument: ArgumentInfo) -> None:
        """A tensor found behind a loaded pointer: place it too."""
        for state in self._active.values():
            state.place(argument)

    def on_launch_end(self, launch: LaunchInfo) -> None:
        """Turn the launch into a report entry and findings."""
        state = self._active.pop(launch.launch_id, None)
        if state is None:
            return
        entry = self._entry(state, launch)
        self._launches.append(entry)
        self._findings += launch_findings(entry)

    def _entry(self, state: _Launch, launch: LaunchInfo) -> dict:
        compiled = occupancy(launch.resources, self.spec) if launch.resources else None
        sites = [s.entry(launch) | {"compiled_vector_bytes": (state.compiled(s.site, s.kind) or {}).get(
            "vector_bytes")} for s in state.sites.values()]  # fmt: skip
        sites.sort(key=lambda s: (-s["wasted_bytes"], s["file"], s["line"], s["column"], s["kind"],
                                  str(s["argument"])))  # fmt: skip
        reuse = state.sectors.summarize(launch.grid, self.wave) if sites else None
        dram = sum(t["unique_bytes"] for t in reuse["tensors"].values()) if reuse else 0
        requests = sum(s["moved_bytes"] for s in sites)
        return {
            "kernel": launch.kernel,
            "file": launch.file,
            "line": launch.line,
            "grid": list(launch.grid),
            "num_warps": state.num_warps,
            "gpu": self.spec_name,
            "l2_bytes": self.spec.L2_cache_size,
            "multiprocessors": self.spec.multi_processor_count,
            "multiprocessor": "CU" if self.spec.backend == "hip" else "SM",
            "sites": sites,
            "reuse": reuse,
            "roofline": roofline.place(state.work, dram, requests, ROOFS[self.spec_name]),
            "resources": compiled,
        }

    def report(self) -> ProfilerReport:
        """Every launch so far, and the findings, most wasteful first within each launch."""
        summary = {"schema": SCHEMA, "gpu": self.spec_name, "launches": list(self._launches)}
        return ProfilerReport(self.name, list(self._findings), summary)


def _spec_name(name: str | None) -> str:
    """The spec table's key for ``name``, or for the modelled GPU, or the default."""
    if name:
        spec = gpu_spec(name)
        return next(k for k, v in SPECS.items() if v is spec)
    from ...gpu import modelling

    modelled = modelling()
    return next((k for k, v in SPECS.items() if v is modelled), DEFAULT)
