"""Bugs in Gluon kernels found at the user's line: out-of-bounds accesses to global and shared
memory, a read no mbarrier wait covers, layout mistakes, and the shared-memory limit."""

from __future__ import annotations

import inspect

import pytest
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

import tilescope
from tests.frontends import markers
from tests.frontends.gluon import buggy
from tests.frontends.gluon import kernels as gk
from tests.frontends.gluon.kernels import _add_compute_partition, _add_load_partition
from tilescope.engine.errors import KernelError, OutOfBoundsError, UnsupportedOpError


def bug_line(kernel, tag: str) -> int:
    """The line of Gluon ``kernel`` marked ``# BUG <tag>``."""
    return markers.bug_line(kernel.fn, tag)


def line_of(kernel, text: str) -> int:
    """The line of ``kernel`` whose source contains ``text``."""
    lines, first = inspect.getsourcelines(kernel.fn)
    return next(first + i for i, line in enumerate(lines) if text in line)


def findings_of(clients, kernel, grid, *args):
    """The findings of one launch of ``kernel`` under ``clients``."""
    launcher = tilescope.trace(kernel, clients=clients)
    launcher[grid](*args)
    return [f for report in launcher.reports for f in report.findings]


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(16)


def ws_args(a, b, num_buffers, block=(32, 64)):
    """The arguments of ``kernels.add_warp_specialized_kernel`` before its two partitions."""
    descs = [descriptor(t, list(block)) for t in (a, b, torch.empty_like(a))]
    return (*descs, a.shape[1], *block, num_buffers)


def descriptor(t, block):
    layout = gl.NVMMASharedLayout.get_default_for(block, gl.float32)
    return TensorDescriptor(t, t.shape, t.stride(), block, layout)


def test_mask_one_lane_too_wide_reads_past_the_end_at_the_load(gen):
    x, y = torch.randn(1000, generator=gen), torch.empty(1000)
    (finding,) = findings_of("sanitizer", buggy.scale_mask_off_by_one, (2,), x, y, 1000, 2.0, 512)
    assert (finding.kind, finding.line) == (
        "out-of-bounds load",
        bug_line(buggy.scale_mask_off_by_one, "load"),
    )
    assert finding.details["argument"] == "x_ptr"
    assert finding.details["first_element"] == (1000,)
    assert finding.details["lanes"] == 1
    assert finding.program_ids == [(1, 0, 0)]


def test_mask_one_lane_too_wide_fails_the_launch_without_a_sanitizer(gen):
    x, y = torch.randn(1000, generator=gen), torch.empty(1000)
    with pytest.raises(OutOfBoundsError) as err:
        tilescope.trace(buggy.scale_mask_off_by_one)[(2,)](x, y, 1000, 2.0, 512)
    assert err.value.site.line == bug_line(buggy.scale_mask_off_by_one, "load")


def test_ring_index_past_its_allocation_writes_past_the_shared_buffer(gen):
    x = torch.randn(64, 256, generator=gen)  # four column tiles of 64: tiles 0, 1, 2, 3 -> slots 0, 1, 2, 0
    out = torch.empty(64)
    (finding,) = findings_of("sanitizer", buggy.row_sum_ring_overrun, (1,), descriptor(x, [64, 64]), out,
                             256, 64, 64, 2)  # fmt: skip
    assert (finding.kind, finding.line) == (
        "out-of-bounds store",
        bug_line(buggy.row_sum_ring_overrun, "ring"),
    )
    assert finding.details["tensor"] == {"name": "bufs (shared)", "dtype": "fp32", "shape": [2, 64, 64],
                                         "strides": [4096, 64, 1]}  # fmt: skip
    assert finding.details["first_element"] == (2, 0, 0)  # slot 2 of a 2-slot ring
    assert finding.details["lanes"] == 64 * 64
    assert finding.details["loops"][0]["iteration"] == 2


