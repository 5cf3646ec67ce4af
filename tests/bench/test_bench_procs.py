"""Worker processes and A/B comparison, end to end, with a stand-in worker (no GPU needed).

The stand-in follows the worker protocol and reports a latency of ``scale`` times 1 ms with 0.3 %
noise, so a ``--head-scale 1.05`` comparison must be a regression and an A/A one must not.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tilescope.bench import compare, procs

FAKE_WORKER = textwrap.dedent("""
    import json, os, random, sys
    PREFIX = "@@tilescope "
    req = json.loads(sys.stdin.readline())
    if req.get("die_before_ready"):
        sys.stderr.write("ImportError: no module named torch\\n")
        sys.exit(3)
    print(PREFIX + json.dumps({"ready": {"gpu": "fake", "pid": os.getpid()}}), flush=True)
    if sys.stdin.readline().strip() != "go":
        sys.exit(0)
    rng = random.Random(os.getpid())
    for name in req["benchmarks"]:
        status = "wrong" if name == "bad" else "ok"
        med = req["scale"] * (1 + rng.gauss(0, 0.003))
        print(PREFIX + json.dumps({"result": {"bench": name, "case_index": 0, "variant": "triton",
              "status": status, "median_ms": med if status == "ok" else None, "message": ""}}), flush=True)
    print(PREFIX + json.dumps({"done": True}), flush=True)
""")


@pytest.fixture
def fake_source(tmp_path: Path) -> Path:
    pkg = tmp_path / "tilescope" / "bench"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "worker.py").write_text(FAKE_WORKER)
    return tmp_path


def test_interleaving_holds_every_side_once_per_block() -> None:
    a, b, c = procs.Side("a"), procs.Side("b"), procs.Side("c")
    order = compare.interleaved([a, b, c], 20, seed=1)
    assert len(order) == 60
    for i in range(0, 60, 3):
        assert {s.name for s in order[i : i + 3]} == {"a", "b", "c"}
    assert len({tuple(s.name for s in order[i : i + 3]) for i in range(0, 60, 3)}) > 1  # shuffled


def test_ab_comparison_end_to_end(fake_source: Path) -> None:
    base = procs.Side("base", sys.executable, fake_source)
    head = procs.Side("head", sys.executable, fake_source, scale=1.05)
    twin = procs.Side("twin", sys.executable, fake_source)
    req = {"benchmarks": ["k1", "bad"]}
    schedule = [(s, req) for s in compare.interleaved([base, head, twin], 8, seed=0)]
    outcomes = list(procs.run_schedule(schedule, prefetch=2))
    assert [o.index for o in outcomes] == list(range(24))  # measured strictly in schedule order
    assert all(o.env["gpu"] == "fake" and not o.failure for o in outcomes)
    medians, failures = compare.per_process_medians(outcomes)
    assert set(failures) == {"base:bad", "head:bad", "twin:bad"}  # the wrong kernel is reported per side
    (reg,) = compare.verdicts(medians, "base", "head", threshold=0.02, alpha=0.01)
    assert reg.bench == "k1" and reg.comparison.verdict == "regression"
    assert 1.03 < reg.comparison.ratio_lo <= reg.comparison.ratio <= reg.comparison.ratio_hi < 1.07
    (same,) = compare.verdicts(medians, "base", "twin", threshold=0.02, alpha=0.01)
    assert same.comparison.verdict == "no change"


def test_unreachable_environment_and_dying_worker_are_reported(fake_source: Path) -> None:
    good = procs.Side("good", sys.executable, fake_source)
    missing = procs.Side("missing", "/nonexistent/venv", fake_source)
    schedule = [
        (good, {"benchmarks": ["k1"]}),
        (missing, {"benchmarks": ["k1"]}),
        (good, {"benchmarks": ["k1"], "die_before_ready": True}),
        (good, {"benchmarks": ["k1"]}),
    ]
    outcomes = list(procs.run_schedule(schedule, prefetch=1))
    assert not outcomes[0].failure and outcomes[0].results
    assert "has no Python interpreter" in outcomes[1].failure
    assert "status 3" in outcomes[2].failure and "no module named torch" in outcomes[2].failure
    assert not outcomes[3].failure and outcomes[3].results  # the rest still ran


def test_stopping_early_leaves_no_worker_behind(fake_source: Path) -> None:
    side = procs.Side("s", sys.executable, fake_source)
    run = procs.run_schedule([(side, {"benchmarks": ["k1"]})] * 5, prefetch=3)
    first = next(run)
    assert first.results
    run.close()  # the three started ahead are killed, not left waiting for "go"


def test_python_of_resolves_venvs_and_rejects_missing(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").write_text("")
    assert procs.python_of(str(tmp_path)) == str(tmp_path / "bin" / "python")
    with pytest.raises(FileNotFoundError, match="no Python interpreter"):
        procs.python_of(str(tmp_path / "nope"))


def test_source_of_commit_unpacks_that_commits_src(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    (repo / "src" / "tilescope").mkdir(parents=True)
    (repo / "src" / "tilescope" / "marker.py").write_text("VERSION = 1\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    first = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    (repo / "src" / "tilescope" / "marker.py").write_text("VERSION = 2\n")
    subprocess.run([*git, "commit", "-q", "-am", "two"], check=True)
    src = procs.source_of_commit(first, repo)
    assert (src / "tilescope" / "marker.py").read_text() == "VERSION = 1\n"
    assert procs.source_of_commit(first[:8], repo) == src  # cached under the full hash
    with pytest.raises(ValueError, match="not a commit"):
        procs.source_of_commit("no-such-rev", repo)
