"""Memory efficiency: sectors per request and efficiency on kernels whose answer is known by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import profile, site
from kernels import column_kernel, copy_kernel, masked_copy_kernel, row_sum_kernel

import tilescope


def test_coalesced_copy_moves_only_what_it_uses(rng):
    n, block = 1 << 18, 1024  # 256 programs: every SM of the H200 busy
    src = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    dst = torch.empty_like(src)
    launch, report = profile(copy_kernel, (n // block,), src, dst, BLOCK=block)
    np.testing.assert_array_equal(dst.numpy(), src.numpy())
    for kind, tensor in (("load", "src_ptr"), ("store", "dst_ptr")):
        s = site(launch, kind, tensor)
        # 4 warps of 32 threads hold 1024 lanes: 8 per thread, so 4 (16 bytes) per instruction;
        # one request is 32 threads x 16 bytes = 512 bytes = 16 sectors, none wasted
        assert s["vector_width"] == 4
        assert s["pattern"] == "contiguous"
        assert s["requests"] == n // 128
        assert s["sectors"] == n * 4 // 32
        assert s["sectors_per_request"] == 16.0
        assert s["efficiency"] == 1.0
        assert s["wasted_bytes"] == 0
        assert s["mask_utilisation"] == 1.0
        assert not s["mask"]["present"]
    assert report.findings == []  # a clean kernel: nothing to say


def test_reading_a_row_major_matrix_by_columns(rng):
    rows, cols = 1024, 6
    x = torch.from_numpy(rng.standard_normal((rows, cols)).astype(np.float32))
    out = torch.empty((cols, rows), dtype=torch.float32)
    launch, report = profile(column_kernel, (cols,), x, out, rows, x.stride(0), BLOCK=rows)
    np.testing.assert_array_equal(out.numpy(), x.numpy().T)
    s = site(launch, "load", "x_ptr")
    # By hand: neighbouring rows are 6 * 4 = 24 bytes apart, so the load moves 4 bytes per thread.
    # The compiler gives it the layout of the contiguous store (4 rows per thread), so the 32 lanes
    # of one instruction are rows 4t + j, 96 bytes apart: every lane is in its own sector. A
    # program's 1024 rows take 1024 / 32 = 32 instructions of 32 sectors for 32 * 4 = 128 useful
    # bytes each (what Nsight Compute counts on an H200 for the same layout, docs/profiler.md).
    assert s["layout"]["compiled"] and s["layout"]["size_per_thread"] == [4]
    requests_per_column = rows // 32
    assert s["pattern"] == "strided" and s["stride_bytes"] == 24
    assert s["vector_width"] == 1
    assert s["requests"] == cols * requests_per_column
    assert s["sectors"] == cols * requests_per_column * 32
    assert s["sectors_per_request"] == 32.0
    assert s["efficiency"] == 0.125
    assert s["wasted_bytes"] == cols * requests_per_column * (32 * 32 - 128)
    stored = site(launch, "store", "out_ptr")
    assert stored["efficiency"] == 1.0
    (finding,) = [f for f in report.findings if f.kind == "uncoalesced access"]
    assert finding.severity == "warning" and finding.details["argument"] == "x_ptr"
    assert finding.line == launch["sites"][0]["line"]  # the worst site is first
    assert "x_ptr + r * stride_row + col" in launch["sites"][0]["source"]


def test_masked_tail_utilisation_is_exact(rng):
    n, block = 5000, 1024
    src = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    dst = torch.zeros(n)
    launch, _ = profile(masked_copy_kernel, (triton_cdiv(n, block),), src, dst, n, BLOCK=block)
    np.testing.assert_array_equal(dst.numpy(), src.numpy())
    s = site(launch, "load", "src_ptr")
    assert s["lanes"] == 5 * block
    assert s["active_lanes"] == n
    assert s["mask_utilisation"] == round(n / (5 * block), 4)
    # n = 5000 is no multiple of 16, so the compiled kernel reads 4 bytes per thread (see
    # test_resources) while each thread still holds 4 consecutive elements: instruction j of a warp
    # reads elements 4t + j, 16 bytes apart, 16 sectors for 128 useful bytes (Nsight Compute's count
    # on an H200 too). A program has 2 x 4 warps x 4 such instructions; the last program's 904
    # lanes reach into 8 blocks of 128: 7 whole (4 x 16 sectors each) and one of 8 lanes (4 x 1).
    assert (s["vector_width"], s["achievable_vector_width"]) == (1, 4)
    assert s["requests"] == 4 * 32 + 8 * 4
    assert s["sectors"] == 4 * 32 * 16 + 7 * 4 * 16 + 4
    assert s["efficiency"] == round(n * 4 / (s["sectors"] * 32), 4)
    assert not s["mask"]["redundant"]


def test_misaligned_view_costs_a_sector_per_request(rng):
    n, block = 1 << 14, 1024
    base = torch.from_numpy(rng.standard_normal(n + 1).astype(np.float32))
    src = base[1:]  # starts 4 bytes into its allocation: no 16-byte vectors, requests straddle sectors
    dst = torch.empty(n)
    launch, _ = profile(copy_kernel, (n // block,), src, dst, BLOCK=block)
    np.testing.assert_array_equal(dst.numpy(), src.numpy())
    s = site(launch, "load", "src_ptr")
    # each thread holds 4 consecutive elements but reads them 4 bytes at a time: instruction j of a
    # warp reads the 32 elements 4t + j, 16 bytes apart, starting 4 + 4j bytes into a sector: 16
    # sectors for j = 0, 1, 2 and 17 for j = 3, so 65 sectors for 512 useful bytes
    assert s["vector_width"] == 1 and s["layout"]["size_per_thread"] == [4]
    assert s["requests"] == n // 32
    assert s["sectors_per_request"] == 16.25
    assert s["efficiency"] == round(512 / (65 * 32), 4)


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


def test_default_layout_is_the_one_triton_picks():
    from tilescope.clients.profiler.coalescing import Layout

    # Triton 3.9's layouts for the matmul tutorial's fp16 tiles with 4 warps (from its TTGIR)
    assert Layout.default((128, 64), 1, 8, 32, 4) == Layout((1, 8), (4, 8), (4, 1), (1, 0))
    assert Layout.default((64, 128), 1, 8, 32, 4) == Layout((1, 8), (2, 16), (4, 1), (1, 0))
    assert Layout.default((1024,), 0, 4, 32, 4) == Layout((4,), (32,), (4,), (0,))
    # a warp instruction moves one vector of every thread of one warp
    groups = Layout((1, 8), (4, 8), (4, 1), (1, 0)).instructions((128, 64), 8)
    assert groups.shape == (128 * 64 // 256, 256)
    rows = np.unique(groups[0] // 64)
    assert rows.tolist() == [0, 1, 2, 3]  # the first instruction: 4 rows of 64 halves (8 threads each)


def test_a_reductions_scalar_store_is_profiled_without_a_warning(rng):
    x = torch.from_numpy(rng.standard_normal((64, 100)).astype(np.float32))
    out = torch.empty(64, dtype=torch.float32)
    launch, report = profile(row_sum_kernel, (64,), x, out, 100, x.stride(0), BLOCK=128)
    np.testing.assert_allclose(out.numpy(), x.numpy().astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)
    store = site(launch, "store", "out_ptr")
    assert store["shape"] == [] and store["requests"] == 64 and store["active_lanes"] == 64
    assert not any(f.details.get("argument") == "out_ptr" for f in report.findings)


@pytest.mark.parametrize(("gpu", "units"), [("h200", "132 SMs"), ("mi300x", "304 CUs")])
def test_a_grid_smaller_than_the_gpu_is_flagged(rng, gpu, units):
    n, block = 1 << 16, 1024  # 64 programs
    src = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    dst = torch.empty_like(src)
    launcher = tilescope.trace(copy_kernel, clients="profiler", gpu=gpu, compute_outputs=True)
    launcher[(n // block,)](src, dst, BLOCK=block)
    np.testing.assert_array_equal(dst.numpy(), src.numpy())
    (finding,) = launcher.reports[0].findings
    assert finding.kind == "small grid" and finding.severity == "note"
    assert finding.message.startswith(f"64 programs < {units}: the GPU is underused")
    assert finding.line == copy_kernel.fn.__code__.co_firstlineno  # the kernel, where it is defined


def test_a_block_smaller_than_its_layout_loads_every_copy(rng):
    rows, cols = 512, 64
    x = torch.from_numpy(rng.standard_normal((rows, cols)).astype(np.float32))
    out = torch.empty(rows)
    launch, _ = profile(row_sum_kernel, (rows,), x, out, cols, x.stride(0), BLOCK=cols, num_warps=4)
    np.testing.assert_allclose(out.numpy(), x.double().numpy().sum(axis=1), rtol=1e-5, atol=1e-5)
    s = site(launch, "load", "x_ptr")
    layout = s["layout"]
    tile = layout["size_per_thread"][0] * layout["threads_per_warp"][0] * layout["warps_per_cta"][0]
    assert tile > cols  # 4 warps of 32 threads over 64 floats: each float is held by tile / 64 threads
    # By hand (the compiled layout: 1 float per thread, 32 threads, 4 warps): warps 0 and 1 hold
    # floats 0-31 and 32-63, warps 2 and 3 hold them again, and every thread loads what it holds: 4
    # requests of 32 floats (128 bytes, 4 sectors) per row, where counting each float once gave 2
    assert layout["size_per_thread"] == [1] and layout["threads_per_warp"] == [32]
    assert layout["warps_per_cta"] == [4]
    assert s["requests"] == rows * 4
    assert s["sectors"] == rows * 4 * 4 and s["sectors_per_request"] == 4.0 and s["efficiency"] == 1.0
    stored = site(launch, "store", "out_ptr")  # the scalar sum: one thread stores it, copies masked off
    assert stored["requests"] == rows
