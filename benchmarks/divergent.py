"""Divergent benchmark workloads: kernels whose control flow differs per program, written like real code.

CSR SpMV over rows of skewed length, a per-program binary search, an MoE layer with skewed
per-expert token counts, paged-attention decode over a block table, varlen (packed) attention
forward, and a ragged-batch layernorm. Each builds fresh random values over fixed shapes (lengths and
counts come from :data:`SHAPE_SEED`, so a warm launch repeats the first one's work), checks against a float64
reference, and has a NumPy "floor": the same result computed by vectorized NumPy/BLAS, which moves
the bytes the kernel must move.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def csr_spmv_kernel(rowptr_ptr, cols_ptr, vals_ptr, x_ptr, y_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = tl.load(rowptr_ptr + row)
    end = tl.load(rowptr_ptr + row + 1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for j in range(start, end, BLOCK):
        offs = j + tl.arange(0, BLOCK)
        mask = offs < end
        cols = tl.load(cols_ptr + offs, mask=mask, other=0)
        vals = tl.load(vals_ptr + offs, mask=mask, other=0.0)
        acc += vals * tl.load(x_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def searchsorted_kernel(sorted_ptr, n, queries_ptr, out_ptr):
    pid = tl.program_id(0)
    q = tl.load(queries_ptr + pid)
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        go_right = tl.load(sorted_ptr + mid) < q
        lo = tl.where(go_right, mid + 1, lo)
        hi = tl.where(go_right, hi, mid)
    tl.store(out_ptr + pid, lo)


@triton.jit
def moe_kernel(x_ptr, w_ptr, out_ptr, offsets_ptr, K, N,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):  # fmt: skip
    expert = tl.program_id(0)
    pid_n = tl.program_id(1)
    start = tl.load(offsets_ptr + expert)
    end = tl.load(offsets_ptr + expert + 1)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    for m in range(start, end, BM):
        offs_m = m + tl.arange(0, BM)
        mask_m = offs_m < end
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(x_ptr + offs_m[:, None] * K + (k + offs_k)[None, :], mask=mask_m[:, None], other=0.0)
            b = tl.load(w_ptr + expert * K * N + (k + offs_k)[:, None] * N + offs_n[None, :])
            acc += tl.dot(a, b, input_precision="ieee")
        tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=mask_m[:, None])


@triton.jit
def paged_decode_kernel(q_ptr, k_cache_ptr, v_cache_ptr, block_table_ptr, seq_lens_ptr, out_ptr, scale,
                        H: tl.constexpr, D: tl.constexpr,
                        PAGE: tl.constexpr, MAX_PAGES: tl.constexpr):  # fmt: skip
    seq = tl.program_id(0)
    head = tl.program_id(1)
    length = tl.load(seq_lens_ptr + seq)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + (seq * H + head) * D + offs_d)
    m_i = -float("inf")
    l_i = 0.0
    acc = tl.zeros([D], dtype=tl.float32)
    for page in range(0, tl.cdiv(length, PAGE)):
        block = tl.load(block_table_ptr + seq * MAX_PAGES + page)
        offs = page * PAGE + tl.arange(0, PAGE)
        valid = offs < length
        rows = (block * H + head) * PAGE + tl.arange(0, PAGE)
        k = tl.load(k_cache_ptr + rows[:, None] * D + offs_d[None, :], mask=valid[:, None], other=0.0)
        v = tl.load(v_cache_ptr + rows[:, None] * D + offs_d[None, :], mask=valid[:, None], other=0.0)
        s = tl.where(valid, tl.sum(q[None, :] * k, axis=1) * scale, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        p = tl.exp(s - m_new)
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        m_i = m_new
    tl.store(out_ptr + (seq * H + head) * D + offs_d, acc / l_i)


@triton.jit
def varlen_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, cu_seqlens_ptr, scale,
                            H: tl.constexpr, D: tl.constexpr,
                            BM: tl.constexpr, BN: tl.constexpr):  # fmt: skip
    start_m = tl.program_id(0)
    seq = tl.program_id(1)
    head = tl.program_id(2)
    begin = tl.load(cu_seqlens_ptr + seq)
    length = tl.load(cu_seqlens_ptr + seq + 1) - begin
    if start_m * BM >= length:
        return
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, D)
    mask_m = offs_m < length
    q = tl.load(q_ptr + ((begin + offs_m[:, None]) * H + head) * D + offs_d[None, :], mask=mask_m[:, None])
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start_n in range(0, length, BN):
        offs_n = start_n + tl.arange(0, BN)
        mask_n = offs_n < length
        kv = ((begin + offs_n[:, None]) * H + head) * D + offs_d[None, :]
        k = tl.load(k_ptr + kv, mask=mask_n[:, None], other=0.0)
        v = tl.load(v_ptr + kv, mask=mask_n[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        s = tl.where(mask_n[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(o_ptr + ((begin + offs_m[:, None]) * H + head) * D + offs_d[None, :], acc / l_i[:, None],
             mask=mask_m[:, None])  # fmt: skip


@triton.jit
def ragged_layernorm_kernel(x_ptr, offsets_ptr, w_ptr, b_ptr, out_ptr, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = tl.load(offsets_ptr + row)
    end = tl.load(offsets_ptr + row + 1)
    n = (end - start).to(tl.float32)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(start, end, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        total += tl.load(x_ptr + cols, mask=cols < end, other=0.0)
    mean = tl.sum(total, axis=0) / n
    spread = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(start, end, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        d = tl.where(cols < end, tl.load(x_ptr + cols, mask=cols < end, other=0.0) - mean, 0.0)
        spread += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(spread, axis=0) / n + eps)
    for off in range(start, end, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < end
        x = tl.load(x_ptr + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols - start, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols - start, mask=mask, other=0.0)
        tl.store(out_ptr + cols, (x - mean) * rstd * w + b, mask=mask)


#: seeds the workloads' shapes (lengths, per-expert counts): every ``prepare`` draws the same ones, so a
#: warm launch runs the first launch's trip counts on fresh values (new lengths would be new work)
SHAPE_SEED = 0


def _shapes() -> np.random.Generator:
    """The generator of a workload's shapes: the same draws at every ``prepare``."""
    return np.random.default_rng(SHAPE_SEED)


