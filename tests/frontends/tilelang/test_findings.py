"""Out-of-bounds bugs in TileLang kernels found at the user's TileLang line; TileLang's guarded
accesses (tile operations and ``T.Parallel`` loops on global buffers) are not findings."""

from __future__ import annotations

import pytest

pytest.importorskip("tilelang")

import tilelang.language as T  # noqa: E402
import torch  # noqa: E402

import tilescope  # noqa: E402
from tests.frontends.markers import bug_line  # noqa: E402
from tests.frontends.tilelang import buggy  # noqa: E402
from tests.frontends.tilelang import kernels as tk  # noqa: E402
from tilescope.engine.errors import KernelError, UnsupportedOpError  # noqa: E402
from tilescope.frontends.tilelang import compile  # noqa: E402


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(5)


def sanitize(func, *args, out_idx=None):
    launcher = tilescope.trace(func, clients="sanitizer", out_idx=out_idx)
    launcher(*args)
    return launcher.reports[0].findings


def test_scalar_store_past_a_floor_sized_output(gen):
    x = torch.randn(1000, generator=gen)
    (finding,) = sanitize(buggy.block_sums_floor_grid(1000), x, torch.zeros(7))
    assert (finding.kind, finding.line) == (
        "out-of-bounds store",
        bug_line(buggy.block_sums_floor_grid, "store"),
    )
    assert finding.details["argument"] == "Partial"
    assert finding.details["first_element"] == (7,)
    assert finding.program_ids == [(7, 0, 0)]


def test_unguarded_scalar_load_in_a_serial_loop_names_the_iteration(gen):
    x, mean = torch.randn(10, 64, generator=gen), torch.randn(10, generator=gen)
    (finding,) = sanitize(buggy.rows_with_stats(10, 64), x, mean, torch.zeros(10, 64))
    assert (finding.kind, finding.line) == ("out-of-bounds load", bug_line(buggy.rows_with_stats, "load"))
    assert finding.details["first_element"] == (10,)
    assert finding.details["lanes"] == 2  # rows 10 and 11 of the last block of 4
    assert finding.details["iteration"] == 2
    assert finding.details["loops"][0]["variable"] == "k"


def test_shared_buffer_read_past_its_end(gen):
    x = torch.randn(256, generator=gen)
    (finding,) = sanitize(buggy.smooth_without_halo(256), x, torch.zeros(256))
    assert (finding.kind, finding.line) == (
        "out-of-bounds load",
        bug_line(buggy.smooth_without_halo, "shared"),
    )
    assert finding.details["target"] == "`x_shared` (fp32[64])"
    assert finding.details["first_element"] == (64,)
    assert finding.details["programs"] == 4


def test_atomic_indexed_by_element_instead_of_block(gen):
    x = torch.randn(1000, generator=gen)
    (finding,) = sanitize(buggy.block_maxima_element_index(1000), x, torch.zeros(8))
    assert (finding.kind, finding.line) == (
        "out-of-bounds atomic", bug_line(buggy.block_maxima_element_index, "atomic"))  # fmt: skip
    assert finding.details["first_element"] == (128,)
    assert finding.details["programs"] == 7


def test_without_a_sanitizer_the_launch_fails_at_the_line(gen):
    x = torch.randn(1000, generator=gen)
    with pytest.raises(KernelError) as raised:
        compile(buggy.block_sums_floor_grid(1000))(x, torch.zeros(7))
    assert raised.value.site.line == bug_line(buggy.block_sums_floor_grid, "store")
    assert "Partial" in str(raised.value)


def test_partial_tiles_of_global_buffers_are_guarded_not_reported(gen):
    # 1000 = 3 full blocks of 256 and a partial one; 200 x 160 matmul tiles of 64
    a, b = torch.randn(1000, generator=gen), torch.randn(1000, generator=gen)
    assert sanitize(tk.vector_add(1000), a, b, out_idx=-1) == []
    ma, mb = torch.randn(200, 96, generator=gen).half(), torch.randn(96, 160, generator=gen).half()
    assert sanitize(tk.matmul(200, 160, 96), ma, mb, out_idx=-1) == []


def thread_level_fill(N):
    """Thread-level TileLang (each thread indexes by its own id), which tilescope does not model."""

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N):
            tx = T.get_thread_binding()
            A[tx] = 1.0  # BUG thread

    return main


def test_thread_level_code_is_rejected_at_its_line():
    with pytest.raises(UnsupportedOpError, match="thread index") as raised:
        compile(thread_level_fill(128))(torch.zeros(128))
    assert raised.value.site.line == bug_line(thread_level_fill, "thread")
