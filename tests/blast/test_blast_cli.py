"""``tilescope blast-radius`` end to end on the CPU: option sets, caching, failures, two Triton versions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tilescope import cli

CORPUS = Path(__file__).parent / "fixtures" / "corpus"
TRITON38 = Path(__file__).resolve().parents[2] / ".venvs" / "triton38"


def _run(tmp_path: Path, *extra: str) -> dict:
    out = tmp_path / "r.json"
    md = tmp_path / "r.md"
    code = cli.main(
        [
            "blast-radius",
            "--corpus",
            str(CORPUS),
            "--cache",
            str(tmp_path / "cache"),
            "-j",
            "2",
            "--json",
            str(out),
            "--markdown",
            str(md),
            *extra,
        ]
    )
    assert code == 0
    report = json.loads(out.read_text())
    report["markdown"] = md.read_text()
    return report


def test_option_sets_change_ttgir_and_nothing_is_hidden(tmp_path: Path) -> None:
    r = _run(
        tmp_path, "--targets", "sm_90a,gfx942", "--base-option", "num_warps=4", "--head-option", "num_warps=8"
    )
    summary = {(s["target"], s["stage"]): s for s in r["summary"]}
    assert summary[("sm_90a", "ttir")]["changed"] == 0  # TTIR does not depend on the warp count
    assert summary[("sm_90a", "ttgir")]["changed"] == 1 and summary[("gfx942", "ttgir")]["changed"] == 1
    assert {"ptx", "sass"} <= {s["stage"] for s in r["summary"] if s["target"] == "sm_90a"}
    assert "amdgcn" in {s["stage"] for s in r["summary"] if s["target"] == "gfx942"}
    (k90,) = [k for k in r["kernels"] if k["target"] == "sm_90a"]
    assert k90["base_resources"]["registers"] > 0 and "shared_bytes" in k90["head_resources"]
    assert "| sm_90a | 0/1 | 1/1" in r["markdown"]
    assert r["meta"]["cached"] == 0
    again = _run(
        tmp_path, "--targets", "sm_90a,gfx942", "--base-option", "num_warps=4", "--head-option", "num_warps=8"
    )
    assert again["meta"]["cached"] == again["meta"]["jobs_total"] == 4
    assert again["summary"] == r["summary"]


def test_same_build_on_both_sides_changes_nothing(tmp_path: Path) -> None:
    r = _run(tmp_path, "--targets", "sm_90a")
    assert all(s["changed"] == 0 for s in r["summary"])
    assert "No kernel changed." in r["markdown"]


def test_unbuildable_target_and_missing_env_are_reported_not_fatal(tmp_path: Path) -> None:
    r = _run(tmp_path, "--targets", "sm_90a,gfx1", "--head", str(tmp_path / "no-venv"))
    statuses = {(k["target"], k["status"]) for k in r["kernels"]}
    assert statuses == {("sm_90a", "head-failed"), ("gfx1", "both-failed")}
    assert "environment unreachable" in r["markdown"]
    r = _run(tmp_path, "--targets", "sm_90a,gfx1")
    assert {k["target"]: k["status"] for k in r["kernels"]} == {"sm_90a": "compared", "gfx1": "both-failed"}


def test_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["blast-radius", "--corpus", str(CORPUS), "--targets", "pdp11"]) == 2
    assert "unknown target 'pdp11'" in capsys.readouterr().err
    args = ["blast-radius", "--corpus", str(CORPUS), "--head-option", "num_warps", "--cache", str(tmp_path)]
    assert cli.main(args) == 2
    assert "--head-option expects NAME=VALUE, got 'num_warps'" in capsys.readouterr().err
    assert cli.main(["blast-radius", "--module", "no_such_pkg.kernels", "--cache", str(tmp_path)]) == 2
    assert "benchmark module 'no_such_pkg.kernels' cannot be imported" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(not (TRITON38 / "bin" / "python").exists(), reason="needs .venvs/triton38 (Triton 3.8)")
def test_triton_38_to_39_over_the_builtin_suite(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    assert (
        cli.main(
            [
                "blast-radius",
                "--base",
                str(TRITON38),
                "--head",
                sys.executable,
                "--cache",
                str(tmp_path / "cache"),
                "--json",
                str(out),
            ]
        )
        == 0
    )
    r = json.loads(out.read_text())
    assert r["meta"]["base"]["triton"] == "3.8.0" and r["meta"]["head"]["triton"].startswith("3.9")
    assert all(k["status"] == "compared" for k in r["kernels"])
    assert len(r["kernels"]) == 27
