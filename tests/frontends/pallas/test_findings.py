"""Pallas bugs found at the user's Pallas line: out-of-bounds blocks and refs, and races between grid
steps, each of which JAX's interpret mode runs silently (clamped slices, grid steps in order)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

import tilescope  # noqa: E402
from tests.frontends.markers import bug_line  # noqa: E402
from tests.frontends.pallas import buggy  # noqa: E402
from tests.frontends.pallas import kernels as pk  # noqa: E402


def findings(wrapper, clients, *args):
    launcher = tilescope.trace(wrapper, clients=clients)
    launcher(*map(jnp.asarray, args))
    return launcher.reports[0].findings


@pytest.fixture
def rng():
    return np.random.default_rng(23)


def test_a_forgotten_tail_mask_reads_past_the_array(rng):
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    (finding,) = findings(buggy.unmasked_add, "sanitizer", x, y)
    assert (finding.kind, finding.line) == ("out-of-bounds load", bug_line(buggy.unmasked_add_kernel, "load"))
    assert finding.details["argument"] == "x_ref"
    assert finding.details["first_element"] == (1000,)
    assert finding.details["lanes"] == 24  # elements 1000..1023 of the last block of 128
    assert finding.program_ids == [(7, 0, 0)]


def test_an_index_map_one_block_ahead_reads_a_block_outside_the_array(rng):
    x = rng.standard_normal(1024).astype(np.float32)
    (finding,) = findings(buggy.shifted_copy, "sanitizer", x)
    assert (finding.kind, finding.line) == ("out-of-bounds load", bug_line(buggy.shifted_copy_kernel, "load"))
    assert finding.details["lanes"] == 128  # the whole block: wholly outside is not Pallas's padding
    assert finding.details["first_element"] == (1024,)


def test_an_unswapped_output_index_map_writes_blocks_past_the_output(rng):
    x = rng.standard_normal((64, 32)).astype(np.float32)
    (finding,) = findings(buggy.transpose_blocks, "sanitizer", x)
    assert (finding.kind, finding.line) == (
        "out-of-bounds store",
        bug_line(buggy.transpose_blocks_kernel, "store"),
    )
    assert finding.details["argument"] == "o_ref"
    assert finding.details["first_element"] == (32, 0)


def test_a_slice_past_the_block_is_a_block_bounds_finding(rng):
    x = rng.standard_normal((64, 16)).astype(np.float32)
    (finding,) = findings(buggy.chunked_sum, "sanitizer", x)
    assert (finding.kind, finding.line) == ("tile rule", bug_line(buggy.chunked_sum_kernel, "block"))
    assert "reads `x_ref` outside its block of 32x16 elements" in finding.details["rules"][0]
    assert finding.details["iteration"] == 4  # the fifth chunk of a block of four
    assert finding.details["programs"] == 2  # every grid step


def test_a_prefetched_block_index_past_the_table_is_found_at_the_kernel_line(rng):
    x = rng.standard_normal((32, 16)).astype(np.float32)
    idx = np.array([3, 0, 4, 2], np.int32)  # row block 4 of a table of 4 blocks
    (finding,) = findings(pk.gather_rows, "sanitizer", idx, x)
    assert (finding.kind, finding.program_ids) == ("out-of-bounds load", [(2, 0, 0)])
    assert finding.line == inspect.getsourcelines(pk.gather_rows_kernel)[1] + 1
    assert finding.details["first_element"] == (32, 0)


def test_without_a_sanitizer_an_out_of_bounds_access_is_an_error_at_the_line(rng):
    x = rng.standard_normal(1024).astype(np.float32)
    with pytest.raises(tilescope.KernelError) as caught:
        tilescope.trace(buggy.shifted_copy)(jnp.asarray(x))
    assert f"buggy.py:{bug_line(buggy.shifted_copy_kernel, 'load')}" in str(caught.value)


def test_partial_blocks_are_padding_not_findings(rng):
    x = rng.standard_normal(1000).astype(np.float32)
    assert findings(pk.add_vectors, "sanitizer", x, x) == []


def test_two_grid_steps_writing_one_output_block_race(rng):
    x = rng.standard_normal(1024).astype(np.float32)
    found = findings(buggy.pairwise_max, "racecheck", x)
    assert found and {f.line for f in found} == {bug_line(buggy.pairwise_max_kernel, "race")}
    assert {f.details["argument"] for f in found} == {"o_ref"}


def test_a_revisited_output_block_in_a_parallel_dimension_races(rng):
    x = rng.standard_normal((32, 128)).astype(np.float32)
    found = findings(buggy.row_sum, "racecheck", x)
    assert found and bug_line(buggy.row_sum_kernel, "race") in {f.line for f in found}
    assert all(
        f.details["race"] in ("read-after-write", "write-after-write", "write-after-read") for f in found
    )


def test_the_same_accumulation_along_an_arbitrary_dimension_is_ordered(rng):
    x = rng.standard_normal((64, 128)).astype(np.float32)
    assert findings(pk.column_sum, "racecheck", x) == []
    a, b = rng.standard_normal((64, 96)).astype(np.float32), rng.standard_normal((96, 64)).astype(np.float32)
    assert findings(pk.matmul_acc, "racecheck", a, b) == []


def test_an_in_place_shift_reads_what_the_next_step_overwrites(rng):
    x = rng.standard_normal(512).astype(np.float32)
    (finding,) = findings(buggy.shift_in_place, "racecheck", x)
    assert (finding.kind, finding.details["race"]) == ("data race", "write-after-read")
    assert finding.line == bug_line(buggy.shift_in_place_kernel, "shift")
