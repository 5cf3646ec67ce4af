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