def _skewed_lengths(count: int, mean: float, top: int) -> np.ndarray:
    """Lognormal lengths (a few long, many short), at least 1, at most ``top``; the same at every call."""
    return np.clip(_shapes().lognormal(np.log(mean), 1.0, count).astype(np.int64), 1, top)


def csr_spmv(rows: int) -> Callable:
    def prepare(rng):
        lengths = _skewed_lengths(rows, 48, 4000)
        rowptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        nnz = int(rowptr[-1])
        n_cols = 65536
        cols = rng.integers(0, n_cols, nnz).astype(np.int32)
        vals = rng.standard_normal(nnz).astype(np.float32)
        x = rng.standard_normal(n_cols).astype(np.float32)
        y = np.full(rows, np.nan, np.float32)
        args = [torch.from_numpy(a) for a in (rowptr, cols, vals, x, y)]

        def floor():
            np.add.reduceat(vals * x[cols], rowptr[:-1])

        def error():
            ref = np.add.reduceat(vals.astype(np.float64) * x[cols], rowptr[:-1])
            return float(np.abs(args[4].numpy() - ref).max() / np.sqrt(lengths.max()))

        return lambda wrap: wrap(csr_spmv_kernel)[(rows,)](*args, BLOCK=32), error, floor

    return prepare


def binary_search(queries: int, n: int) -> Callable:
    def prepare(rng):
        table = np.sort(rng.standard_normal(n)).astype(np.float32)
        q = rng.standard_normal(queries).astype(np.float32)
        out = np.full(queries, -1, np.int32)
        args = [torch.from_numpy(table), n, torch.from_numpy(q), torch.from_numpy(out)]

        def floor():
            np.searchsorted(table, q)

        return (
            lambda wrap: wrap(searchsorted_kernel)[(queries,)](*args),
            lambda: float(np.abs(args[3].numpy() - np.searchsorted(table, q)).max()),
            floor,
        )

    return prepare


