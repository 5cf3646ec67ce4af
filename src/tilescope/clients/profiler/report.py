"""The profiler's report: one entry per launch (schema :data:`SCHEMA`, ``docs/profiler.md``) and findings.

Rendered as one rich table per launch, sites sorted by wasted bytes with their source lines, then
the wave footprint, the roofline and the compiled resources, then the findings as diagnostics.
Everything in it is computed from the op stream and the compile, never from timing, so two runs
give the same report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base import Report

#: version of the report's JSON layout (bumped when a reader written against it would misread it)
SCHEMA = 1


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _bytes(n: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def _vector(s: dict) -> str:
    """Elements per thread per access, and in brackets what the addresses allow when that is more."""
    text = str(s["vector_width"])
    if s["achievable_vector_width"] > s["vector_width"]:
        text += f" ({s['achievable_vector_width']})"
    return text


#: peak tile registers per thread from which the terminal report shows the live tiles (the JSON
#: always has them): below it, tiles are not what limits the kernel
LIVE_SHOWN = 64


def live_text(live: dict) -> str:
    """One line: where the most tile registers are live and the largest tiles live there (SSA copies
    of one tile, such as a loop's accumulator and its next value, counted together)."""
    counts: dict[tuple, int] = {}
    for t in live["live"]:
        key = (t["name"], "x".join(map(str, t["shape"])), t["dtype"], t["registers"])
        counts[key] = counts.get(key, 0) + 1
    tiles = ", ".join(
        f"{name} ({shape} {dtype}, {regs} regs/thread{f' x{n}' if n > 1 else ''})"
        for (name, shape, dtype, regs), n in list(counts.items())[:4]
    )
    return (
        f"live tiles: at line {live['line']} ({live['op']}), {live['peak_registers']} registers per thread "
        f"hold tiles (estimated from the TTGIR): {tiles}"
    )


def _site_label(s: dict) -> str:
    return f"{s['line']}" if s["line"] else "?"


@dataclass
class ProfilerReport(Report):
    """A :class:`Report` whose ``summary["launches"]`` holds the per-launch profile."""

    client_name = "profiler"

    @property
    def launches(self) -> list[dict]:
        """The launch entries, in launch order."""
        return list(self.summary.get("launches", []))

    def __str__(self) -> str:
        from ... import render

        return render.report_text(self, width=130)

    def __rich__(self) -> Any:
        from rich.console import Group
        from rich.text import Text

        from ... import render

        parts: list[Any] = []
        for launch in self.launches:
            parts += [_launch_table(launch), *_launch_lines(launch), Text("")]
        if self.findings:
            parts += [render.to_rich(self.findings), Text("")]
        n = len(self.findings)
        parts.append(Text(f"profiler: {len(self.launches)} launch(es), {n} finding{'s' if n != 1 else ''}",
                          style="bold"))  # fmt: skip
        return Group(*parts)


def _launch_table(launch: dict) -> Any:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    grid = "x".join(map(str, launch["grid"]))
    table = Table(title=f"{launch['kernel']}  grid {grid}  {launch['num_warps']} warps  ({launch['gpu']})",
                  title_justify="left", box=box.SIMPLE_HEAD)  # fmt: skip
    rows = []
    for s in launch["sites"]:
        mask = s["mask"]
        mask_text = (
            "redundant"
            if mask["redundant"]
            else "data"
            if mask["depends_on_memory"]
            else "needed"
            if mask["present"]
            else "-"
        )
        pattern = s["pattern"] + (f" {s['stride_bytes']} B" if s["pattern"] == "strided" else "")
        rows.append((_site_label(s), s["kind"], s["argument"] or "?", pattern, f"{s['sectors_per_request']}",
                     _pct(s["efficiency"]), _vector(s), _pct(s["mask_utilisation"]), mask_text,
                     _bytes(s["wasted_bytes"]), s["source"]))  # fmt: skip
    names = ("line", "op", "tensor", "pattern", "sect/req", "eff", "vec", "util", "mask", "wasted", "source")
    for i, name in enumerate(names):
        # every column keeps its width but the source, which gives way on a narrow terminal
        width = max([len(name), *(len(r[i]) for r in rows)])
        left = name in ("op", "tensor", "pattern", "mask", "source")
        if name == "source":
            table.add_column(name, no_wrap=True, overflow="ellipsis", max_width=40)
        else:
            table.add_column(name, justify="left" if left else "right", no_wrap=True, min_width=width)
    for row in rows:
        table.add_row(*row[:-1], Text(row[-1]))  # source text, not markup: `x[row, cols]` stays
    return table


def _launch_lines(launch: dict) -> list[Any]:
    from rich.text import Text

    out = []
    reuse = launch.get("reuse")
    if reuse:
        order = reuse["launch_order"]
        text = (f"wave ({reuse['wave_programs']} programs, {reuse['waves']} wave(s)): L2 footprint "
                f"{_bytes(order['wave_bytes_mean'])} (L2 {_bytes(launch['l2_bytes'])})")  # fmt: skip
        best = reuse.get("best_grouped")
        if best:
            text += f"; {best['name']}: {_bytes(best['wave_bytes_mean'])}"
        reads = ", ".join(f"{name} ×{t['programs_per_byte']:g}" for name, t in reuse["tensors"].items())
        out.append(Text(text + f"; programs per byte: {reads}"))
    roof = launch.get("roofline")
    if roof:
        intensity = "inf" if roof["intensity"] is None else f"{roof['intensity']:g}"
        out.append(Text(
            f"roofline: {roof['flops']:,} FLOP ({roof['roof']}), {_bytes(roof['dram_bytes'])} from memory, "
            f"{intensity} FLOP/B (ridge {roof['ridge']:g}): {roof['bound']}-bound, floor "
            f"{max(roof['floor_us'].values()):g} µs"))  # fmt: skip
    res = launch.get("resources")
    if res and "error" in res:
        out.append(Text(f"compiled: not available ({res['error']})", style="dim"))
    elif res:
        unit = "CU" if "waves_per_simd" in res else "SM"
        out.append(
            Text(
                f"compiled ({res.get('target')}): {res.get('registers')} registers, "
                f"{res.get('spill_bytes', 0)} B spilled, {_bytes(res.get('shared_bytes', 0))} shared; "
                f"{res.get('programs_per_sm')} program(s) per {unit} ({res.get('occupancy', 0):.0%} "
                f"occupancy, limited by {res.get('limited_by')})"
            )
        )
        live = res.get("live_tiles")
        if live and (live["peak_registers"] >= LIVE_SHOWN or res.get("spill_bytes")):
            out.append(Text(live_text(live)))
    return out
