"""Benchmark workloads shared by the engine, sanitizer and tracer benchmarks.

Each workload builds fresh random inputs, launches one kernel through a launcher factory (``wrap``:
identity for Triton itself, ``tilescope.trace`` for the engine) and checks the result against a
float64 reference, so a fast wrong answer never counts. Each also has a *floor*: the same result
computed with vectorized NumPy (BLAS for the products), moving the bytes the kernel must move; a
CPU engine cannot beat it by much. Dense workloads are here; the divergent ones (per-program loop
bounds and branches) are in ``divergent.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import divergent  # benchmarks/divergent.py (the script's folder is on sys.path)
import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    sam,
    sak,
    sbk,
    sbn,
    scm,
    scn,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * sam + offs_k[None, :] * sak
    b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_n[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BK), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BK) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    tl.store(
        c_ptr + offs_m[:, None] * scm + offs_n[None, :] * scn,
        acc,
        mask=(offs_m[:, None] < M) & (offs_n[None, :] < N),
    )


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride_in, stride_out, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride_in + offs, mask=offs < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * stride_out + offs, num / tl.sum(num, axis=0), mask=offs < n_cols)


@triton.jit
def attention_fwd_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr, N, sm_scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr
):
    start_m = tl.program_id(0)
    head = tl.program_id(1)
    base = head * N * D
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + base + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start_n in range(0, N, BN):
        offs_n = start_n + tl.arange(0, BN)
        k = tl.load(k_ptr + base + offs_n[:, None] * D + offs_d[None, :])
        v = tl.load(v_ptr + base + offs_n[:, None] * D + offs_d[None, :])
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * sm_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(o_ptr + base + offs_m[:, None] * D + offs_d[None, :], acc / l_i[:, None])


@triton.jit
def embedding_kernel(idx_ptr, w_ptr, out_ptr, D: tl.constexpr, ROWS: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    idx = tl.load(idx_ptr + rows)
    cols = tl.arange(0, D)
    vals = tl.load(w_ptr + idx[:, None] * D + cols[None, :])
    tl.store(out_ptr + rows[:, None] * D + cols[None, :], vals)


@triton.jit
def branch_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if pid % 2 == 0:
        y = x * 2.0 + 1.0
    else:
        y = tl.exp(x) - 1.0
    tl.store(out_ptr + offs, y, mask=mask)


@dataclass(frozen=True)
class Prepared:
    """Inputs made for one run: ``launch(wrap)`` (timed), ``error()`` after it, and the NumPy ``floor()``."""

    launch: Callable[[Callable], None]
    error: Callable[[], float]
    floor: Callable[[], object]


@dataclass(frozen=True)
class Workload:
    """One benchmark: ``prepare(rng)`` returns a :class:`Prepared`; ``divergent`` when control flow differs
    between programs."""

    name: str
    make: Callable[[np.random.Generator], tuple]
    tolerance: float
    divergent: bool = False

    def prepare(self, rng: np.random.Generator) -> Prepared:
        """Fresh inputs for one run."""
        return Prepared(*self.make(rng))

    def run(self, wrap: Callable, rng: np.random.Generator) -> float:
        """Prepare, launch and check once; returns the error."""
        prepared = self.prepare(rng)
        prepared.launch(wrap)
        return prepared.error()


def _vector_add(n: int) -> Callable:
    def prepare(rng):
        x = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
        y = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
        out = torch.full((n,), float("nan"))
        xs, ys, outs = x.numpy(), y.numpy(), np.empty(n, np.float32)
        return (
            lambda wrap: wrap(add_kernel)[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024),
            lambda: float((out.double() - (x.double() + y.double())).abs().max()),
            lambda: np.add(xs, ys, out=outs),
        )

    return prepare


def _matmul(n: int) -> Callable:
    def prepare(rng):
        a = torch.from_numpy(rng.standard_normal((n, n)).astype(np.float32))
        b = torch.from_numpy(rng.standard_normal((n, n)).astype(np.float32))
        c = torch.full((n, n), float("nan"))
        return (
            lambda wrap: wrap(matmul_kernel)[(triton.cdiv(n, 64), triton.cdiv(n, 64))](
                a, b, c, n, n, n, *a.stride(), *b.stride(), *c.stride(), BM=64, BN=64, BK=32
            ),
            lambda: float((c.double() - a.double() @ b.double()).abs().max() / np.sqrt(n)),
            lambda: a.numpy() @ b.numpy(),
        )

    return prepare


def _softmax(rows: int, cols: int) -> Callable:
    def prepare(rng):
        x = torch.from_numpy(rng.standard_normal((rows, cols)).astype(np.float32))
        o = torch.full_like(x, float("nan"))
        block = triton.next_power_of_2(cols)
        xs = x.numpy()

        def floor():
            e = np.exp(xs - xs.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)

        return (
            lambda wrap: wrap(softmax_kernel)[(rows,)](o, x, x.stride(0), o.stride(0), cols, BLOCK=block),
            lambda: float((o.double() - torch.softmax(x.double(), 1)).abs().max()),
            floor,
        )

    return prepare


def _attention(heads: int, n: int, d: int) -> Callable:
    def prepare(rng):
        q, k, v = (torch.from_numpy(rng.standard_normal((heads, n, d)).astype(np.float32)) for _ in range(3))
        o = torch.full_like(q, float("nan"))
        scale = 1.0 / np.sqrt(d)

        def error():
            ref = torch.softmax(q.double() @ k.double().transpose(1, 2) * scale, -1) @ v.double()
            return float((o.double() - ref).abs().max())

        def floor():
            qs, ks, vs = q.numpy(), k.numpy(), v.numpy()
            s = qs @ ks.transpose(0, 2, 1) * scale
            p = np.exp(s - s.max(axis=2, keepdims=True))
            return (p / p.sum(axis=2, keepdims=True)) @ vs

        return (
            lambda wrap: wrap(attention_fwd_kernel)[(n // 64, heads)](
                q, k, v, o, n, scale, D=d, BM=64, BN=64
            ),
            error,
            floor,
        )

    return prepare


def _embedding(programs: int, rows: int, d: int, vocab: int) -> Callable:
    def prepare(rng):
        idx = torch.from_numpy(rng.integers(0, vocab, programs * rows).astype(np.int64))
        w = torch.from_numpy(rng.standard_normal((vocab, d)).astype(np.float32))
        out = torch.full((programs * rows, d), float("nan"))
        return (
            lambda wrap: wrap(embedding_kernel)[(programs,)](idx, w, out, D=d, ROWS=rows),
            lambda: float((out - w[idx]).abs().max()),
            lambda: np.take(w.numpy(), idx.numpy(), axis=0),
        )

    return prepare


def _branch(n: int) -> Callable:
    def prepare(rng):
        x = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
        out = torch.full((n,), float("nan"))

        def error():
            pid = torch.arange(n) // 1024
            ref = torch.where(pid % 2 == 0, x.double() * 2 + 1, torch.exp(x.double()) - 1)
            return float((out.double() - ref).abs().max())

        def floor():
            xs = x.numpy()
            even = (np.arange(n) // 1024) % 2 == 0
            return np.where(even, xs * 2 + 1, np.exp(xs) - 1)

        return lambda wrap: wrap(branch_kernel)[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024), error, floor

    return prepare


WORKLOADS = [
    Workload("vector_add_2^20", _vector_add(2**20), 1e-6),
    Workload("vector_add_2^22", _vector_add(2**22), 1e-6),
    Workload("matmul_fp32_256", _matmul(256), 1e-4),
    Workload("matmul_fp32_512", _matmul(512), 1e-4),
    Workload("matmul_fp32_1024", _matmul(1024), 1e-4),
    Workload("softmax_4096x1024", _softmax(4096, 1024), 1e-6),
    Workload("flash_attention_fwd", _attention(2, 512, 64), 1e-4),
    Workload("embedding_gather_4096", _embedding(4096, 16, 64, 50000), 0.0),
    Workload("program_branch", _branch(2**20), 1e-4),  # tl.exp on the GPU: ex2.approx(x * log2 e)
    Workload("csr_spmv_4096", divergent.csr_spmv(4096), 1e-4, divergent=True),
    Workload("binary_search_16384", divergent.binary_search(16384, 2**20), 0.0, divergent=True),
    Workload("moe_skewed_8x4096", divergent.moe(4096, 8, 128, 128), 1e-4, divergent=True),
    Workload("paged_decode_64x8", divergent.paged_decode(64, 8, 64, 16), 1e-4, divergent=True),
    Workload("varlen_attention_32x4", divergent.varlen_attention(32, 4, 64), 1e-4, divergent=True),
    Workload("ragged_layernorm_2048", divergent.ragged_layernorm(2048), 1e-4, divergent=True),
]
