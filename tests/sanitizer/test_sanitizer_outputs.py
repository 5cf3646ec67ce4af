"""SARIF 2.1.0 output and fail-fast, through the options ``make_clients`` passes to the client."""

import json

import numpy as np
import pytest
from sanitizer_kernels import copy_tail

import tilescope
from tilescope.clients.sanitizer import Sanitizer, SanitizerError


def _args(n=100):
    return np.arange(n, dtype=np.float32), np.zeros(n, np.float32), n


def test_sarif_fields(tmp_path):
    path = tmp_path / "out.sarif"
    launcher = tilescope.trace(copy_tail, clients="sanitizer", sarif_path=str(path))
    launcher[(4,)](*_args(), BLOCK=32)
    log = json.loads(path.read_text())
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert "out-of-bounds-load" in rules and "int32-overflow" in rules
    levels = {r["id"]: r["defaultConfiguration"]["level"] for r in run["tool"]["driver"]["rules"]}
    assert levels.pop("load-outside-view") == levels.pop("store-outside-view") == "warning"
    assert levels.pop("atomic-outside-view") == "warning"
    assert set(levels.values()) == {"error"}
    load, store = run["results"]
    finding = launcher.reports[0].findings[0]
    assert load["ruleId"] == "out-of-bounds-load" and rules[load["ruleIndex"]] == "out-of-bounds-load"
    assert load["level"] == "error"
    assert load["message"]["text"] == finding.message
    (loc,) = load["locations"]
    region = loc["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (finding.line, finding.column)
    assert "tl.load(" in region["snippet"]["text"]
    assert loc["physicalLocation"]["artifactLocation"]["uri"].endswith("sanitizer_kernels.py")
    assert loc["logicalLocations"] == [{"name": "copy_tail", "kind": "function"}]
    assert load["properties"]["first_element"] == [100]
    key = "tilescopeFinding/v1"
    assert load["partialFingerprints"][key] != store["partialFingerprints"][key]


def test_sarif_uri_relative_to_root(tmp_path):
    launcher = tilescope.trace(copy_tail, clients="sanitizer")
    launcher[(4,)](*_args(), BLOCK=32)
    here = launcher.reports[0].findings[0].file.rsplit("/", 1)[0]
    log = launcher.reports[0].to_sarif(root=here)
    loc = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": "sanitizer_kernels.py", "uriBaseId": "SRCROOT"}
    assert log["runs"][0]["originalUriBaseIds"]["SRCROOT"]["uri"].startswith("file://")


def test_options_reach_the_client():
    assert Sanitizer.options == ("fail_fast", "sarif_path")
    launcher = tilescope.trace(copy_tail, clients="sanitizer", fail_fast=True)
    assert launcher.clients[0].fail_fast is True


def test_fail_fast_stops_at_the_first_finding():
    x, y, n = _args()
    launcher = tilescope.trace(copy_tail, clients="sanitizer", fail_fast=True)
    with pytest.raises(SanitizerError) as info:
        launcher[(4,)](x, y, n, BLOCK=32)
    assert isinstance(info.value, tilescope.TilescopeError)
    assert info.value.finding.kind == "out-of-bounds load"
    assert str(info.value).startswith("error[out-of-bounds load]")
    assert [f.kind for f in launcher.reports[0].findings] == ["out-of-bounds load"]


def test_without_fail_fast_the_process_continues():
    x, y, n = _args()
    launcher = tilescope.trace(copy_tail, clients="sanitizer", compute_outputs=True)
    launcher[(4,)](x, y, n, BLOCK=32)
    launcher[(4,)](x, y, n, BLOCK=32)
    np.testing.assert_array_equal(y, x + 1.0)
    assert len(launcher.reports[0].findings) == 2


def test_one_sarif_file_for_every_kernel(tmp_path):
    # tilescope run and the pytest plug-in make one launcher (and sanitizer) per kernel
    from sanitizer_kernels import wide_offsets

    path = str(tmp_path / "all.sarif")
    tilescope.trace(copy_tail, clients="sanitizer", sarif_path=path)[(4,)](*_args(), BLOCK=32)
    tilescope.trace(wide_offsets, clients="sanitizer", sarif_path=path)[(3,)](np.zeros(8, np.int32), 2**30,
                                                                             BLOCK=4)
    rules = sorted(r["ruleId"] for r in json.loads(open(path).read())["runs"][0]["results"])
    assert rules == ["int32-overflow", "out-of-bounds-load", "out-of-bounds-store", "out-of-bounds-store"]
