"""Memory efficiency: sectors per request and efficiency on kernels whose answer is known by hand."""

from __future__ import annotations

import numpy as np
import torch
from conftest import profile, site
from kernels import column_kernel, copy_kernel, masked_copy_kernel


def test_coalesced_copy_moves_only_what_it_uses(rng):
    n, block = 1 << 16, 1024
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
    # By hand: neighbouring lanes are one row (6 * 4 = 24 bytes) apart, so nothing can be vectorised
    # and a request is 32 lanes spanning 32 * 24 = 768 bytes. Each request starts at a multiple of
    # 768 (plus the column's 4 * j < 32 bytes) and its lanes are less than a sector apart, so it
    # touches 768 / 32 = 24 sectors for 32 * 4 = 128 useful bytes.
    requests_per_column = rows // 32
    assert s["pattern"] == "strided" and s["stride_bytes"] == 24
    assert s["vector_width"] == 1
    assert s["requests"] == cols * requests_per_column
    assert s["sectors"] == cols * requests_per_column * 24
    assert s["sectors_per_request"] == 24.0
    assert s["efficiency"] == round(128 / (24 * 32), 4)
    assert s["wasted_bytes"] == cols * requests_per_column * (24 * 32 - 128)
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
    # test_resources): a request is 32 lanes, 128 bytes, 4 sectors. The last program enables 904
    # lanes: 28 full requests and one of 8 lanes (one sector).
    assert (s["vector_width"], s["achievable_vector_width"]) == (1, 4)
    assert s["requests"] == 4 * 32 + 29
    assert s["sectors"] == 4 * 32 * 4 + 28 * 4 + 1
    assert s["efficiency"] == 1.0
    assert not s["mask"]["redundant"]


def test_misaligned_view_costs_a_sector_per_request(rng):
    n, block = 1 << 14, 1024
    base = torch.from_numpy(rng.standard_normal(n + 1).astype(np.float32))
    src = base[1:]  # starts 4 bytes into its allocation: no 16-byte vectors, requests straddle sectors
    dst = torch.empty(n)
    launch, _ = profile(copy_kernel, (n // block,), src, dst, BLOCK=block)
    np.testing.assert_array_equal(dst.numpy(), src.numpy())
    s = site(launch, "load", "src_ptr")
    assert s["vector_width"] == 1
    assert s["requests"] == n // 32
    assert s["sectors_per_request"] == 5.0  # 128 bytes starting 4 bytes into a sector
    assert s["efficiency"] == round(128 / 160, 4)


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)
