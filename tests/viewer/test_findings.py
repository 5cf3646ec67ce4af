"""The generic finding overlay: a race (two sites, two elements) and a profiler note (a line), in
the Report/Finding shape every client shares, drawn on the launch they belong to."""

from __future__ import annotations

import json
import shutil

from tilescope import Finding, Report
from tilescope.viewer import TraceModel, write_reports


def _sites(trace_dir):
    data = json.loads((trace_dir / "launches" / "launch-000001.json").read_text())
    load = next(s for s in data["sites"] if s["expression"].startswith("tl.load"))
    store = next(s for s in data["sites"] if s["expression"].startswith("tl.store"))
    return data, load, store


def test_race_and_profiler_findings_are_drawn_where_they_happen(traces, tmp_path):
    trace = tmp_path / "oob"
    shutil.copytree(traces["oob"], trace)
    data, load, store = _sites(trace)
    race = Finding(
        "race",
        "error",
        "write-read race on `dst_ptr`",
        data["kernel"],
        store["file"],
        store["line"],
        store["column"],
        [(0, 0, 0), (1, 0, 0)],
        details={
            "sites": [
                {
                    "file": store["file"],
                    "line": store["line"],
                    "argument": "dst_ptr",
                    "element": [15, 3],
                    "program": [0, 0, 0],
                    "access": "write",
                },
                {
                    "file": load["file"],
                    "line": load["line"],
                    "argument": "src_ptr",
                    "element": [16, 3],
                    "program": [1, 0, 0],
                    "access": "read",
                },
            ]
        },
    )
    profile = Finding(
        "profiler",
        "note",
        "42% of sectors wasted",
        data["kernel"],
        load["file"],
        load["line"],
        load["column"],
        [],
        details={"elements": [{"argument": "src_ptr", "element": [0, 32], "label": "partial sector"}]},
    )
    elsewhere = Finding("race", "error", "another kernel", "other_kernel", load["file"], load["line"], 1, [])
    write_reports(trace, [Report("racecheck", [race, elsewhere]), Report("profiler", [profile])])
    meta, _ = TraceModel(trace).launch_container(1)
    by_client = {f["client"]: f for f in meta["findings"]}
    assert set(by_client) == {"sanitizer", "racecheck", "profiler"}  # not the other kernel's
    names = {t["name"]: k for k, t in enumerate(meta["tensors"])}
    marks = by_client["racecheck"]["marks"]
    assert [(m["tensor"], m["element"], m["program"]) for m in marks] == [
        (names["dst_ptr"], [15, 3], 0),
        (names["src_ptr"], [16, 3], 1),
    ]
    assert by_client["racecheck"]["lines"] == sorted({load["line"], store["line"]})
    assert by_client["racecheck"]["bad"] is None  # only out-of-bounds findings outline outside lanes
    (mark,) = by_client["profiler"]["marks"]
    assert mark["element"] == [0, 32] and mark["label"] == "partial sector"
    assert meta["lines"][str(load["line"])]["findings"] == 3  # sanitizer, race (read side), profiler
    assert meta["lines"][str(store["line"])]["findings"] == 1


def test_a_report_file_that_is_not_json_is_reported_not_fatal(traces, tmp_path):
    trace = tmp_path / "oob"
    shutil.copytree(traces["oob"], trace)
    (trace / "reports" / "broken.json").write_text("{ nope")
    model = TraceModel(trace)
    assert len(model.problems) == 1 and "broken.json" in model.problems[0]
    assert model.index()["problems"] == model.problems
    assert [f["client"] for f in model.launch_container(1)[0]["findings"]] == ["sanitizer"]
