"""The rewriter reads a kernel's source from what Triton kept at decoration, not by tokenizing it again."""

from __future__ import annotations

import inspect

import triton
import triton.language as tl

from tilescope.frontends.triton import rewrite, version
from tilescope.frontends.triton.runtime import TritonRuntime


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def _nested():
    @triton.jit
    def inner(x_ptr):  # indented: the rewrite keeps its columns
        tl.store(x_ptr, tl.load(x_ptr) + 1)

    return inner


def test_triton_keeps_the_same_lines_inspect_reads():
    for kernel in (scale, _nested()):
        assert version.source_lines(kernel) == inspect.getsourcelines(kernel.fn)


def test_a_kernel_without_kept_lines_has_none():
    class Bare:
        fn = scale.fn

    assert version.source_lines(Bare()) is None


def test_the_rewrite_is_the_same_from_kept_or_read_lines(monkeypatch):
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", "")  # compile both: no cached code shared between them
    for kernel in (scale, _nested()):
        read = rewrite.rewrite(kernel.fn, TritonRuntime())
        kept = rewrite.rewrite(kernel.fn, TritonRuntime(), version.source_lines(kernel))
        assert kept.__code__.co_code == read.__code__.co_code
        assert list(kept.__code__.co_positions()) == list(read.__code__.co_positions())


def test_the_runtime_does_not_read_the_source_again(monkeypatch):
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", "")

    def refuse(fn):
        raise AssertionError(f"inspect.getsourcelines({fn.__name__}) called again")

    monkeypatch.setattr(inspect, "getsourcelines", refuse)
    assert TritonRuntime().function(scale).__tilescope_original__ is scale.fn