def test_a_phase_never_toggled_hangs_at_the_second_wait(gen):
    x, out = torch.randn(64, 256, generator=gen), torch.empty(64)
    with pytest.raises(KernelError, match="for parity 0 never returns") as err:
        tilescope.trace(buggy.row_sum_phase_not_toggled)[(1,)](descriptor(x, [64, 64]), out, 256, 64, 64)
    assert err.value.site.line == bug_line(buggy.row_sum_phase_not_toggled, "phase")
    assert "2 phases completed, and its current phase 2 (parity 0)" in str(err.value)
    assert "toggle the phase after each wait" in str(err.value)


def test_a_consumer_partition_that_never_frees_a_slot_hangs_both_partitions(gen):
    a, b = torch.randn(64, 256, generator=gen), torch.randn(64, 256, generator=gen)
    out = torch.empty(64)
    kernel = buggy.row_sum_warp_specialized_never_frees
    with pytest.raises(KernelError, match="never returns") as err:
        tilescope.trace(kernel)[(2,)](descriptor(a, [32, 64]), descriptor(b, [32, 64]), out, 256, 32, 64, 2)
    # slots 0 and 1 filled and consumed; the consumer then waits for slot 0's second fill, which the
    # producer cannot make: it waits for the consumer to free slot 0
    assert err.value.site.line == bug_line(buggy._sum_partition_never_frees, "hang")
    assert "`ready`" in str(err.value) and "every other partition waits too" in str(err.value)


def test_a_consumer_partition_freeing_a_slot_before_reading_it_races_with_the_refill(gen):
    a, b = torch.randn(64, 256, generator=gen), torch.randn(64, 256, generator=gen)
    found = findings_of("racecheck", gk.add_warp_specialized_kernel, (1,), *ws_args(a, b, 2),
                        _add_load_partition, buggy.add_consumer_frees_slot_early)  # fmt: skip
    # the refill of the slot (a TMA load of the producer) races with the consumer's read of it
    refills = {
        line_of(_add_load_partition, "tma_load(a_desc"),
        line_of(_add_load_partition, "tma_load(b_desc"),
    }
    assert {(f.kind, f.line) for f in found} == {("shared memory race", line) for line in refills}
    read = bug_line(buggy.add_consumer_frees_slot_early, "early")
    assert sorted(f.message for f in found) == [
        f"partition 1 writes `{buf}` (shared), which partition 0 read at line {read} with no mbarrier arrive "
        "and wait ordering the two"
        for buf in ("a_bufs", "b_bufs")
    ]


def test_a_producer_partition_refilling_a_slot_before_its_wait_races_with_the_consumer(gen):
    a, b = torch.randn(64, 256, generator=gen), torch.randn(64, 256, generator=gen)
    found = findings_of("racecheck", gk.add_warp_specialized_kernel, (1,), *ws_args(a, b, 2),
                        buggy.add_producer_without_empty_wait, _add_compute_partition)  # fmt: skip
    kernel = buggy.add_producer_without_empty_wait
    refills = {bug_line(kernel, "empty"), line_of(kernel, "tma_load(b_desc")}
    assert {(f.kind, f.line) for f in found} == {("shared memory race", line) for line in refills}
    read = line_of(_add_compute_partition, "a_bufs.index(slot).load")
    assert all(f"which partition 0 read at line {read}" in f.message for f in found)


def test_tma_store_from_a_buffer_no_wait_covers_is_a_race_at_the_store(gen):
    x, out = torch.randn(256, generator=gen), torch.empty(256)
    (finding,) = findings_of("racecheck", buggy.memcpy_without_wait, (4,), descriptor(x, [64]),
                             descriptor(out, [64]), 64)  # fmt: skip
    assert (finding.kind, finding.line) == (
        "shared memory race",
        bug_line(buggy.memcpy_without_wait, "read"),
    )
    copy_line = bug_line(buggy.memcpy_without_wait, "copy")
    assert f"TMA load into it at line {copy_line}" in finding.message
    assert "no mbarrier.wait on `bar` for phase 0" in finding.message
    assert finding.program_ids == [(p, 0, 0) for p in range(4)]


