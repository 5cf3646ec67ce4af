"""Ctrl-C during a launch leaves a usable process, or a process that exits: never a hung one.

In-process: ``ctrl_c_trials.py`` interrupts launches of every kind with real SIGINTs at random
moments and checks the process afterwards (no launch installed, no program thread running on,
launchers that work again). Whole runs: ``tilescope run`` of a script in a long launch gets a SIGINT
at a random moment and must exit with status 130.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

TRIALS = Path(__file__).with_name("ctrl_c_trials.py")


def _trials(count: int, seed: int, folder: Path) -> dict:
    run = subprocess.run([sys.executable, str(TRIALS), str(count), str(seed), str(folder)],
                         capture_output=True, text=True, timeout=3600)  # fmt: skip
    assert run.stdout.strip(), run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["failures"] == [], result["failures"][:5]
    assert run.returncode == 0, run.stderr[-3000:]
    assert result["interrupted"] >= 1  # the signals land inside launches (their moment is drawn per launch)
    return result


def test_a_few_interrupted_launches_leave_a_usable_process(tmp_path):
    _trials(10, seed=0, folder=tmp_path)


@pytest.mark.slow
def test_five_hundred_interrupted_launches_leave_a_usable_process(tmp_path):
    result = _trials(500, seed=1, folder=tmp_path)
    assert result["trials"] == 500


SCRIPT = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def repeat_rows(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        acc = tl.zeros((BLOCK,), tl.float32)
        for _ in range(0, row % 5 + 1):
            acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        tl.store(out_ptr + row * n_cols + cols, acc, mask=cols < n_cols)


    x = torch.randn(20000, 40)
    out = torch.empty_like(x)
    repeat_rows[(8,)](x, out, 40, BLOCK=64)
    print("launching", flush=True)
    while True:  # only a Ctrl-C ends it (warm sanitizer launches are fast: a fixed count can end first)
        repeat_rows[(20000,)](x, out, 40, BLOCK=64)
""")


def _default_ctrl_c() -> None:
    """In the child: Ctrl-C as a terminal delivers it (not ignored, not blocked), whatever the test
    process inherited or a library in it set."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_a_run(folder: Path, rng: random.Random, clients: str) -> None:
    (folder / "long.py").write_text(SCRIPT)
    command = [sys.executable, "-m", "tilescope.cli", "run", "-c", clients, "long.py"]
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}  # a hung child shows its threads' stacks (SIGABRT below)
    proc = subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, preexec_fn=_default_ctrl_c)  # fmt: skip
    try:
        assert proc.stdout.readline().strip() == "launching", proc.stderr.read()
        time.sleep(rng.uniform(0.0, 1.0))
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=120)  # a hung process fails here
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            _, err = proc.communicate(timeout=30)
            pytest.fail(f"tilescope run did not exit within 120 s of Ctrl-C; its stacks:\n{err[-6000:]}")
    finally:
        proc.kill()
    assert proc.returncode == 130, err[-3000:]
    assert "Traceback" not in err, err[-3000:]


def test_tilescope_run_exits_on_ctrl_c(tmp_path):
    _interrupt_a_run(tmp_path, random.Random(0), "sanitizer")


@pytest.mark.slow
def test_tilescope_run_always_exits_on_ctrl_c(tmp_path):
    rng = random.Random(2)
    for trial in range(20):
        folder = tmp_path / str(trial)
        folder.mkdir()
        _interrupt_a_run(folder, rng, rng.choice(["sanitizer", "tracer", "sanitizer,tracer"]))


LOST = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs))


    class Handle:
        def __del__(self):  # where a Ctrl-C lands when the collector runs a finalizer
            raise KeyboardInterrupt


    x = torch.randn(16)
    copy[(1,)](x, torch.empty(16), BLOCK=16)
    Handle()  # Python prints "Exception ignored" and drops the interrupt
    print("interrupt lost", flush=True)
    copy[(1,)](x, torch.empty(16), BLOCK=16)  # tilescope delivers it here
    print("ran on after Ctrl-C", flush=True)
""")


def test_a_ctrl_c_lost_in_a_finalizer_still_stops_tilescope_run(tmp_path):
    (tmp_path / "lost.py").write_text(LOST)
    command = [sys.executable, "-m", "tilescope.cli", "run", "lost.py"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "interrupt lost" in done.stdout, done.stderr
    assert "ran on after Ctrl-C" not in done.stdout
    assert done.returncode == 130, done.stderr


CAUGHT = SCRIPT.replace(
    "while True:  # only a Ctrl-C ends it (warm sanitizer launches are fast: a fixed count can end first)\n"
    "    repeat_rows[(20000,)](x, out, 40, BLOCK=64)\n",
    "while True:  # a script that swallows Ctrl-C and goes on\n"
    "    try:\n        repeat_rows[(20000,)](x, out, 40, BLOCK=64)\n"
    "    except KeyboardInterrupt:\n        pass\n",
)


@pytest.mark.slow  # waits out the 20 s grace
def test_tilescope_run_exits_when_the_script_swallows_ctrl_c(tmp_path):
    assert CAUGHT != SCRIPT
    (tmp_path / "caught.py").write_text(CAUGHT)
    command = [sys.executable, "-m", "tilescope.cli", "run", "caught.py"]
    proc = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "launching", proc.stderr.read()
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, err[-3000:]
    assert "did not stop within 20 s of Ctrl-C" in err
