"""The pytest plug-in, driven through pytester: inert without the option, failing the right test with it."""

from __future__ import annotations

import textwrap

pytest_plugins = ["pytester"]

TESTS = textwrap.dedent("""
    import numpy as np
    import triton
    import triton.language as tl

    @triton.jit
    def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, MASKED: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n if MASKED else None
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)

    def test_unmasked():
        copy_kernel[(1,)](np.ones(100, np.float32), np.zeros(100, np.float32), 100, BLOCK=128, MASKED=False)

    def test_masked():
        x, out = np.ones(100, np.float32), np.zeros(100, np.float32)
        copy_kernel[(1,)](x, out, 100, BLOCK=128, MASKED=True)
        assert (out == 1).all()

    def test_plain():
        assert triton.jit is not None
""")


def test_sanitizer_fails_only_the_test_with_a_finding(pytester):
    pytester.makepyfile(test_kernels=TESTS)
    result = pytester.runpytest_subprocess("--tilescope=sanitizer", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=2)
    result.stdout.fnmatch_lines(["*test_unmasked*", "*tilescope: 2 error findings*",
                                 "*out-of-bounds load*", "*tl.load(x_ptr + offs*"])


def test_inert_without_the_option(pytester):
    pytester.makepyfile(test_inert="""
        import triton.runtime.jit as jit
        def test_untouched():
            assert jit.JITFunction.run.__module__ == "triton.runtime.jit"
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_unknown_client_is_a_usage_error(pytester):
    pytester.makepyfile(test_x="def test_x(): pass")
    result = pytester.runpytest_subprocess("--tilescope=nosuch", "-p", "no:cacheprovider")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*unknown tilescope client 'nosuch'*known clients*"])



def test_options_that_need_tilescope_are_refused_without_it(pytester):
    pytester.makepyfile(test_x="def test_x(): pass")
    result = pytester.runpytest_subprocess("--tilescope-bounds=view", "-p", "no:cacheprovider")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--tilescope-bounds has no effect without --tilescope=CLIENTS*"])
    with_it = pytester.runpytest_subprocess("--tilescope=sanitizer", "--tilescope-bounds=view", "-p",
                                            "no:cacheprovider")
    with_it.assert_outcomes(passed=1)

SPLIT_TESTS = textwrap.dedent("""
    import numpy as np
    import pytest
    import triton
    import triton.language as tl

    @triton.jit
    def scale_rows(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols <= n_cols)  # off by one: reads the next row
        tl.store(out_ptr + row * n_cols + cols, x * 2.0, mask=cols < n_cols)

    @pytest.mark.parametrize("rows,cols", [(3, 30), (5, 17), (2, 64), (7, 9), (4, 33), (6, 50)])
    def test_scale(rows, cols):
        x = np.random.default_rng(rows * cols).standard_normal((rows, cols)).astype(np.float32)
        out = np.zeros_like(x)
        scale_rows[(rows,)](x, out, rows, cols, BLOCK=triton.next_power_of_2(cols + 1))
        np.testing.assert_allclose(out, 2 * x)
""")


def _findings(documents):
    return {d["client"]: [(f["kind"], f["line"], f["message"], f["program_ids"], f["details"]["lanes"],
                           f["details"]["first_element"], f["details"]["launches"]) for f in d["findings"]]
            for d in documents}  # fmt: skip


def test_xdist_workers_merge_to_the_single_process_report(pytester):
    import json

    pytester.makepyfile(test_split=SPLIT_TESTS)
    args = ("--tilescope=sanitizer", "-p", "no:cacheprovider")
    one = pytester.runpytest_subprocess(*args, "--tilescope-report=one.json")
    two = pytester.runpytest_subprocess(*args, "-n", "2", "--tilescope-report=two.json")
    one.assert_outcomes(failed=6)  # each test's kernel reads past its tensor
    two.assert_outcomes(failed=6)
    single = json.loads((pytester.path / "one.json").read_text())
    split = json.loads((pytester.path / "two.json").read_text())
    assert _findings(single) == _findings(split)
    (finding,) = single[0]["findings"]
    assert finding["details"]["launches"] == 6 and finding["kind"] == "out-of-bounds load"
    tests = sorted(f"test_split.py::test_scale[{rows}-{cols}]"
                   for rows, cols in [(3, 30), (5, 17), (2, 64), (7, 9), (4, 33), (6, 50)])
    assert finding["details"]["tests"] == split[0]["findings"][0]["details"]["tests"] == tests
    two.stdout.fnmatch_lines(["*tilescope sanitizer: 1 finding in this session*"])


def test_tilescope_run_merges_xdist_workers(pytester):
    import json
    import sys

    pytester.makepyfile(test_split=SPLIT_TESTS)
    run = [sys.executable, "-m", "tilescope.cli", "run", "-c", "sanitizer", "--json", "--no-fail"]
    base = [*run, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_split.py"]
    one = pytester.run(*base)
    two = pytester.run(*base, "-n", "2")
    assert one.ret == two.ret == 0
    single, split = json.loads(one.stdout.str()), json.loads(two.stdout.str())
    assert _findings(single["reports"]) == _findings(split["reports"])
    assert single["reports"][0]["findings"][0]["details"]["launches"] == 6
