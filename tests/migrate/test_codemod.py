"""The codemod's output, text for text: descriptors where provable, compat elsewhere, notes for the rest."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tilescope.cli import main
from tilescope.migrate.codemod import migrate_source

CORPUS = sorted((Path(__file__).parent.parent / "blockptr_corpus").glob("*.py"))

MATMUL = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def kernel(a_ptr, c_ptr, M, K, stride_am, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
        tl.static_assert(BLOCK_K >= 16, "tile")
        # the A tile walks along K
        a_bp = tl.make_block_ptr(a_ptr, (M, K), (stride_am, 1), (0, 0), (BLOCK_M, BLOCK_K), (1, 0))
        acc = tl.zeros((BLOCK_M, BLOCK_K), tl.float32)
        for k in range(0, K, BLOCK_K):
            acc += tl.load(a_bp, boundary_check=(0, 1))  # zero padded
            a_bp = tl.advance(a_bp, (0, BLOCK_K))
        c_bp = tl.make_block_ptr(c_ptr, (M, BLOCK_K), (BLOCK_K, 1), (0, 0), (BLOCK_M, BLOCK_K), (1, 0))
        tl.store(c_bp, acc, boundary_check=(0,))
    """)

MATMUL_MIGRATED = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def kernel(a_ptr, c_ptr, M, K, stride_am, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
        tl.static_assert(BLOCK_K >= 16, "tile")
        # the A tile walks along K
        a_desc = tl.make_tensor_descriptor(a_ptr, (M, K), (stride_am, 1), (BLOCK_M, BLOCK_K))
        a_off = (0, 0)
        acc = tl.zeros((BLOCK_M, BLOCK_K), tl.float32)
        for k in range(0, K, BLOCK_K):
            acc += a_desc.load(a_off)  # zero padded
            a_off = (a_off[0], a_off[1] + BLOCK_K)
        c_desc = tl.make_tensor_descriptor(c_ptr, (M, BLOCK_K), (BLOCK_K, 1), (BLOCK_M, BLOCK_K))
        c_off = (0, 0)
        c_desc.store(c_off, acc)
    """)

HELPER = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def _load(p):
        return tl.load(p, boundary_check=(0,))


    @triton.jit
    def kernel(x_ptr, N, BLOCK: tl.constexpr):
        p = tl.make_block_ptr(x_ptr, (N,), (1,), (0,), (BLOCK,), (0,))
        x = _load(p)
        q = p.advance((BLOCK,))
        tl.store(q, x)
    """)

HELPER_MIGRATED = textwrap.dedent("""\
    import tilescope.compat as tlc
    import triton
    import triton.language as tl


    @triton.jit
    def _load(p):
        return tlc.load(p, boundary_check=(0,))


    @triton.jit
    def kernel(x_ptr, N, BLOCK: tl.constexpr):
        p = tlc.make_block_ptr(x_ptr, (N,), (1,), (0,), (BLOCK,), (0,))
        x = _load(p)
        q = tlc.advance(p, (BLOCK,))
        tlc.store(q, x)
    """)


def test_descriptor_golden():
    result = migrate_source(MATMUL, "k.py")
    assert result.migrated == MATMUL_MIGRATED
    assert result.counts() == {"descriptor": 5, "compat": 0, "unchanged": 0}


def test_compat_golden_helper_and_method_advance():
    result = migrate_source(HELPER, "k.py")
    assert result.migrated == HELPER_MIGRATED
    reasons = {s.kind: s.reason for s in result.sites}
    assert reasons["make_block_ptr"] == "`p` is passed to `_load`"
    assert [s.line for s in result.sites] == [7, 12, 14, 15]


@pytest.mark.parametrize(
    "change, reason",
    [
        ("(stride_am, 1), (0, 0), (BLOCK_M, BLOCK_K)", "is not provably >= 16 bytes"),
        ("(stride_am, 1), (0, 0), (BLOCK_M, 8)", "under 16 bytes"),
        ("(1, stride_am), (0, 0), (BLOCK_M, BLOCK_K)", "last stride `stride_am` is not the literal 1"),
    ],
)
def test_compat_reasons(change, reason):
    source = MATMUL.replace('tl.static_assert(BLOCK_K >= 16, "tile")', "pass")
    source = source.replace("(stride_am, 1), (0, 0), (BLOCK_M, BLOCK_K)", change)
    site = migrate_source(source, "k.py").sites[0]
    assert site.became == "compat" and reason in site.reason, site.reason


def test_unchecked_dimension_and_pointer_arithmetic_stay_compat():
    source = MATMUL.replace("boundary_check=(0, 1)", "boundary_check=(0,)")
    assert "leaves dimension 1 unchecked" in migrate_source(source, "k.py").sites[0].reason
    source = MATMUL.replace("tl.make_block_ptr(a_ptr,", "tl.make_block_ptr(a_ptr + 1,")
    assert "pointer arithmetic" in migrate_source(source, "k.py").sites[0].reason


def test_nan_padding_goes_into_the_descriptor():
    source = MATMUL.replace("boundary_check=(0, 1))", 'boundary_check=(0, 1), padding_option="nan")')
    assert 'padding_option="nan")' in migrate_source(source, "k.py").migrated.splitlines()[8]


def test_unknown_advance_is_left_with_a_note():
    source = HELPER + "\n\n@triton.jit\ndef other(thing):\n    return thing.advance((1,))\n"
    result = migrate_source(source, "k.py")
    assert "thing.advance((1,))" in result.migrated
    assert result.notes == [
        "k.py:20: left `thing.advance((1,))` unchanged: can't tell whether `thing` is a block pointer"
    ]


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus_is_idempotent(path):
    first = migrate_source(path.read_text(), str(path))
    assert first.sites and first.changed and not first.error
    second = migrate_source(first.migrated, str(path))
    assert second.sites == [] and second.migrated == first.migrated


def test_cli_reports_syntax_error_and_keeps_going(tmp_path, capsys):
    (tmp_path / "a_broken.py").write_text("def f(:\n    pass\n")
    (tmp_path / "b_good.py").write_text(HELPER)
    assert main(["migrate", str(tmp_path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    broken, good = report["files"]
    assert broken["error"].startswith(f"{tmp_path / 'a_broken.py'}:1:") and "syntax error" in broken["error"]
    assert good["counts"] == {"descriptor": 0, "compat": 4, "unchanged": 0}


def test_cli_diff_then_write_then_nothing_left(tmp_path, capsys):
    target = tmp_path / "k.py"
    target.write_text(MATMUL)
    assert main(["migrate", str(target)]) == 0
    out = capsys.readouterr().out
    assert "+    a_desc = tl.make_tensor_descriptor(" in out and target.read_text() == MATMUL
    assert "k.py: 5 sites (5 descriptor, 0 compat, 0 unchanged)" in out
    assert main(["migrate", str(target), "--write"]) == 0
    assert target.read_text() == MATMUL_MIGRATED
    capsys.readouterr()
    assert main(["migrate", str(target)]) == 0
    assert "k.py: 0 sites" in capsys.readouterr().out
