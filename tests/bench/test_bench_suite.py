"""The built-in suite: every kernel compiles for sm_90a and (with the CPU engine) computes the right answer;
on a GPU, a wrong kernel fails its accuracy check and is not timed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilescope import cli

BAD_SUITE = str(Path(__file__).parent / "fixtures" / "bad_suite.py")


@pytest.mark.slow
def test_builtin_suite_dry_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "run", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.count("| ok |") >= 17  # 9 compilations (+ 8 accuracy checks where the engine exists)


@pytest.mark.gpu
def test_gpu_run_isolates_wrong_and_broken_kernels(tmp_path: Path) -> None:
    pytest.importorskip("torch").cuda.is_available() or pytest.skip("no CUDA GPU")
    out = tmp_path / "r.json"
    code = cli.main(
        [
            "bench",
            "run",
            "--module",
            BAD_SUITE,
            "--db",
            str(tmp_path / "b.sqlite"),
            "--json",
            str(out),
            "--no-baseline",
            "--reps",
            "10",
        ]
    )
    assert code == 1
    results = {r["bench"]: r for r in json.loads(out.read_text())["results"]}
    assert results["good_scale"]["status"] == "ok" and results["good_scale"]["median_ms"] > 0
    assert results["wrong_scale"]["status"] == "wrong" and results["wrong_scale"]["median_ms"] is None
    assert (
        results["broken_compile"]["status"] == "error"
        and "no_such_function" in results["broken_compile"]["message"]
    )
