"""The SQLite store: what a session records and what history reads back."""

from __future__ import annotations

from pathlib import Path

from tilescope.bench import store
from tilescope.bench.procs import JobOutcome, Side


def _outcome(i: int, median: float, status: str = "ok") -> JobOutcome:
    env = {"triton": "3.6.0", "torch": "2.11.0", "gpu": "NVIDIA H200", "driver": "580", "host": "vm"}
    res = {
        "bench": "rmsnorm",
        "shape": "M=1",
        "case_index": 0,
        "variant": "triton",
        "status": status,
        "median_ms": median,
        "samples_ms": [median],
    }
    return JobOutcome(i, Side("run"), env=env, clocks={"before": {"clocks.sm": "1980"}}, results=[res])


def test_sessions_and_series(tmp_path: Path) -> None:
    conn = store.connect(tmp_path / "b.sqlite")
    for k, values in enumerate([[1.0, 1.2, 1.1], [2.0], [3.0]]):
        sid = store.new_session(conn, "run", f"s{k}", "abc123", ["tilescope", "bench"])
        for i, v in enumerate(values):
            store.add_outcome(conn, sid, _outcome(i, v))
    store.add_outcome(conn, sid, _outcome(9, 99.0, status="wrong"))  # a wrong result is never a data point
    cmp = store.new_session(conn, "compare", "", "abc123", [])
    store.add_outcome(conn, cmp, _outcome(0, 50.0))  # compare sessions are not history
    series = store.run_series(conn)
    ((key, points),) = series.items()
    assert key == ("rmsnorm", "M=1", "triton", "NVIDIA H200")
    assert [p["median_ms"] for p in points] == [1.1, 2.0, 3.0]
    assert points[0]["commit"] == "abc123" and points[0]["triton"] == "3.6.0"
    row = conn.execute("SELECT driver, clocks FROM processes LIMIT 1").fetchone()
    assert row[0] == "580" and "1980" in row[1]