def test_a_missing_wait_without_racecheck_fails_the_launch_at_the_read(gen):
    x, out = torch.randn(256, generator=gen), torch.empty(256)
    with pytest.raises(KernelError, match="shared memory race") as err:
        tilescope.trace(buggy.memcpy_without_wait)[(4,)](descriptor(x, [64]), descriptor(out, [64]), 64)
    assert err.value.site.line == bug_line(buggy.memcpy_without_wait, "read")


def test_operands_in_two_layouts_are_reported_at_the_add(gen):
    x, b, y = torch.randn(32, 64, generator=gen), torch.randn(64, generator=gen), torch.empty(32, 64)
    with pytest.raises(KernelError, match="Layout mismatch in broadcast") as err:
        tilescope.trace(buggy.bias_add_layout_mismatch)[(2,)](x, b, y, 64, 16)
    assert err.value.site.line == bug_line(buggy.bias_add_layout_mismatch, "layout")
    assert "threads_per_warp=[4, 8]" in str(err.value) and "threads_per_warp=[1, 32]" in str(err.value)


def test_a_blocked_layout_for_the_wrong_warp_count_is_refused_where_it_is_used(gen):
    x, y = torch.randn(1024, generator=gen), torch.empty(1024)
    with pytest.raises(KernelError, match="places 2 warps; the kernel runs num_warps=4") as err:
        tilescope.trace(buggy.copy_two_warp_layout)[(2,)](x, y, 512)
    assert err.value.site.line == bug_line(buggy.copy_two_warp_layout, "warps")


def test_the_allocation_that_passes_the_shared_memory_limit_is_a_tile_rule_finding(gen):
    a, b = torch.randn(64, 128, generator=gen), torch.randn(64, 128, generator=gen)
    c = torch.empty(64, 128)
    descs = [descriptor(t, [64, 128]) for t in (a, b, c)]
    (finding,) = findings_of("sanitizer", buggy.add_too_much_shared, (1,), *descs, 64, 128, 4)
    assert (finding.kind, finding.line) == ("tile rule", bug_line(buggy.add_too_much_shared, "shared"))
    assert "256.0 KiB allocated with `b_smem`" in finding.message


@gluon.jit
def _store_partition(y_ptr, offs, value):
    gl.store(y_ptr + offs, value)


@gluon.jit
def _idle_partition(y_ptr):
    pass


@gluon.jit
def warp_specialized_copy(x_ptr, y_ptr, BLOCK: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([4], [32], [4], [0])
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout)
    value = gl.load(x_ptr + offs)
    gl.warp_specialize([(_store_partition, (y_ptr, offs, value)), (_idle_partition, (y_ptr,))], [1])


@gluon.jit
def reshape_blocked(x_ptr, y_ptr, BLOCK: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([4], [32], [4], [0])
    offs = gl.arange(0, BLOCK, layout)
    flat = gl.load(x_ptr + offs)
    rows = gl.reshape(flat, [BLOCK // 16, 16])  # BUG reshape
    gl.store(y_ptr + offs, gl.reshape(rows, [BLOCK]))


def test_a_default_partition_gets_the_tensors_of_the_caller():
    x, y = torch.randn(1024), torch.empty(1024)
    tilescope.trace(warp_specialized_copy)[(2,)](x, y, 512)
    torch.testing.assert_close(y, x, rtol=0, atol=0)


def test_a_reshape_whose_layout_is_not_inferred_is_refused_at_its_line():
    x, y = torch.randn(512), torch.empty(512)
    with pytest.raises(UnsupportedOpError, match="does not infer the layout") as err:
        tilescope.trace(reshape_blocked)[(1,)](x, y, 512)
    assert err.value.site.line == markers.bug_line(reshape_blocked.fn, "reshape")