def moe(tokens: int, experts: int, k: int, n: int) -> Callable:
    def prepare(rng):
        share = _shapes().zipf(1.6, experts).astype(np.float64)
        counts = np.maximum(1, (share / share.sum() * tokens).astype(np.int64))
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        total = int(offsets[-1])
        x = rng.standard_normal((total, k)).astype(np.float32)
        w = (rng.standard_normal((experts, k, n)) / np.sqrt(k)).astype(np.float32)
        out = np.full((total, n), np.nan, np.float32)
        args = [torch.from_numpy(a) for a in (x, w, out, offsets)]

        def floor():
            for e in range(experts):
                x[offsets[e] : offsets[e + 1]] @ w[e]

        def error():
            parts = [x[offsets[e] : offsets[e + 1]].astype(np.float64) @ w[e] for e in range(experts)]
            ref = np.concatenate(parts)
            return float(np.abs(args[2].numpy() - ref).max())

        grid = (experts, n // 64)
        return lambda wrap: wrap(moe_kernel)[grid](*args, k, n, BM=32, BN=64, BK=32), error, floor

    return prepare


def paged_decode(seqs: int, heads: int, d: int, page: int) -> Callable:
    def prepare(rng):
        lengths = _skewed_lengths(seqs, 600, 8192).astype(np.int32)
        pages = -(-lengths // page)
        max_pages = int(pages.max())
        total_pages = int(pages.sum())
        table = np.full((seqs, max_pages), -1, np.int32)
        order = rng.permutation(total_pages).astype(np.int32)
        at = 0
        for s in range(seqs):
            table[s, : pages[s]] = order[at : at + pages[s]]
            at += pages[s]
        q = rng.standard_normal((seqs, heads, d)).astype(np.float32)
        kc = rng.standard_normal((total_pages, heads, page, d)).astype(np.float32)
        vc = rng.standard_normal((total_pages, heads, page, d)).astype(np.float32)
        out = np.full((seqs, heads, d), np.nan, np.float32)
        scale = 1.0 / np.sqrt(d)
        args = [torch.from_numpy(a) for a in (q, kc, vc, table, lengths, out)]

        def reference(dtype):
            res = np.empty((seqs, heads, d))
            for s in range(seqs):
                blocks = table[s, : pages[s]]
                k = kc[blocks].transpose(1, 0, 2, 3).reshape(heads, -1, d)[:, : lengths[s]].astype(dtype)
                v = vc[blocks].transpose(1, 0, 2, 3).reshape(heads, -1, d)[:, : lengths[s]].astype(dtype)
                scores = np.einsum("hd,hnd->hn", q[s].astype(dtype), k) * scale
                p = np.exp(scores - scores.max(axis=1, keepdims=True))
                res[s] = np.einsum("hn,hnd->hd", p / p.sum(axis=1, keepdims=True), v)
            return res

        return (
            lambda wrap: wrap(paged_decode_kernel)[(seqs, heads)](
                *args, scale, H=heads, D=d, PAGE=page, MAX_PAGES=max_pages
            ),
            lambda: float(np.abs(args[5].numpy() - reference(np.float64)).max()),
            lambda: reference(np.float32),
        )

    return prepare


def varlen_attention(seqs: int, heads: int, d: int) -> Callable:
    def prepare(rng):
        lengths = _skewed_lengths(seqs, 160, 1024)
        cu = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        total = int(cu[-1])
        q, k, v = (rng.standard_normal((total, heads, d)).astype(np.float32) for _ in range(3))
        out = np.zeros((total, heads, d), np.float32)
        scale = 1.0 / np.sqrt(d)
        args = [torch.from_numpy(a) for a in (q, k, v, out, cu)]
        bm = 64

        def reference(dtype):
            res = np.empty((total, heads, d))
            for s in range(seqs):
                a, b = cu[s], cu[s + 1]
                qs, ks, vs = (t[a:b].transpose(1, 0, 2).astype(dtype) for t in (q, k, v))
                scores = qs @ ks.transpose(0, 2, 1) * scale
                p = np.exp(scores - scores.max(axis=2, keepdims=True))
                res[a:b] = ((p / p.sum(axis=2, keepdims=True)) @ vs).transpose(1, 0, 2)
            return res

        grid = (-(-int(lengths.max()) // bm), seqs, heads)
        return (
            lambda wrap: wrap(varlen_attention_kernel)[grid](*args, scale, H=heads, D=d, BM=bm, BN=64),
            lambda: float(np.abs(args[3].numpy() - reference(np.float64)).max()),
            lambda: reference(np.float32),
        )

    return prepare


def ragged_layernorm(rows: int) -> Callable:
    def prepare(rng):
        lengths = _skewed_lengths(rows, 700, 8192)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        x = rng.standard_normal(int(offsets[-1])).astype(np.float32)
        w = rng.standard_normal(int(lengths.max())).astype(np.float32)
        b = rng.standard_normal(int(lengths.max())).astype(np.float32)
        out = np.full_like(x, np.nan)
        args = [torch.from_numpy(a) for a in (x, offsets, w, b, out)]

        def reference(dtype):
            res = np.empty(x.shape)
            for r in range(rows):
                seg = x[offsets[r] : offsets[r + 1]].astype(dtype)
                norm = (seg - seg.mean()) / np.sqrt(seg.var() + 1e-5)
                res[offsets[r] : offsets[r + 1]] = norm * w[: len(seg)] + b[: len(seg)]
            return res

        return (
            lambda wrap: wrap(ragged_layernorm_kernel)[(rows,)](*args, 1e-5, BLOCK=256),
            lambda: float(np.abs(args[4].numpy() - reference(np.float64)).max()),
            lambda: reference(np.float32),
        )

    return prepare
