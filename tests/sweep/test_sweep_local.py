"""Local mode: a pool of worker processes gives the report one worker gives, whatever cells do;
a results folder lets a sweep resume; the command line writes JSON and SARIF."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from sweep_helpers import BUG_LINE, HERE, MIXED_STATUSES, essence, mixed_spec

from tilescope.sweep import load, local_backend, sweep
from tilescope.sweep.runner import ResultsError


@pytest.mark.slow  # two sweeps, each waiting out a cell's 12 s time limit
def test_two_workers_report_what_one_worker_reports_through_a_crash_and_a_hang(tmp_path):
    spec = mixed_spec(tmp_path)
    cli = subprocess.run([sys.executable, "-m", "tilescope.cli", "sweep", str(spec), "-j", "1",
                          "-o", str(tmp_path / "one"), "--json", "--sarif", str(tmp_path / "mixed.sarif")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert cli.returncode == 1, cli.stderr  # cells failed and a finding is an error
    sequential = json.loads(cli.stdout)
    assert json.loads((tmp_path / "one" / "report.json").read_text()) == sequential
    pooled = sweep(load(spec), tmp_path / "two", local_backend(2)).to_dict()

    assert essence(pooled) == essence(sequential)
    assert {c["id"]: c["status"] for c in sequential["cells"]} == MIXED_STATUSES
    [sanitizer] = sequential["reports"]
    [finding] = sanitizer["findings"]
    assert (finding["kind"], finding["line"], finding["details"]["argument"]) == \
        ("out-of-bounds store", BUG_LINE, "out_ptr")
    assert finding["file"] == str(HERE / "softmax_cases.py")
    assert finding["details"]["cells"] == ["softmax[shape=3x5000, dtype=float32]"]
    assert finding["program_ids"] == [[2, 0, 0]]  # only the last row writes past the end
    cells = {c["id"]: c for c in sequential["cells"]}
    assert "Not equal to tolerance" in cells["softmax[shape=3x5000, dtype=float32]"]["message"]
    hung = cells["sums[shape=2x3, splits=4]"]
    kernel_file = HERE / "faulty_cases.py"
    assert hung["message"].startswith(f"ran past its 12 s limit, in row_sums_kernel at {kernel_file}:")
    assert "row_sums_kernel" in hung["traceback"]
    assert cells["native[shape=2x0]"]["message"] == "its worker process died (killed by SIGSEGV)"

    sarif = json.loads((tmp_path / "mixed.sarif").read_text())
    [result] = sarif["runs"][0]["results"]
    assert result["ruleId"] == "out-of-bounds-store"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == BUG_LINE
    assert result["properties"]["cells"] == ["softmax[shape=3x5000, dtype=float32]"]
    [invocation] = sarif["runs"][0]["invocations"]
    assert not invocation["executionSuccessful"]
    notes = invocation["toolExecutionNotifications"]
    assert {n["properties"]["cell"]: n["properties"]["status"] for n in notes} == \
        {cell: status for cell, status in MIXED_STATUSES.items() if status != "ok"}


def test_a_resumed_sweep_runs_only_the_cells_not_done(tmp_path):
    spec_path = tmp_path / "clean.toml"
    spec_path.write_text(f'[sweep]\npath = ["{HERE}"]\n[[kernel]]\ncase = "softmax_cases:case"\n'
                         'shapes = [[1, 7], [4, 33], [2, 8192]]\ndtypes = ["float16"]\n')
    spec = load(spec_path)
    ran: list[str] = []
    whole = sweep(spec, tmp_path / "out", local_backend(0), progress=lambda r: ran.append(r.cell.id))
    assert len(ran) == 3 and whole.counts()["ok"] == 3 and not whole.reports[0].findings

    with pytest.raises(ResultsError, match="already holds 3 cell result"):
        sweep(spec, tmp_path / "out", local_backend(0))
    lost = sorted((tmp_path / "out" / "cells").glob("*.json"))[1]
    lost_id = json.loads(lost.read_text())["id"]
    lost.unlink()
    ran.clear()
    resumed = sweep(spec, tmp_path / "out", local_backend(0), resume=True,
                    progress=lambda r: ran.append(r.cell.id))
    assert ran == [lost_id]
    assert essence(resumed.to_dict()) == essence(whole.to_dict())
    ran.clear()
    spec.options = {"mode": "serial"}
    with pytest.raises(ResultsError, match=r"cells run with clients \['sanitizer'\] and options {}, not"):
        sweep(spec, tmp_path / "out", local_backend(0), resume=True)
    sweep(spec, tmp_path / "out", local_backend(0), fresh=True, progress=lambda r: ran.append(r.cell.id))
    assert len(ran) == 3


def test_crashed_and_oversized_cells_end_as_such_and_the_sweep_goes_on(tmp_path):
    spec_path = tmp_path / "native.toml"
    spec_path.write_text(textwrap.dedent(f"""
        [sweep]
        memory = "256MiB"
        path = ["{HERE}"]
        [[kernel]]
        case = "faulty_cases:native_case"
        shapes = [[2, 0], [2, 8]]
        [[kernel]]
        case = "faulty_cases:allocating_case"
        shapes = [[8, 8], [30000, 30000]]
    """))
    report = sweep(load(spec_path), tmp_path / "out", local_backend(2))
    ends = {c.cell.id: (c.status, c.message) for c in report.cells}
    assert ends == {
        "native_case[shape=2x0]": ("crashed", "its worker process died (killed by SIGSEGV)"),
        "native_case[shape=2x8]": ("ok", ""),
        "allocating_case[shape=8x8]": ("ok", ""),
        "allocating_case[shape=30000x30000]": ("memory", "MemoryError: grew past its 256 MiB limit"),
    }
    assert report.headline() == "sweep native: 4 cells (2 ok, 1 memory, 1 crashed), 0 findings"


@pytest.mark.slow  # waits out the time limit, set well above what a loaded machine needs for a clean cell
def test_a_cell_stuck_in_native_code_is_killed_after_its_grace(tmp_path):
    spec_path = tmp_path / "locked.toml"
    spec_path.write_text(f'[sweep]\ntimeout = 10\ngrace = 1\npath = ["{HERE}"]\n[[kernel]]\n'
                         'case = "faulty_cases:locked_case"\nshapes = [[3, 0], [3, 5]]\n')
    report = sweep(load(spec_path), tmp_path / "out", local_backend(2))
    assert {c.cell.id: (c.status, c.message) for c in report.cells} == {
        "locked_case[shape=3x0]": ("timeout", "killed: still running 11 s after it started (it did not stop "
                                              "at its time limit)"),
        "locked_case[shape=3x5]": ("ok", ""),
    }


def test_the_command_line_refuses_a_bad_spec_and_a_case_that_cannot_be_imported_fails_its_cells(
        tmp_path, capsys):
    from tilescope.cli import main

    bad = tmp_path / "bad.toml"
    bad.write_text('[[kernel]]\ncase = "m:f"\ndtypes = ["fp16"]\n')
    assert main(["sweep", str(bad), "-o", str(tmp_path / "out")]) == 2
    assert f"tilescope sweep: error: {bad}: kernel 'f'.dtypes: unknown dtype fp16" in capsys.readouterr().err

    matrix = HERE / "softmax_matrix.toml"
    assert main(["sweep", str(matrix), "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == 153 and listed[0] == "softmax[shape=1x1, dtype=float32]"

    missing = tmp_path / "missing.toml"
    missing.write_text('[[kernel]]\ncase = "no_such_cases:case"\nshapes = [[4]]\n')
    assert main(["sweep", str(missing), "-j", "0", "-o", str(tmp_path / "out"), "--json"]) == 1
    [cell] = json.loads(capsys.readouterr().out)["cells"]
    assert cell["status"] == "failed"
    assert cell["message"] == ("cannot import case no_such_cases:case (path []): ModuleNotFoundError: "
                               "No module named 'no_such_cases'")


def test_configs_reach_the_launch_and_a_bad_one_fails_its_cells_naming_the_option(tmp_path):
    spec_path = tmp_path / "configs.toml"
    spec_path.write_text(textwrap.dedent(f"""
        [sweep]
        path = ["{HERE}"]
        [[kernel]]
        case = "softmax_cases:case"
        shapes = [[3, 100]]
        dtypes = ["float32"]
        configs = [{{ num_warps = 4 }}, {{ num_warps = 8, num_stages = 2 }}, {{ num_warp = 4 }}]
    """))
    report = sweep(load(spec_path), tmp_path / "out", local_backend(0))
    ends = [(c.cell.params["config"], c.status) for c in report.cells]
    assert ends == [({"num_warps": 4}, "ok"), ({"num_warps": 8, "num_stages": 2}, "ok"),
                    ({"num_warp": 4}, "failed")]
    assert report.cells[2].message.startswith("LaunchError: kernel `softmax_kernel`")
    assert "keyword argument 'num_warp' specified but unrecognised" in report.cells[2].message


def test_every_clients_findings_merge_with_their_cells_and_each_exports_a_sarif_run(tmp_path):
    spec_path = tmp_path / "two.toml"
    spec_path.write_text(f'[sweep]\nclients = ["sanitizer", "racecheck"]\npath = ["{HERE}"]\n[[kernel]]\n'
                         'case = "softmax_cases:case"\nshapes = [[3, 100], [3, 5000]]\n'
                         'dtypes = ["float32"]\n')
    report = sweep(load(spec_path), tmp_path / "out", local_backend(0))
    bad = ["case[shape=3x5000, dtype=float32]"]
    # the unmasked chunk writes past the end (last row) and over the next row's elements (a race)
    found = [(r.client, [(f.kind, f.line, f.details["cells"]) for f in r.findings]) for r in report.reports]
    assert found == [("sanitizer", [("out-of-bounds store", BUG_LINE, bad)]),
                     ("racecheck", [("data race", BUG_LINE, bad)])]
    runs = report.to_sarif()["runs"]
    exported = [(run["tool"]["driver"]["name"], [r["properties"]["cells"] for r in run["results"]])
                for run in runs]
    assert exported == [("tilescope-sanitizer", [bad]), ("tilescope-racecheck", [bad])]
    assert all(run["invocations"][0]["toolExecutionNotifications"][0]["properties"]["cell"] == bad[0]
               for run in runs)
