"""Compile-time resources from an offline compile for the H200 and the MI300X (no GPU): registers,
spills, occupancy."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import profile
from kernels import matmul_2d_kernel, row_softmax_kernel

import tilescope


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("num_warps", [1, 8])
def test_a_block_too_big_for_one_warp_spills(rng, num_warps):
    rows, cols = 128, 128
    x = torch.from_numpy(rng.standard_normal((rows * 2, cols)).astype(np.float32))
    out = torch.empty_like(x)
    launch, report = profile(
        row_softmax_kernel, (2,), x, out, x.stride(0), ROWS=rows, COLS=cols, num_warps=num_warps
    )
    np.testing.assert_allclose(out.numpy(), _softmax(x.double().numpy()), rtol=1e-5, atol=1e-7)
    res = launch["resources"]
    assert res["target"] == "sm_90a" and res["num_warps"] == num_warps
    spills = [f for f in report.findings if f.kind == "register spills"]
    if num_warps == 1:
        # 128 x 128 fp32 values live across the row reductions in 32 threads: 512 per thread, more
        # than the 255 registers a thread may have, so ptxas spills to the stack
        assert res["spill_bytes"] >= (rows * cols // 32 - 255) * 4
        assert len(spills) == 1 and spills[0].severity == "warning"
        assert f"spills {res['spill_bytes']} bytes per thread" in spills[0].message
    else:  # 8 warps: 64 values per thread fit
        assert res["spill_bytes"] == 0 and not spills
    assert res["registers"] <= 255
    per_warp = -(-res["registers"] * 32 // 256) * 256
    assert res["limits"]["registers"] == 65_536 // per_warp // num_warps
    assert res["limits"]["threads"] == 2048 // (32 * num_warps)
    assert res["programs_per_sm"] == min(res["limits"].values())
    assert res["occupancy"] == round(res["programs_per_sm"] * num_warps / 64, 4)


def test_pipelined_matmul_shared_buffers_map_to_their_loads(rng):
    m = n = 256
    k = 64
    a = torch.from_numpy(rng.standard_normal((m, k)).astype(np.float16))
    b = torch.from_numpy(rng.standard_normal((k, n)).astype(np.float16))
    c = torch.empty((m, n))
    launch, _ = profile(
        matmul_2d_kernel,
        (m // 128, n // 128),
        a,
        b,
        c,
        m,
        n,
        k,
        *a.stride(),
        *b.stride(),
        *c.stride(),
        BLOCK_M=128,
        BLOCK_N=128,
        BLOCK_K=32,
        num_stages=3,
    )
    np.testing.assert_allclose(c.numpy(), a.double().numpy() @ b.double().numpy(), rtol=2e-3, atol=2e-3)
    res = launch["resources"]
    buffers = {buf["name"]: buf for buf in res["shared_buffers"]}
    # three pipeline stages of a 128 x 32 tile of A and a 32 x 128 tile of B, in fp16
    assert buffers["a"]["shape"] == [3, 128, 32] and buffers["a"]["bytes"] == 3 * 128 * 32 * 2
    assert buffers["b"]["shape"] == [3, 32, 128] and buffers["b"]["bytes"] == 3 * 32 * 128 * 2
    loads = {s["argument"]: s["line"] for s in launch["sites"] if s["kind"] == "load"}
    assert buffers["a"]["line"] == loads["a_ptr"] and buffers["b"]["line"] == loads["b_ptr"]
    assert res["shared_bytes"] >= buffers["a"]["bytes"] + buffers["b"]["bytes"]
    per_program = res["shared_bytes"] + 1024
    assert res["limits"]["shared memory"] == 233_472 // per_program


@pytest.mark.parametrize(("n", "narrow"), [(5000, True), (4096, False)])
def test_compiled_access_width_against_what_the_addresses_allow(rng, n, narrow):
    from kernels import masked_copy_kernel

    block = 1024
    src = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    dst = torch.zeros(n)
    launch, report = profile(masked_copy_kernel, (-(-n // block),), src, dst, n, BLOCK=block)
    np.testing.assert_array_equal(dst.numpy(), src.numpy())
    load = next(s for s in launch["sites"] if s["kind"] == "load")
    assert load["achievable_vector_width"] == 4  # contiguous and 16-byte aligned either way
    assert load["vector_width"] == (1 if narrow else 4)
    # n = 5000 is not a multiple of 16, so Triton does not specialise it and cannot prove the mask
    # `offs < n` constant over 4 lanes: the compiled kernel reads 4 bytes at a time
    assert load["compiled_vector_bytes"] == (4 if narrow else 16)
    narrows = [f for f in report.findings if f.kind == "narrow access"]
    assert {f.details["argument"] for f in narrows} == ({"src_ptr", "dst_ptr"} if narrow else set())
    assert load["mask"]["bounds"] == {"n": n}
    for finding in narrows:  # the mask's bound is what stops the vectors, not the tensor's size
        (help_note,) = [note for note in finding.details["notes"] if note["label"] == "help"]
        assert help_note["text"].startswith("the mask compares with n = 5000, not a multiple of 16")
        assert "however the tensor is padded; mask only the tail" in help_note["text"]


@pytest.mark.parametrize(("block", "warps"), [(128, 4), (64, 4), (128, 8)])
def test_mi300x_occupancy_from_an_offline_gfx942_compile(rng, block, warps):
    import re

    from kernels import matmul_kernel

    m = n = 256
    k = 128
    a = torch.from_numpy(rng.standard_normal((m, k)).astype(np.float16))
    b = torch.from_numpy(rng.standard_normal((k, n)).astype(np.float16))
    c = torch.empty((m, n))
    launcher = tilescope.trace(matmul_kernel, clients="profiler", gpu="mi300x", compute_outputs=True)
    grid = ((m // block) * (n // block),)
    handle = launcher[grid](a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride(), BLOCK_M=block,
                            BLOCK_N=block, BLOCK_K=32, GROUP_SIZE_M=2, num_warps=warps)  # fmt: skip
    np.testing.assert_allclose(c.numpy(), a.double().numpy() @ b.double().numpy(), rtol=2e-3, atol=2e-3)
    res = launcher.reports[0].launches[0]["resources"]
    assert res["target"] == "gfx942" and res["num_warps"] == warps
    asm = handle.compiled_for("mi300x").asm["amdgcn"]
    total = int(re.search(r"; TotalNumVgprs: (\d+)", asm).group(1))
    assert res["vgprs"] == total and res["sgprs"] == int(re.search(r"\.sgpr_count:\s*(\d+)", asm).group(1))
    # By hand, CDNA3: 512 registers per SIMD lane in granules of 8, 8 waves per SIMD at most, 64 KiB
    # of LDS per CU, a program's waves spread over 4 SIMDs
    by_vgprs = 512 // (-(-total // 8) * 8)
    by_lds = 65536 // res["shared_bytes"] * -(-warps // 4) if res["shared_bytes"] else 8
    assert res["limits"]["registers"] == by_vgprs and res["limits"]["shared memory"] == by_lds
    waves = min(8, by_vgprs, by_lds, res["limits"]["scalar registers"])
    assert res["waves_per_simd"] == waves and res["occupancy"] == round(waves / 8, 4)
    assert res["programs_per_cu"] == waves * 4 // warps
    # LLVM's own figure (it knows no dynamic LDS, so it is the register limit alone)
    llvm = int(re.search(r"; Occupancy: (\d+)", asm).group(1))
    assert min(8, by_vgprs, res["limits"]["scalar registers"]) == llvm
