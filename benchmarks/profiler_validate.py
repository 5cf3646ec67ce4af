"""The profiler against Nsight Compute on an H200 (issue 13): prediction on the CPU, measurement on the GPU.

Profiles every configuration of ``benchmarks/profiler_gpu.py`` with tilescope (addresses only, on
the CPU, for the modelled H200) and prints a markdown table beside what Nsight Compute measured
there (``benchmarks/profiler/ncu.csv``) and the kernels' times (``benchmarks/profiler/times.json``).
Usage: python benchmarks/profiler_validate.py
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import profiler_gpu  # benchmarks/profiler_gpu.py (the script's folder is on sys.path)

import tilescope

DATA = Path(__file__).parent / "profiler"


def measured(names: list[str]) -> dict[str, dict[str, float]]:
    """Nsight Compute's metrics per configuration (its launches come in the configurations' order)."""
    rows = [r for r in csv.DictReader(line for line in open(DATA / "ncu.csv") if line.startswith('"'))]
    by_id: dict[str, dict[str, float]] = {}
    for r in rows:
        by_id.setdefault(r["ID"], {})[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    return {name: by_id[str(i)] for i, name in enumerate(names)}


def predicted(name: str, config: tuple) -> dict:
    """The profiler's launch entry for one configuration."""
    kernel, grid, args, meta = config
    launcher = tilescope.trace(kernel, clients="profiler")
    launcher[grid](*args, **meta)
    return launcher.reports[0].launches[0]


def _per_request(sites: list[dict], kind: str) -> tuple[float, int]:
    mine = [s for s in sites if s["kind"] == kind]
    sectors, requests = sum(s["sectors"] for s in mine), sum(s["requests"] for s in mine)
    return (sectors / requests if requests else 0.0), requests


def main() -> None:
    table = profiler_gpu.configs("cpu")
    ncu = measured(list(table))
    times = json.loads((DATA / "times.json").read_text())["ms"]
    lines = ["| kernel | ld sectors/req (ours / ncu) | ld requests (ours / ncu) "
             "| st sectors/req (ours / ncu) "
             "| DRAM read MB (ours / ncu) | regs (ours / ncu) | spills (ours B / ncu local st) "
             "| occupancy % (ours / ncu) | H200 µs | profiler says |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for name, config in table.items():
        launch = predicted(name, config)
        m = ncu[name]
        ld, ld_requests = _per_request(launch["sites"], "load")
        st, _ = _per_request(launch["sites"], "store")
        loaded = {s["argument"] for s in launch["sites"] if s["kind"] == "load"}
        dram = sum(t["unique_bytes"] for a, t in launch["reuse"]["tensors"].items() if a in loaded)
        res = launch["resources"]
        ncu_ld = m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] / max(
            m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"], 1)
        ncu_st = m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] / max(
            m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"], 1)
        kinds = sorted({f["kind"] for f in _findings(launch)})
        ncu_requests = int(m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"])
        lines.append(
            f"| {name} | {ld:.2f} / {ncu_ld:.2f} | {ld_requests} / {ncu_requests} "
            f"| {st:.2f} / {ncu_st:.2f} | {dram / 1e6:.1f} / {m['dram__bytes_read.sum'] / 1e6:.1f} "
            f"| {res['registers']} / {int(m['launch__registers_per_thread'])} "
            f"| {res['spill_bytes']} / {int(m['smsp__sass_inst_executed_op_local_st.sum'])} "
            f"| {100 * res['occupancy']:.1f} / {m['sm__maximum_warps_per_active_cycle_pct']:.1f} "
            f"| {1e3 * times[name]:.1f} | {', '.join(kinds) or '-'} |"
        )  # fmt: skip
    print("\n".join(lines))


def _findings(launch: dict) -> list[dict]:
    from tilescope.clients.profiler.findings import launch_findings

    return [f.to_dict() for f in launch_findings(launch)]


if __name__ == "__main__":
    main()
