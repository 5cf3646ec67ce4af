"""cuTile's undefined behaviour found at the user's cuTile line; its defined padding is not a finding."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cuda.tile")

import tilescope  # noqa: E402
from tests.frontends.cutile import buggy  # noqa: E402
from tests.frontends.cutile import kernels as ck  # noqa: E402
from tests.frontends.markers import bug_line  # noqa: E402


def sanitize(kernel, grid, *args):
    launcher = tilescope.trace(kernel, clients="sanitizer")
    launcher[grid](*args)
    return launcher.reports[0].findings


def source_line(kernel, tag):
    """The line of cuTile ``kernel`` marked ``# BUG <tag>``."""
    return bug_line(kernel._pyfunc, tag)


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def test_unchecked_load_past_the_end_is_found(rng):
    x = rng.standard_normal(1000).astype(np.float32)
    (finding,) = sanitize(buggy.scale_unchecked, (4,), x, np.zeros_like(x), 256)
    assert (finding.kind, finding.line) == ("out-of-bounds load", source_line(buggy.scale_unchecked, "load"))
    assert finding.details["argument"] == "x"
    assert finding.details["first_element"] == (1000,)
    assert finding.details["lanes"] == 24  # elements 1000..1023 of the last tile


def test_partial_tiles_are_padded_not_reported(rng):
    x = rng.standard_normal(1000).astype(np.float32)
    assert sanitize(ck.vector_add, (4,), x, x, np.zeros_like(x), 256) == []


def test_a_tile_entirely_outside_its_array_is_found_at_load_and_store(rng):
    x = rng.standard_normal((96, 64)).astype(np.float32)
    found = {(f.kind, f.line): f for f in sanitize(buggy.copy_rows, (4,), x, np.zeros_like(x), 32, 64)}
    load = found.pop(("out-of-bounds load", source_line(buggy.copy_rows, "load")))
    store = found.pop(("out-of-bounds store", source_line(buggy.copy_rows, "store")))
    assert found == {}
    assert load.program_ids == store.program_ids == [(3, 0, 0)]
    assert load.details["lanes"] == store.details["lanes"] == 32 * 64
    assert load.details["first_element"] == (96, 0)


def test_unchecked_gather_with_an_id_past_the_table(rng):
    table = rng.standard_normal((50, 16)).astype(np.float32)
    ids = rng.integers(0, 50, 64).astype(np.int32)
    ids[37] = 50  # one id past the last row
    (finding,) = sanitize(buggy.gather_unchecked, (2,), ids, table, np.zeros((64, 16), np.float32), 32, 16)
    assert finding.kind == "out-of-bounds load"
    assert finding.line == source_line(buggy.gather_unchecked, "gather")
    assert finding.details["argument"] == "table"
    assert finding.details["first_element"] == (50, 0)
    assert finding.details["lanes"] == 16
    assert finding.program_ids == [(1, 0, 0)]


def test_checked_gather_pads_ids_past_the_table(rng):
    table = rng.standard_normal((50, 16)).astype(np.float32)
    ids = np.arange(64, dtype=np.int32)  # ids 50..63 are past the table: padding, defined
    out = np.full((64, 16), np.nan, np.float32)
    assert sanitize(ck.embedding, (2,), ids, table, out, 32, 16) == []
    tilescope.trace(ck.embedding)[(2,)](ids, table, out, 32, 16)
    np.testing.assert_array_equal(out[:50], table)
    np.testing.assert_array_equal(out[50:], 0.0)


def race_findings(kernel, grid, *args):
    launcher = tilescope.trace(kernel, clients="racecheck")
    launcher[grid](*args)
    return launcher.reports[0].findings


def test_blocks_storing_to_the_same_output_tile_race(rng):
    x = rng.standard_normal((96, 64)).astype(np.float32)
    (finding,) = race_findings(buggy.column_sums_racy, (3,), x, np.zeros((1, 64), np.float32), 32, 64)
    assert (finding.kind, finding.details["race"]) == ("data race", "write-after-write")
    assert finding.line == source_line(buggy.column_sums_racy, "race")
    assert finding.details["argument"] == "sums"
    assert finding.details["programs"] == 3


def test_an_in_place_shift_reads_what_the_next_block_overwrites(rng):
    a = rng.standard_normal((96, 32)).astype(np.float32)
    (finding,) = race_findings(buggy.shift_rows_in_place, (2,), a, 32, 32)  # blocks 0 and 1 of 3
    assert (finding.kind, finding.details["race"]) == ("data race", "write-after-read")
    first, second = finding.details["first"], finding.details["second"]
    assert (first["line"], first["program"]) == (source_line(buggy.shift_rows_in_place, "read"), [0, 0, 0])
    assert (second["line"], second["program"]) == (source_line(buggy.shift_rows_in_place, "write"), [1, 0, 0])
    assert finding.details["argument"] == "a"


def test_race_free_cutile_kernels_have_no_race_findings(rng):
    x = rng.standard_normal((96, 64)).astype(np.float32)
    assert race_findings(ck.row_sums, (3,), x, np.zeros(96, np.float32), 32, 64) == []
    assert race_findings(ck.softmax_rows, (96,), x, np.empty_like(x), 64) == []
