"""The SQLite results database: sessions (one command), processes (one worker each) and results.

Every result keeps what it was measured on (commit, Triton and torch versions, GPU, driver,
clocks before and after), so a later ``bench history`` can tell a code change from a new driver.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tilescope.bench.procs import JobOutcome

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
  id INTEGER PRIMARY KEY, started TEXT NOT NULL, kind TEXT NOT NULL, label TEXT, git_commit TEXT, argv TEXT
);
CREATE TABLE IF NOT EXISTS processes (
  id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id), side TEXT, idx INTEGER,
  triton TEXT, torch TEXT, cuda TEXT, gpu TEXT, driver TEXT, host TEXT, env TEXT, clocks TEXT, roofline TEXT,
  failure TEXT
);
CREATE TABLE IF NOT EXISTS results (
  id INTEGER PRIMARY KEY, process_id INTEGER NOT NULL REFERENCES processes(id), bench TEXT, shape TEXT,
  case_index INTEGER, variant TEXT, status TEXT, error REAL, message TEXT, median_ms REAL, p10_ms REAL,
  p90_ms REAL, reps INTEGER,
  launches_per_replay INTEGER, sets INTEGER, graph INTEGER, tflops REAL, gbps REAL, roof_fraction REAL,
  samples_ms TEXT
);
CREATE INDEX IF NOT EXISTS results_key ON results(bench, shape, variant);
"""

RESULT_COLUMNS = (
    "bench",
    "shape",
    "case_index",
    "variant",
    "status",
    "error",
    "message",
    "median_ms",
    "p10_ms",
    "p90_ms",
    "reps",
    "launches_per_replay",
    "sets",
    "graph",
    "tflops",
    "gbps",
    "roof_fraction",
)


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) the results database at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path))
    conn.executescript(SCHEMA)
    return conn


def new_session(conn: sqlite3.Connection, kind: str, label: str, commit: str, argv: Iterable[str]) -> int:
    """Record the start of a ``run`` or ``compare`` session; returns its id."""
    cur = conn.execute(
        "INSERT INTO sessions (started, kind, label, git_commit, argv) VALUES (?, ?, ?, ?, ?)",
        (
            datetime.now(timezone.utc).isoformat(timespec="seconds"),
            kind,
            label,
            commit,
            json.dumps(list(argv)),
        ),
    )
    conn.commit()
    return int(cur.lastrowid or 0)


def add_outcome(conn: sqlite3.Connection, session: int, outcome: JobOutcome) -> None:
    """Store one worker process and everything it measured."""
    env = outcome.env
    cur = conn.execute(
        "INSERT INTO processes (session_id, side, idx, triton, torch, cuda, gpu, driver, host, env, clocks,"
        " roofline, failure) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session,
            outcome.side.name,
            outcome.index,
            env.get("triton"),
            env.get("torch"),
            env.get("cuda"),
            env.get("gpu"),
            env.get("driver"),
            env.get("host"),
            json.dumps(env),
            json.dumps(outcome.clocks),
            json.dumps(outcome.roofline),
            outcome.failure,
        ),
    )
    pid = cur.lastrowid
    for res in outcome.results:
        values = [res.get(c) for c in RESULT_COLUMNS]
        conn.execute(
            f"INSERT INTO results (process_id, {', '.join(RESULT_COLUMNS)}, samples_ms) "
            f"VALUES (?, {', '.join('?' * len(RESULT_COLUMNS))}, ?)",
            (pid, *values, json.dumps(res.get("samples_ms", []))),
        )
    conn.commit()


def run_series(
    conn: sqlite3.Connection, bench_glob: str = "*"
) -> dict[tuple[str, str, str, str], list[dict[str, Any]]]:
    """Per (bench, shape, variant, GPU): the median latency of each ``run`` session, oldest first."""
    rows = conn.execute(
        "SELECT r.bench, r.shape, r.variant, p.gpu, s.id, s.started, s.git_commit, p.triton, r.median_ms "
        "FROM results r JOIN processes p ON r.process_id = p.id JOIN sessions s ON p.session_id = s.id "
        "WHERE s.kind = 'run' AND r.status = 'ok' AND r.bench GLOB ? ORDER BY s.id",
        (bench_glob,),
    ).fetchall()
    grouped: dict[tuple[str, str, str, str], dict[int, dict[str, Any]]] = {}
    for bench, shape, variant, gpu, sid, started, commit, triton, med in rows:
        entry = grouped.setdefault((bench, shape, variant, gpu), {}).setdefault(
            sid, {"session": sid, "started": started, "commit": commit, "triton": triton, "values": []}
        )
        entry["values"].append(med)
    out = {}
    for key, sessions in grouped.items():
        series = []
        for entry in sessions.values():
            entry["median_ms"] = statistics.median(entry.pop("values"))
            series.append(entry)
        out[key] = series
    return out
