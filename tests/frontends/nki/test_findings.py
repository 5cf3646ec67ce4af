"""Bugs in NKI kernels found at the user's NKI line: out-of-bounds DMAs and the NeuronCore's tile rules."""

from __future__ import annotations

import numpy as np
import pytest

import tilescope
from tests.frontends import markers
from tests.frontends.nki import buggy
from tilescope.engine.errors import KernelError, OutOfBoundsError


def bug_line(kernel, tag: str) -> int:
    """The line of NKI ``kernel`` marked ``# BUG <tag>``."""
    return markers.bug_line(kernel.fn, tag)


def sanitize(kernel, grid, *args):
    launcher = tilescope.trace(kernel, clients="sanitizer")
    launcher[grid](*args)
    (report,) = launcher.reports
    return report.findings


def by_line(findings):
    return {(f.kind, f.line): f for f in findings}


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_forgotten_tail_mask_is_found_at_the_load_and_the_store(rng):
    a = rng.standard_normal((300, 64)).astype(np.float32)
    found = by_line(sanitize(buggy.rmsnorm_unmasked, (1,), a))
    load = found.pop(("out-of-bounds load", bug_line(buggy.rmsnorm_unmasked, "load")))
    store = found.pop(("out-of-bounds store", bug_line(buggy.rmsnorm_unmasked, "store")))
    assert found == {}
    assert load.details["argument"] == "a_tensor"
    assert load.details["first_element"] == (300, 0)  # row 300 of 300 rows
    assert store.details["argument"] == "out"
    # rows 300..383 of the third 128-row tile, every column
    assert load.details["lanes"] == store.details["lanes"] == 84 * 64
    assert load.details["loops"][0]["iteration"] == 2


def test_off_by_one_row_offset_reads_one_row_past_the_end(rng):
    x = rng.standard_normal((256, 100)).astype(np.float32)
    (finding,) = sanitize(buggy.softmax_shifted, (2,), x)
    assert finding.kind == "out-of-bounds load"
    assert finding.line == bug_line(buggy.softmax_shifted, "load")
    assert finding.details["argument"] == "x"
    assert finding.details["first_element"] == (256, 0)
    assert finding.details["lanes"] == 100  # one row of the last program
    assert finding.program_ids == [(1, 0, 0)]


def test_unswapped_transpose_store_writes_outside_the_output(rng):
    x = rng.standard_normal((384, 128)).astype(np.float32)  # out is (128, 384)
    (finding,) = sanitize(buggy.transpose_unswapped, (3, 1), x)
    assert finding.kind == "out-of-bounds store"
    assert finding.line == bug_line(buggy.transpose_unswapped, "store")
    assert finding.details["argument"] == "out"
    assert finding.details["programs"] == 2  # block rows 1 and 2 land past out's 128 rows


def test_k_loop_rounded_up_reads_past_the_operands(rng):
    lhsT = rng.standard_normal((320, 128)).astype(np.float32)
    rhs = rng.standard_normal((320, 256)).astype(np.float32)
    findings = sanitize(buggy.matmul_k_overrun, (1,), lhsT, rhs)
    lines = {(f.kind, f.details["argument"]): f.line for f in findings}
    line = bug_line(buggy.matmul_k_overrun, "load")
    assert lines == {("out-of-bounds load", "lhsT"): line, ("out-of-bounds load", "rhs"): line + 1}


def test_without_a_sanitizer_an_out_of_bounds_dma_is_an_error_at_the_nki_line(rng):
    x = rng.standard_normal((256, 100)).astype(np.float32)
    with pytest.raises(OutOfBoundsError) as caught:
        buggy.softmax_shifted[2](x)
    assert caught.value.site.line == bug_line(buggy.softmax_shifted, "load")
    assert "softmax_shifted" in str(caught.value)
    assert "x[256, 0]" in str(caught.value)


def test_a_tile_of_more_than_128_partitions_breaks_the_partition_rule(rng):
    x = rng.standard_normal((256, 64)).astype(np.float32)
    (finding,) = sanitize(buggy.double_height_tile, (1,), x)
    assert finding.kind == "tile rule"
    assert finding.line == bug_line(buggy.double_height_tile, "partition")
    assert "partition dimension (first dimension) of 256" in finding.message
    with pytest.raises(KernelError, match="more than the 128 partitions of SBUF"):
        buggy.double_height_tile(x)


def test_psum_bank_and_matmul_operand_sizes(rng):
    a = rng.standard_normal((128, 128)).astype(np.float32)
    b = rng.standard_normal((128, 1024)).astype(np.float32)
    found = by_line(sanitize(buggy.psum_too_wide, (1,), a, b))
    psum = found.pop(("tile rule", bug_line(buggy.psum_too_wide, "psum")))
    moving = found.pop(("tile rule", bug_line(buggy.psum_too_wide, "moving")))
    assert found == {}
    expected = (
        "a PSUM tile of shape (128, 1024) needs 4096 bytes per partition in PSUM,"
        " more than one bank's 2048"
    )
    assert psum.details["rules"] == [expected]
    assert any("moving operand has a free size of 1024" in r for r in moving.details["rules"])


def test_reduction_over_the_partition_dimension_is_refused(rng):
    x = rng.standard_normal((128, 32)).astype(np.float32)
    (finding,) = sanitize(buggy.column_sum_over_partitions, (1,), x)
    assert finding.kind == "tile rule"
    assert finding.line == bug_line(buggy.column_sum_over_partitions, "reduce")
    assert "axis 0" in finding.message
