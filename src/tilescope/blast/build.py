"""Compile a corpus in one environment, in parallel worker processes, through the artifact cache.

A :class:`BuildSide` names the interpreter (a virtual environment), extra environment variables and
compile options. :func:`build_all` shards the jobs of several sides over ``jobs`` concurrent worker
processes; a shard whose worker dies has its unanswered jobs retried one process each, so a compiler
crash is reported for the kernel that caused it and no other.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilescope.bench.procs import SOURCE_ROOT, python_of, worker_argv
from tilescope.bench.worker import PREFIX

#: wall-clock limit of one worker process, seconds
WORKER_TIMEOUT_S = 1800


@dataclass(frozen=True)
class BuildSide:
    """How one side of the comparison compiles: interpreter, environment variables, compile options."""

    name: str
    env: str
    variables: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Job:
    """One kernel compilation: benchmark ``bench``'s ``spec``-th compile spec for ``target``."""

    bench: str
    spec: int
    kernel: str
    target: str

    @property
    def id(self) -> str:
        """A stable identifier of the job."""
        return f"{self.bench}#{self.spec}@{self.target}"


@dataclass
class Outcome:
    """A job's result on one side: the cache key of its artifacts, or why it failed."""

    status: str
    key: str = ""
    message: str = ""
    cached: bool = False


def _run_worker(
    python: str, side: BuildSide, modules: list[str], jobs: Sequence[Job], cache: Path
) -> tuple[dict[str, Outcome], str]:
    env = dict(os.environ)
    env.update(side.variables)
    env["PYTHONPATH"] = os.pathsep.join([str(SOURCE_ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["TRITON_ALWAYS_COMPILE"] = "1"  # Triton's own cache would skip ptxas, and with it the -v log
    request = {
        "modules": modules,
        "options": side.options,
        "cache": str(cache),
        "jobs": [{"id": j.id, "bench": j.bench, "spec": j.spec, "target": j.target} for j in jobs],
    }
    with tempfile.TemporaryDirectory(prefix="tilescope-blast-") as triton_cache:
        env["TRITON_CACHE_DIR"] = triton_cache
        try:
            proc = subprocess.run(
                worker_argv(python, SOURCE_ROOT, "tilescope.blast.worker"),
                input=json.dumps(request) + "\n",
                capture_output=True,
                text=True,
                env=env,
                timeout=WORKER_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return {}, f"worker timed out after {WORKER_TIMEOUT_S} s"
    answers = {}
    for line in proc.stdout.splitlines():
        if line.startswith(PREFIX):
            reply = json.loads(line[len(PREFIX) :])
            answers[reply["id"]] = Outcome(reply["status"], reply["key"], reply["message"], reply["cached"])
    tail = proc.stderr.strip().splitlines()[-1:] if proc.stderr.strip() else []
    problem = "" if proc.returncode == 0 else f"worker exited with status {proc.returncode}: {' '.join(tail)}"
    return answers, problem


def build_all(
    sides: Sequence[BuildSide], modules: list[str], jobs: Sequence[Job], cache: Path, parallel: int
) -> dict[str, dict[str, Outcome]]:
    """Compile every job on every side; returns side name -> job id -> outcome."""
    results: dict[str, dict[str, Outcome]] = {s.name: {} for s in sides}
    tasks = []
    for side in sides:
        try:
            python = python_of(side.env)
        except FileNotFoundError as exc:
            results[side.name] = {
                j.id: Outcome("error", message=f"environment unreachable: {exc}") for j in jobs
            }
            continue
        per_side = max(1, parallel // max(1, len(sides)))
        shards = [list(jobs[i::per_side]) for i in range(min(per_side, len(jobs)))]
        tasks += [(python, side, shard) for shard in shards if shard]

    def run(task: tuple[str, BuildSide, list[Job]]) -> None:
        python, side, shard = task
        answers, problem = _run_worker(python, side, modules, shard, cache)
        if not answers:  # nothing compiled at all: the environment or the corpus is broken, not a kernel
            answers = {j.id: Outcome("error", message=problem or "worker gave no answer") for j in shard}
        for job in shard:
            if job.id in answers:
                results[side.name][job.id] = answers[job.id]
            elif len(shard) > 1:  # the worker died part-way: retry alone to find the culprit
                run((python, side, [job]))
            else:
                results[side.name][job.id] = Outcome("error", message=problem or "worker gave no answer")

    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        list(pool.map(run, tasks))
    return results


def load_artifacts(cache: Path, key: str) -> dict[str, Any]:
    """The cached artifacts (stages, resources, metadata) of one compiled job."""
    return json.loads((cache / f"{key}.json").read_text())
