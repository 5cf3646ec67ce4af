"""Data at memory speed: accesses that move whole blocks instead of per-lane indices give the same bits.

Two read paths skip per-lane index arrays: a proven access whose programs start unevenly (the tiles
of a 2-D grid) copies each program's block through a strided window (a write of every lane of such
an access too, undone block by block), and an embedding lookup's
address ``w + idx[:, None] * D + cols[None, :]`` (per-row pointers from data plus shared columns)
is proven row by row and copied a row at a time. Both are checked against the per-lane gather they
replace, and through real kernels against float64 references; a bad row index still fails at the
user's line with the element named.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from hypothesis import given, settings
from hypothesis import strategies as st

import tilescope
from tilescope.engine import access, affine
from tilescope.engine.memory import Access, AddressTable, Storage


def _storage(n: int, rng: np.random.Generator) -> tuple[Storage, np.ndarray]:
    values = rng.standard_normal(n).astype(np.float32)
    buf = values.view(np.uint8)
    return Storage(buf.ctypes.data, buf.nbytes, buf), values


@settings(max_examples=200, deadline=None)
@given(
    programs=st.integers(2, 9),
    rows=st.integers(1, 6),
    cols=st.integers(2, 12),
    col_step=st.integers(-3, 4),
    seed=st.integers(0, 2**16),
)
def test_row_box_reads_what_a_per_lane_gather_reads(programs, rows, cols, col_step, seed):
    rng = np.random.default_rng(seed)
    storage, values = _storage(600, rng)
    size = values.itemsize
    first = rng.integers(0, 600, (programs, rows, 1))
    row_ptrs = storage.base + first * size
    col_block = (np.arange(cols) * col_step)[None, None, :]
    addr = affine.rows_plus(row_ptrs, affine.Affine(np.zeros(1, np.int64), col_block), size)
    assert addr is not None
    elements = (addr.materialize(np.int64) - storage.base) // size
    inside = bool(np.all((elements >= 0) & (elements < values.size)))
    box = access.row_box(addr, storage, size, storage.base, storage.base + storage.nbytes)
    assert (box is not None) == inside  # proven exactly when every lane is in bounds
    if box is not None:
        shape = elements.shape
        np.testing.assert_array_equal(box.gather(np.float32, shape), values[elements])
        np.testing.assert_array_equal(box.indices(shape), elements)


@settings(max_examples=200, deadline=None)
@given(
    grid_m=st.integers(1, 5),
    grid_n=st.integers(1, 5),
    tile=st.sampled_from([(2, 3), (4, 4), (1, 8)]),
    seed=st.integers(0, 2**16),
)
def test_uneven_program_starts_read_what_a_per_lane_gather_reads(grid_m, grid_n, tile, seed):
    rng = np.random.default_rng(seed)
    rows, cols = grid_m * tile[0], grid_n * tile[1] + int(rng.integers(0, 3))
    storage, values = _storage(rows * cols, rng)
    size = values.itemsize
    pid_m, pid_n = np.divmod(np.arange(grid_m * grid_n), grid_n)  # a 2-D grid, flattened row-major
    scalar = storage.base + (pid_m * tile[0] * cols + pid_n * tile[1]) * size
    block = ((np.arange(tile[0])[:, None] * cols + np.arange(tile[1])[None, :]) * size)[None]
    addr = affine.Affine(scalar.astype(np.int64), block.astype(np.int64))
    shape = (scalar.size, *tile)
    even = np.unique(np.diff(scalar)).size <= 1
    assert (access.strided_box(addr, storage, size, shape) is not None) == even  # one view when even
    box = access.strided_box(addr, storage, size, shape, per_program=True)
    assert box is not None
    elements = (addr.materialize(np.int64) - storage.base) // size
    np.testing.assert_array_equal(box.gather(np.float32, shape), values[elements])
    np.testing.assert_array_equal(box.indices(shape), elements)

    # a write of every lane moves block by block too: a read in the same attempt sees it, a
    # rollback leaves the old values, a commit writes it
    table = AddressTable()
    ok = np.broadcast_to(True, shape)
    whole = Access(ok, ~ok, ~ok, [(storage, ok, None)], None, box, whole=True)
    written = rng.standard_normal(shape).astype(np.float32)
    before = values.copy()
    expected = before.copy()
    expected[elements] = written
    for read_back in (False, True):
        mark = table.mark()
        table.scatter(whole, written, np.float32)
        if read_back:
            np.testing.assert_array_equal(table.gather(whole, np.float32, None), written)
            np.testing.assert_array_equal(values, expected)
        table.rollback(mark)
        np.testing.assert_array_equal(values, before)
    mark = table.mark()
    table.scatter(whole, written, np.float32)
    table.commit(mark)
    np.testing.assert_array_equal(values, expected)


@triton.jit
def embedding_forward(ids_ptr, weight_ptr, out_ptr, n_tokens, dim,
                      BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):  # fmt: skip
    # as in embedding layers of LLM kernel libraries: a block of tokens per program, whole rows each
    tokens = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    ids = tl.load(ids_ptr + tokens, mask=tokens < n_tokens, other=0)
    cols = tl.arange(0, BLOCK_D)
    rows = tl.load(weight_ptr + ids[:, None] * dim + cols[None, :], mask=cols[None, :] < dim, other=0.0)
    tl.store(out_ptr + tokens[:, None] * dim + cols[None, :], rows, mask=(tokens[:, None] < n_tokens) &
             (cols[None, :] < dim))  # fmt: skip


@pytest.mark.parametrize("dim, block_d", [(64, 64), (48, 64)])  # whole rows, and rows padded by the mask
def test_embedding_lookup_matches_indexing(dim, block_d):
    rng = np.random.default_rng(7)
    vocab, n_tokens = 1000, 300
    ids = torch.from_numpy(rng.integers(0, vocab, n_tokens))
    weight = torch.from_numpy(rng.standard_normal((vocab, dim)).astype(np.float32))
    out = torch.full((n_tokens, dim), float("nan"))
    tilescope.trace(embedding_forward)[(triton.cdiv(n_tokens, 16),)](
        ids, weight, out, n_tokens, dim, BLOCK_T=16, BLOCK_D=block_d
    )
    np.testing.assert_array_equal(out.numpy(), weight.double().numpy()[ids.numpy()].astype(np.float32))


def test_embedding_lookup_with_a_bad_id_fails_at_the_load():
    rng = np.random.default_rng(8)
    vocab, dim, n_tokens = 500, 32, 64
    ids = torch.from_numpy(rng.integers(0, vocab, n_tokens))
    ids[37] = vocab  # one id past the table
    weight = torch.from_numpy(rng.standard_normal((vocab, dim)).astype(np.float32))
    out = torch.zeros((n_tokens, dim))
    with pytest.raises(tilescope.OutOfBoundsError) as info:
        tilescope.trace(embedding_forward)[(4,)](ids, weight, out, n_tokens, dim, BLOCK_T=16, BLOCK_D=dim)
    text = str(info.value)
    assert "embedding_forward" in text and "rows = tl.load(weight_ptr" in text
    assert f"`weight_ptr` (fp32[{vocab}, {dim}])" in text and f"weight_ptr[{vocab}, 0]" in text
    assert "program (2, 0, 0)" in text  # token 37 is in the third block of 16


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):  # fmt: skip
    # Triton's matmul tutorial on a 2-D grid, masked at the edges: programs' tiles start unevenly
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_bn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=(offs_am[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_K) & (offs_bn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, acc, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@pytest.mark.parametrize("m, n, k", [(128, 96, 80), (64, 160, 64), (100, 70, 50)])
def test_two_dimensional_grid_matmul_matches_float64(m, n, k):
    rng = np.random.default_rng(9)
    a = torch.from_numpy(rng.standard_normal((m, k)).astype(np.float32))
    b = torch.from_numpy(rng.standard_normal((k, n)).astype(np.float32))
    c = torch.full((m, n), float("nan"))
    tilescope.trace(matmul_kernel)[(triton.cdiv(m, 32), triton.cdiv(n, 32))](
        a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride(), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32
    )
    ref = a.double().numpy() @ b.double().numpy()
    np.testing.assert_allclose(c.numpy(), ref, rtol=0, atol=1e-5 * np.sqrt(k) * np.abs(ref).max())
