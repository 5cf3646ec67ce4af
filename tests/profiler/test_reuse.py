"""Reuse across programs and the L2 footprint of one wave, with the footprints computed by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import profile
from kernels import matmul_2d_kernel, matmul_kernel

M = N = 256
K = 64
TILE = 32  # BLOCK_M = BLOCK_N = BLOCK_K
WAVE = 8  # programs per wave (an 8-SM GPU): the 8 x 8 tiles take 8 waves
KIB = 1024
# By hand, fp32: a tile row of A is 32 x 64 x 4 = 8 KiB, a tile column of B 64 x 32 x 4 = 8 KiB, a
# tile of C 32 x 32 x 4 = 4 KiB. A wave of 8 programs in row-major tile order covers one tile row:
# 1 row of A, all 8 columns of B, 8 tiles of C = 8 + 64 + 32 = 104 KiB. In groups of 4 tile rows it
# covers a 4 x 2 block of tiles: 4 rows of A, 2 columns of B, 8 tiles of C = 32 + 16 + 32 = 80 KiB.
ROW_MAJOR = 104 * KIB
GROUPED = 80 * KIB


def _inputs(rng):
    a = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float32))
    b = torch.from_numpy(rng.standard_normal((K, N)).astype(np.float32))
    return a, b, torch.empty((M, N)), a.double().numpy() @ b.double().numpy()


@pytest.mark.parametrize(("group", "footprint"), [(1, ROW_MAJOR), (4, GROUPED)])
def test_grouped_order_shrinks_the_wave_footprint(rng, group, footprint):
    a, b, c, want = _inputs(rng)
    launch, _ = profile(matmul_kernel, ((M // TILE) * (N // TILE),), a, b, c, M, N, K, *a.stride(),
                        *b.stride(), *c.stride(), BLOCK_M=TILE, BLOCK_N=TILE, BLOCK_K=TILE,
                        GROUP_SIZE_M=group, wave=WAVE)
    np.testing.assert_allclose(c.numpy(), want, rtol=1e-5, atol=1e-4)
    reuse = launch["reuse"]
    assert reuse["wave_programs"] == WAVE and reuse["waves"] == 8
    assert reuse["launch_order"]["wave_bytes_mean"] == footprint
    assert reuse["launch_order"]["wave_bytes_max"] == footprint
    # every element of A is read by the 8 programs of its tile row, of C written by one program
    assert reuse["tensors"]["a_ptr"]["programs_per_byte"] == 8
    assert reuse["tensors"]["a_ptr"]["unique_bytes"] == M * K * 4
    assert reuse["tensors"]["c_ptr"]["programs_per_byte"] == 1


def test_profiler_proposes_a_grouped_order_for_a_2d_grid(rng):
    a, b, c, want = _inputs(rng)
    launch, report = profile(matmul_2d_kernel, (M // TILE, N // TILE), a, b, c, M, N, K, *a.stride(),
                             *b.stride(), *c.stride(), BLOCK_M=TILE, BLOCK_N=TILE, BLOCK_K=TILE, wave=WAVE)
    np.testing.assert_allclose(c.numpy(), want, rtol=1e-5, atol=1e-4)
    reuse = launch["reuse"]
    # launch order runs pid_m fastest: a wave is one tile column (all of A, one column of B)
    assert reuse["launch_order"]["wave_bytes_mean"] == ROW_MAJOR
    best = reuse["best_grouped"]
    assert best["wave_bytes_mean"] == GROUPED
    (finding,) = [f for f in report.findings if f.kind == "program order"]
    assert "104.0 KiB to 80.0 KiB (23% less" in finding.message


def test_a_wave_that_holds_the_whole_grid_has_no_better_order(rng):
    a, b, c, want = _inputs(rng)
    launch, report = profile(matmul_2d_kernel, (M // TILE, N // TILE), a, b, c, M, N, K, *a.stride(),
                             *b.stride(), *c.stride(), BLOCK_M=TILE, BLOCK_N=TILE, BLOCK_K=TILE)
    np.testing.assert_allclose(c.numpy(), want, rtol=1e-5, atol=1e-4)
    reuse = launch["reuse"]  # 64 programs on the H200's 132 SMs: one wave, all of A, B and C
    assert reuse["waves"] == 1
    assert reuse["launch_order"]["wave_bytes_mean"] == (M * K + K * N + M * N) * 4
    assert reuse["best_grouped"] is None
    assert not [f for f in report.findings if f.kind == "program order"]


@pytest.mark.parametrize(
    "owners, far, longest",
    [(7, 0, 1), (7, 0, 2), (7, 0, 5), (2, 1 << 59, 5), (3, 1 << 61, 1)],
    ids=["one-sector runs", "two-sector runs", "longer runs", "too far apart to pack", "scattered too far"],
)
def test_merged_runs_and_cover_are_the_sectors_each_program_touches(rng, owners, far, longest):
    from tilescope.clients.profiler.reuse import Runs, _cover, _scattered

    owner = rng.integers(0, owners, 400)
    start = rng.integers(-30, 60, 400) + far * rng.integers(0, 2, 400)
    runs = Runs(owner, start, start + rng.integers(1, longest + 1, 400))
    touched: dict[int, set] = {}
    for o, s, e in zip(owner.tolist(), runs.start.tolist(), runs.end.tolist(), strict=True):
        touched.setdefault(o, set()).update(range(s, e))
    merged = runs.merged()
    assert np.all(merged.start < merged.end) and np.all(np.diff(merged.owner) >= 0)
    found: dict[int, set] = {}
    for o, s, e in zip(merged.owner.tolist(), merged.start.tolist(), merged.end.tolist(), strict=True):
        assert not found.get(o, set()) & set(range(s - 1, e + 1)), "merged runs overlap or touch"
        found.setdefault(o, set()).update(range(s, e))
    assert found == touched
    every = [x for sectors in touched.values() for x in sectors]
    assert _cover(merged) == (len(set(every)), max(every.count(x) for x in set(every)))
    # runs of one or two sectors: the same figures by one sort of (sector, program) keys
    halves = [Runs(runs.owner[k::2], runs.start[k::2], runs.end[k::2]) for k in (0, 1)]  # in two parts
    scattered = _scattered(halves, owners)
    if longest <= 2 and far < 1 << 60:
        assert scattered == (len(every), len(set(every)), max(every.count(x) for x in set(every)))
    else:  # longer runs, or keys that would not fit an int64: merged per program instead
        assert scattered is None
