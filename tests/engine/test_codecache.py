"""The on-disk cache of rewritten kernels: fresh processes reuse it; stale or broken entries never run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

import tilescope
from tilescope.frontends.triton import codecache, rewrite
from tilescope.frontends.triton.runtime import TritonRuntime


@triton.jit
def softmax_rows(out_ptr, in_ptr, stride_in, stride_out, n_cols, BLOCK: tl.constexpr):
    # Triton's fused-softmax tutorial, one row per program
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride_in + offs, mask=offs < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * stride_out + offs, num / tl.sum(num, axis=0), mask=offs < n_cols)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(codecache.CACHE_ENV, str(tmp_path))
    return tmp_path


def _entries(folder):
    return sorted(p for p in folder.iterdir() if not p.name.startswith("."))


def test_a_fresh_runtime_runs_the_cached_code_without_rewriting(cache, monkeypatch):
    TritonRuntime().function(softmax_rows)  # what an earlier process left behind
    assert len(_entries(cache)) == 1

    class Refuse(rewrite._Rewriter):
        def visit_FunctionDef(self, node):
            assert node.name != "softmax_rows", "the kernel was rewritten again"
            return super().visit_FunctionDef(node)

    monkeypatch.setattr(rewrite, "_Rewriter", Refuse)  # Triton's own helpers (tl.max) may be rewritten
    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.standard_normal((37, 200)).astype(np.float32))
    out = torch.full_like(x, float("nan"))
    tilescope.trace(softmax_rows)[(37,)](out, x, x.stride(0), out.stride(0), 200, BLOCK=256)
    np.testing.assert_allclose(out.numpy(), torch.softmax(x.double(), 1).numpy(), rtol=1e-6, atol=1e-7)


def test_a_broken_entry_is_rewritten_and_replaced(cache):
    TritonRuntime().function(softmax_rows)
    (entry,) = _entries(cache)
    entry.write_bytes(b"\x00not marshal data")
    fresh = TritonRuntime().function(softmax_rows)
    assert fresh.__code__.co_filename == softmax_rows.fn.__code__.co_filename
    assert codecache.load(entry.name) is not None  # replaced by a good one


def test_keys_change_with_source_place_and_file():
    src = "def k(x):\n    return x\n"
    keys = {
        codecache.key(src, "a.py", 1),
        codecache.key(src, "a.py", 2),  # moved down a line: line numbers are baked into the code
        codecache.key(src, "b.py", 1),
        codecache.key(src + "# edited\n", "a.py", 1),
    }
    assert len(keys) == 4
    assert codecache.key(src, "a.py", 1) == codecache.key(src, "a.py", 1)


def test_keys_change_with_either_rewriter_module(tmp_path, monkeypatch):
    """The rewritten code depends on rewrite.py and on its loop analysis (independent.py)."""
    src = "def k(x):\n    return x\n"
    here = Path(codecache.__file__).parent
    keys = set()
    for edited in (None, *codecache._REWRITER):
        for name in codecache._REWRITER:
            text = (here / name).read_bytes() + (b"# edited\n" if name == edited else b"")
            (tmp_path / name).write_bytes(text)
        monkeypatch.setattr(codecache, "__file__", str(tmp_path / "codecache.py"))
        codecache._salt.cache_clear()
        keys.add(codecache.key(src, "a.py", 1))
    codecache._salt.cache_clear()
    assert len(keys) == 1 + len(codecache._REWRITER)


def test_an_empty_cache_dir_turns_caching_off(tmp_path, monkeypatch):
    monkeypatch.setenv(codecache.CACHE_ENV, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert codecache.directory() is None
    TritonRuntime().function(softmax_rows)
    assert not any(tmp_path.iterdir())


def test_the_cached_code_is_the_rewritten_code(cache):
    first = TritonRuntime().function(softmax_rows).__code__
    again = TritonRuntime().function(softmax_rows).__code__  # loaded from disk
    assert first.co_code == again.co_code and first.co_consts == again.co_consts
    def_line = softmax_rows.fn.__code__.co_firstlineno + 1  # the line below the decorator
    assert first.co_firstlineno == again.co_firstlineno == def_line
