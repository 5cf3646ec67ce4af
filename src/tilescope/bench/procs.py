"""Run benchmark workers as separate processes, one at a time on the GPU, in a given order.

A :class:`Side` says how to start a worker: which Python (a virtual environment), which source
tree on ``PYTHONPATH`` (this checkout, or another commit unpacked with ``git archive``), which extra
environment variables (an option set) and which work scale. :func:`run_schedule` starts up to
``prefetch`` workers ahead so their imports overlap, but lets exactly one measure at a time, in
schedule order. A worker that cannot start or dies is reported as a failed job; the rest still run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilescope.bench.paths import cache_dir
from tilescope.bench.worker import PREFIX

#: this checkout's ``src`` directory (what a worker imports tilescope from by default)
SOURCE_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Side:
    """One side of a comparison: how its worker processes are started."""

    name: str
    python: str = sys.executable
    source: Path = SOURCE_ROOT
    env: dict[str, str] = field(default_factory=dict)
    scale: float = 1.0


@dataclass
class JobOutcome:
    """What one worker process reported: its environment, results, or why it failed."""

    index: int
    side: Side
    env: dict[str, Any] = field(default_factory=dict)
    roofline: dict[str, Any] = field(default_factory=dict)
    clocks: dict[str, Any] = field(default_factory=dict)
    results: list[dict[str, Any]] = field(default_factory=list)
    failure: str = ""


def python_of(env: str) -> str:
    """The interpreter of ``env``: a virtual environment directory or a Python executable path."""
    path = Path(env)
    candidate = path / "bin" / "python" if path.is_dir() else path
    if not candidate.exists():
        raise FileNotFoundError(f"environment {env!r} has no Python interpreter ({candidate} does not exist)")
    return str(candidate)


def source_of_commit(commit: str, repo: Path | None = None) -> Path:
    """The ``src`` tree of ``commit`` unpacked (once, cached) with ``git archive``; raises on a bad commit."""
    repo = repo or Path.cwd()
    sha = subprocess.run(
        ["git", "rev-parse", "--verify", f"{commit}^{{commit}}"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    if sha.returncode != 0:
        raise ValueError(f"not a commit in {repo}: {commit!r}")
    dest = cache_dir() / "commits" / sha.stdout.strip()
    if not (dest / "src").is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", "--format=tar", sha.stdout.strip(), "src"],
            cwd=repo,
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest / "src"


#: Runs a worker module with tilescope's source tree as a bare namespace: the top-level
#: ``tilescope/__init__.py`` imports the CPU engine and its dependencies, which a worker never uses
#: and another environment (an older Triton, a GPU box) need not have installed.
BOOTSTRAP = (
    "import runpy, sys, types\n"
    "root, module = sys.argv[1], sys.argv[2]\n"
    "del sys.argv[1:3]\n"
    "pkg = types.ModuleType('tilescope')\n"
    "pkg.__path__ = [root + '/tilescope']\n"
    "sys.modules['tilescope'] = pkg\n"
    "runpy.run_module(module, run_name='__main__', alter_sys=True)\n"
)


def worker_argv(python: str, source: Path, module: str) -> list[str]:
    """The command that runs ``module`` (``python -m`` style) from ``source`` without the package's init."""
    return [python, "-c", BOOTSTRAP, str(source), module]


class _Worker:
    """A started worker process and its stderr log."""

    def __init__(self, python: str, side: Side, request: dict[str, Any], timeout_s: float) -> None:
        env = dict(os.environ)
        env.update(side.env)
        env["PYTHONPATH"] = os.pathsep.join([str(side.source), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["PYTHONUNBUFFERED"] = "1"
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            worker_argv(python, side.source, "tilescope.bench.worker"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({**request, "scale": side.scale}) + "\n")
        self.proc.stdin.flush()
        self.timer = threading.Timer(timeout_s, self.proc.kill)
        self.timer.start()

    def messages(self) -> Iterator[dict[str, Any]]:
        """Protocol messages until the worker's stdout closes."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(PREFIX):
                yield json.loads(line[len(PREFIX) :])

    def go(self) -> None:
        """Let the worker start measuring."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def finish(self) -> str:
        """Wait for exit; return '' on success, else the exit status and the end of stderr."""
        code = self.proc.wait()
        self.timer.cancel()
        self.log.seek(0)
        tail = self.log.read()[-2000:]
        self.log.close()
        if code == 0:
            return ""
        return f"worker exited with status {code}: {tail.strip()[-800:] or '(no output)'}"


def run_schedule(
    schedule: Sequence[tuple[Side, dict[str, Any]]], *, prefetch: int = 1, timeout_s: float = 900.0
) -> Iterator[JobOutcome]:
    """Run each (side, request) of ``schedule`` in its own process, measuring strictly in order."""
    pending: deque[tuple[int, Side, _Worker | str]] = deque()
    upcoming = iter(enumerate(schedule))

    def start_next() -> None:
        nxt = next(upcoming, None)
        if nxt is None:
            return
        i, (side, request) = nxt
        try:
            pending.append((i, side, _Worker(python_of(side.python), side, request, timeout_s)))
        except OSError as exc:
            pending.append((i, side, f"cannot start {side.name}: {exc}"))

    for _ in range(prefetch + 1):
        start_next()
    try:
        while pending:
            i, side, worker = pending.popleft()
            outcome = JobOutcome(i, side)
            if isinstance(worker, str):
                outcome.failure = worker
            else:
                _drive(worker, outcome)
            start_next()
            yield outcome
    finally:  # the caller stopped early: workers started ahead must not linger
        for _, _, worker in pending:
            if not isinstance(worker, str):
                worker.proc.kill()
                worker.finish()


def _drive(worker: _Worker, outcome: JobOutcome) -> None:
    for msg in worker.messages():
        if "ready" in msg:
            outcome.env = msg["ready"]
            worker.go()
        elif "roofline" in msg:
            outcome.roofline = msg["roofline"]
            outcome.clocks["before"] = msg.get("clocks_before", {})
        elif "result" in msg:
            outcome.results.append(msg["result"])
        elif msg.get("done"):
            outcome.clocks["after"] = msg.get("clocks_after", {})
    failure = worker.finish()
    if failure:
        outcome.failure = failure
