"""Masks: a mask is called redundant only when it is proven true for every lane of the launch."""

from __future__ import annotations

import numpy as np
import torch
from conftest import profile, site
from kernels import flagged_copy_kernel, masked_copy_kernel, matmul_kernel


def test_mask_of_a_multiple_of_the_block_is_redundant(rng):
    n, block = 4096, 1024
    src = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    dst = torch.zeros(n)
    launch, report = profile(masked_copy_kernel, (n // block,), src, dst, n, BLOCK=block)
    np.testing.assert_array_equal(dst.numpy(), src.numpy())
    for kind, tensor in (("load", "src_ptr"), ("store", "dst_ptr")):
        mask = site(launch, kind, tensor)["mask"]
        assert mask["redundant"] and not mask["depends_on_memory"]
        assert mask["expression"] == "offs < n"
        assert mask["reason"] == "n = 4096, a multiple of BLOCK"
    redundant = sorted(f.details["argument"] for f in report.findings if f.kind == "redundant mask")
    assert redundant == ["dst_ptr", "src_ptr"]


def test_mask_that_cuts_a_tail_is_not_redundant(rng):
    n, block = 4100, 2048
    src = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    dst = torch.zeros(n)
    launch, report = profile(masked_copy_kernel, (3,), src, dst, n, BLOCK=block)
    np.testing.assert_array_equal(dst.numpy(), src.numpy())
    assert not site(launch, "load", "src_ptr")["mask"]["redundant"]
    assert not [f for f in report.findings if f.kind == "redundant mask"]
    (low,) = [f for f in report.findings if f.kind == "masked lanes" and f.details["argument"] == "src_ptr"]
    assert "4100 of 6144" in low.message


def test_mask_read_from_memory_is_never_called_redundant(rng):
    n, block = 2048, 512
    src = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    flags = torch.ones(n, dtype=torch.int32)  # every flag set: the mask is true everywhere in this run
    dst = torch.zeros(n)
    launch, report = profile(flagged_copy_kernel, (n // block,), src, flags, dst, BLOCK=block)
    np.testing.assert_array_equal(dst.numpy(), src.numpy())
    mask = site(launch, "load", "src_ptr")["mask"]
    assert mask["present"] and mask["depends_on_memory"] and not mask["redundant"]
    assert not [f for f in report.findings if f.kind == "redundant mask"]


def test_k_tail_mask_of_a_matmul_holds_only_where_proven(rng):
    m, n, k = 64, 64, 48  # K = 48 is not a multiple of BLOCK_K = 32: the last iteration masks half
    a = torch.from_numpy(rng.standard_normal((m, k)).astype(np.float32))
    b = torch.from_numpy(rng.standard_normal((k, n)).astype(np.float32))
    c = torch.empty((m, n))
    launch, report = profile(matmul_kernel, (4,), a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride(),
                             BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_SIZE_M=1)
    np.testing.assert_allclose(c.numpy(), a.double().numpy() @ b.double().numpy(), rtol=1e-5, atol=1e-5)
    a_site = site(launch, "load", "a_ptr")
    assert not a_site["mask"]["redundant"]
    assert a_site["mask_utilisation"] == 0.75  # iterations of 32 and 16 of the 32 columns
    c_site = site(launch, "store", "c_ptr")  # M and N are multiples of the blocks: the store's mask holds
    assert c_site["mask"]["redundant"]
    assert c_site["mask"]["reason"] == ("M = 64, a multiple of BLOCK_K, BLOCK_M, BLOCK_N; "
                                        "N = 64, a multiple of BLOCK_K, BLOCK_M, BLOCK_N")
    assert {f.details["argument"] for f in report.findings if f.kind == "redundant mask"} == {"c_ptr"}
