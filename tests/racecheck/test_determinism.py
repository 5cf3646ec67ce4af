"""The determinism check: split-K with fp32 atomics differs between schedules; integer and two-pass don't."""

import numpy as np
import torch
import triton
import triton.language as tl

import tilescope
from tilescope.clients.determinism import Determinism


@triton.jit
def split_k_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr, ACC: tl.constexpr):
    pid_m, pid_n, pid_k = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k0 in range(pid_k * BLOCK_K, K, SPLIT_K * BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :])
        b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :])
        acc += tl.dot(a, b, out_dtype=ACC)
    tl.atomic_add(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


@triton.jit
def row_partials(x_ptr, partial_ptr, N, BLOCK: tl.constexpr):
    row, chunk = tl.program_id(0), tl.program_id(1)
    offs = chunk * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + offs, mask=offs < N, other=0.0)
    tl.store(partial_ptr + row * tl.num_programs(1) + chunk, tl.sum(x))


@triton.jit
def row_finish(partial_ptr, out_ptr, CHUNKS: tl.constexpr):
    row = tl.program_id(0)
    tl.store(out_ptr + row, tl.sum(tl.load(partial_ptr + row * CHUNKS + tl.arange(0, CHUNKS))))


M, N, K = 16, 16, 256


def _matmul(rng, dtype, acc):
    if dtype == torch.int8:
        a = torch.from_numpy(rng.integers(-50, 50, (M, K)).astype(np.int8))
        b = torch.from_numpy(rng.integers(-50, 50, (K, N)).astype(np.int8))
        c = torch.zeros(M, N, dtype=torch.int32)
    else:
        a = torch.from_numpy(rng.standard_normal((M, K)).astype(np.float32) + 0.5)
        b = torch.from_numpy(rng.standard_normal((K, N)).astype(np.float32) + 0.5)
        c = torch.zeros(M, N)
    client = Determinism()
    tilescope.trace(split_k_matmul, clients=[client], schedules=4)[(1, 1, 8)](
        a, b, c, M, N, K, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, SPLIT_K=8, ACC=acc)
    return client.report(), a, b, c


def test_fp32_atomic_split_k_is_reported_at_the_atomic_with_the_spread():
    report, a, b, c = _matmul(np.random.default_rng(0), torch.float32, tl.float32)
    np.testing.assert_allclose(c.numpy(), a.double().numpy() @ b.double().numpy(), rtol=2e-2, atol=2e-2)
    (finding,) = report.findings
    assert finding.kind == "nondeterministic result"
    assert finding.line == split_k_matmul.fn.__code__.co_firstlineno + 12  # the tl.atomic_add line
    d = finding.details
    assert d["argument"] == "c_ptr" and d["seeds"] == [0, 1, 2, 3]
    assert 0 < d["elements"] <= M * N and d["access"].startswith("atomic add (sem=acq_rel")
    assert 0 < d["max_spread"] < 1e-3 * np.abs(a.double().numpy() @ b.double().numpy()).max()
    assert len(set(d["values"])) > 1  # the seeds left different values in the first element
    assert "fixed order" in report.to_text() and "seed 0:" in report.to_text()


def test_integer_split_k_is_deterministic():
    report, a, b, c = _matmul(np.random.default_rng(1), torch.int8, tl.int32)
    np.testing.assert_array_equal(c.numpy(), a.numpy().astype(np.int64) @ b.numpy().astype(np.int64))
    assert report.findings == [] and report.summary["launches"] == 1


def test_two_pass_reduction_is_deterministic():
    rng = np.random.default_rng(2)
    x = torch.from_numpy(rng.standard_normal((4, 1000)).astype(np.float32) + 0.5)
    partial, out = torch.zeros(4 * 8), torch.zeros(4)
    client = Determinism()
    tilescope.trace(row_partials, clients=[client], schedules=3)[(4, 8)](x, partial, 1000, BLOCK=128)
    tilescope.trace(row_finish, clients=[client], schedules=3)[(4,)](partial, out, CHUNKS=8)
    np.testing.assert_allclose(out.numpy(), x.double().numpy().sum(axis=1), rtol=1e-5)
    report = client.report()
    assert report.findings == [] and report.summary["launches"] == 2


def test_a_single_schedule_is_counted_as_unchecked():
    client = Determinism()
    x = torch.ones(4, 128)
    tilescope.trace(row_partials, clients=[client])[(4, 1)](x, torch.zeros(4), 128, BLOCK=128)
    assert client.report().summary == {"launches": 0, "findings": 0, "unchecked_launches": 1}
