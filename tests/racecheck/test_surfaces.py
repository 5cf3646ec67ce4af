"""racecheck through the surfaces users touch: ``tilescope run -c racecheck`` and ``pytest --tilescope``."""

from __future__ import annotations

import subprocess
import sys
import textwrap

pytest_plugins = ["pytester"]

KERNELS = textwrap.dedent("""
    import numpy as np
    import triton
    import triton.language as tl

    @triton.jit
    def partial_sums(x_ptr, out_ptr, BLOCK: tl.constexpr, SHARED: tl.constexpr):
        pid = tl.program_id(0)
        total = tl.sum(tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK)))
        tl.store(out_ptr + (0 if SHARED else pid), total)
""")

TESTS = KERNELS + textwrap.dedent("""
    def test_each_program_its_own_slot():
        x, out = np.ones(256, np.float32), np.zeros(4, np.float32)
        partial_sums[(4,)](x, out, BLOCK=64, SHARED=False)
        assert (out == 64).all()

    def test_every_program_the_same_slot():
        partial_sums[(4,)](np.ones(256, np.float32), np.zeros(4, np.float32), BLOCK=64, SHARED=True)
""")


def test_run_reports_the_race_and_sets_the_exit_status(tmp_path):
    launch = "partial_sums[(4,)](np.ones(256, np.float32), np.zeros(1, np.float32), BLOCK=64, SHARED=True)\n"
    (tmp_path / "sums.py").write_text(KERNELS + launch)
    command = [sys.executable, "-m", "tilescope.cli", "run", "-c", "racecheck,sanitizer", "sums.py"]
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    assert "write-after-write race on `out_ptr`" in run.stderr and "sanitizer: 0 findings" in run.stderr


def test_plugin_fails_only_the_racy_test(pytester):
    pytester.makepyfile(test_sums=TESTS)
    result = pytester.runpytest_subprocess("--tilescope=racecheck", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*test_every_program_the_same_slot*", "*write-after-write race*"])
