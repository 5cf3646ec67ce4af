"""``tilescope show TRACE``: what a trace holds — launches, kernels, and op counts and bytes per site."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table


def register(subparsers: Any) -> None:
    """Add ``tilescope show`` to the command line."""
    p = subparsers.add_parser("show", help="summarize a trace written by the tracer client",
                              description="Summarize a trace: its launches, and per source site the ops, "
                                          "program-op rows, enabled lanes and bytes moved.")
    p.add_argument("trace", help="trace directory (from tilescope run -c tracer --trace-dir DIR)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=main)


def summarize(path: str) -> dict:
    """The summary of the trace at ``path`` as plain data (launches and per-site rows)."""
    from .clients.tracer.reader import load_trace

    trace = load_trace(path)
    launches = trace.launches
    columns = ["launch", "op", "kind", "site", "argument", "active_lanes", "bytes"]
    ops = trace.table(columns).to_pandas()
    sites = trace.sites.set_index(["launch", "site"]) if len(trace.sites) else None
    per_site: list[dict] = []
    if len(ops):
        ops["argument"] = ops["argument"].astype(object).where(ops["argument"].notna(), "")
        grouped = ops.groupby(["launch", "site", "kind", "argument"], observed=True, sort=True).agg(
            ops=("op", "nunique"), rows=("op", "size"), lanes=("active_lanes", "sum"), bytes=("bytes", "sum"))
        kernels = dict(zip(launches["launch"], launches["kernel"], strict=True))
        for (launch, site, kind, argument), row in grouped.iterrows():
            where = sites.loc[(launch, site)] if sites is not None and (launch, site) in sites.index else None
            per_site.append({
                "launch": int(launch), "kernel": kernels.get(launch, ""), "kind": str(kind),
                "argument": argument or None,
                "file": str(where["file"]) if where is not None else "", "line": int(where["line"]) if where
                is not None else 0, "source": str(where["expression"]) if where is not None else "",
                "ops": int(row["ops"]), "rows": int(row["rows"]), "lanes": int(row["lanes"]),
                "bytes": int(row["bytes"])})
    return {
        "trace": str(trace.path), "version": trace.version,
        "launches": [{"launch": int(r.launch), "kernel": r.kernel, "grid": list(r.grid), "status": r.status,
                      "programs": int(r.programs), "ops": int(r.ops), "rows": int(r.rows), "values": r.values}
                     for r in launches.itertuples()],
        "sites": per_site,
        "totals": {"launches": len(launches), "kernels": int(launches["kernel"].nunique()),
                   "rows": int(len(ops)), "bytes": int(ops["bytes"].sum()) if len(ops) else 0},
    }


def main(args: argparse.Namespace) -> int:
    """Print the summary of ``args.trace``; 2 when it cannot be read."""
    from .clients.tracer import TraceError

    try:
        summary = summarize(args.trace)
    except TraceError as exc:
        print(f"tilescope show: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    console = Console()
    t = summary["totals"]
    console.print(f"[bold]{summary['trace']}[/]: {t['launches']} launches of {t['kernels']} kernels, "
                  f"{t['rows']:,} program-op rows, {_bytes(t['bytes'])} moved (format v{summary['version']})")
    launches = Table("launch", "kernel", "grid", "status", "programs", "ops", "rows", "values",
                     title="launches")
    for r in summary["launches"]:
        launches.add_row(str(r["launch"]), r["kernel"], "x".join(map(str, r["grid"])), r["status"],
                         f"{r['programs']:,}", f"{r['ops']:,}", f"{r['rows']:,}", r["values"])
    console.print(launches)
    sites = Table("launch", "site", "kind", "argument", "ops", "rows", "lanes", "bytes", title="ops per site")
    for s in summary["sites"]:
        where = f"{s['file'].rsplit('/', 1)[-1]}:{s['line']}  {s['source']}"
        sites.add_row(str(s["launch"]), where, s["kind"], s["argument"] or "", f"{s['ops']:,}",
                      f"{s['rows']:,}", f"{s['lanes']:,}", _bytes(s["bytes"]))
    console.print(sites)
    return 0


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n} B"
