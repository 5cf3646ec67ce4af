"""``tilescope bench`` as a user meets it on a machine without a GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilescope import cli
from tilescope.bench import store
from tilescope.bench.procs import JobOutcome, Side

BAD_SUITE = str(Path(__file__).parent / "fixtures" / "bad_suite.py")

needs_no_gpu = pytest.mark.skipif(
    __import__("torch").cuda.is_available(), reason="checks the message shown when there is no GPU"
)


@needs_no_gpu
def test_run_without_gpu_says_so_and_offers_dry_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "run", "-k", "rmsnorm"]) == 2
    err = capsys.readouterr().err
    assert "no CUDA GPU is visible" in err and "--dry-run" in err


@needs_no_gpu
def test_compare_without_gpu_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "compare", "-k", "rmsnorm", "--head-scale", "1.1"]) == 2
    assert "no CUDA GPU is visible" in capsys.readouterr().err


def test_unknown_benchmark_is_a_clear_error() -> None:
    with pytest.raises(SystemExit, match="no benchmark matches"):
        cli.main(["bench", "run", "-k", "no_such_kernel*"])
    with pytest.raises(SystemExit, match="benchmark module 'no_such_pkg' cannot be imported"):
        cli.main(["bench", "run", "--module", "no_such_pkg"])


def test_dry_run_reports_each_kernel(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["bench", "run", "--dry-run", "--module", BAD_SUITE])
    out = capsys.readouterr().out
    rows = {
        tuple(c.strip() for c in line.split("|")[1:4]) for line in out.splitlines() if line.startswith("| ")
    }
    assert ("good_scale", "compile scale_kernel for sm_90a", "ok") in rows
    assert ("broken_compile", "compile broken_kernel for sm_90a", "error") in rows
    assert "no_such_function" in out
    import tilescope

    if hasattr(tilescope, "trace"):  # the CPU engine checks accuracy: the wrong kernel fails it
        assert ("good_scale", "accuracy on the CPU engine", "ok") in rows
        assert ("wrong_scale", "accuracy on the CPU engine", "wrong") in rows
    assert code == 1


def _outcome(median: float) -> JobOutcome:
    res = {
        "bench": "rmsnorm",
        "shape": "M=1",
        "case_index": 0,
        "variant": "triton",
        "status": "ok",
        "median_ms": median,
    }
    return JobOutcome(0, Side("run"), env={"gpu": "H200", "triton": "3.6.0"}, results=[res])


def test_history_flags_a_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "h.sqlite"
    conn = store.connect(db)
    for value in [1.000, 1.001, 0.999, 1.000, 1.002, 0.998, 1.001, 1.08]:
        store.add_outcome(conn, store.new_session(conn, "run", "", "", []), _outcome(value))
    assert cli.main(["bench", "history", "--db", str(db)]) == 1
    out = capsys.readouterr().out
    assert "| rmsnorm | M=1 | triton | H200 | 8 | 1.0800 |" in out and "slower" in out
    store.add_outcome(conn, store.new_session(conn, "run", "", "", []), _outcome(1.0))
    assert cli.main(["bench", "history", "--db", str(db)]) == 0


def test_history_without_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bench", "history", "--db", str(tmp_path / "none.sqlite")]) == 2
    assert "no results database" in capsys.readouterr().err


def test_option_set_parsing() -> None:
    from tilescope.bench.assignments import parse_assignments

    assert parse_assignments(["A=1", "B=x=y"], "--x") == {"A": "1", "B": "x=y"}
    assert parse_assignments(["num_warps=8", "name=abc"], "--x", json_values=True) == {
        "num_warps": 8,
        "name": "abc",
    }
    with pytest.raises(ValueError, match="--head-set expects NAME=VALUE"):
        parse_assignments(["oops"], "--head-set")


def test_progress_lines(capsys: pytest.CaptureFixture[str]) -> None:
    from tilescope.bench.cli import _progress

    _progress(_outcome(0.1316), 8)
    bad = JobOutcome(3, Side("head"), failure="cannot start head: no interpreter")
    _progress(bad, 8)
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "[1/8] run: rmsnorm triton 0.1316 ms",
        "[4/8] head: failed: cannot start head: no interpreter",
    ]
