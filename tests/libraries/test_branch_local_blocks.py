"""A habit of flash-linear-attention's kernels: both sides of a branch the programs disagree on use the same
local name for blocks of different shapes (fla.ops.gsa's chunk_gsa_bwd_kernel_dA).

Triton's compiler keeps such names local to their side. The engine runs both sides under masks and cannot
merge the two blocks per program, so it splits the batch by the branch and replays each group; the split
used to be decided among the programs of one side only, which all agree, so the same batch replayed
forever (the backward of fla's chunk_gsa never returned).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

import tilescope


@triton.jit
def block_tril_scores(v, do, dA, T, BT: tl.constexpr, BC: tl.constexpr, BV: tl.constexpr, NC: tl.constexpr):
    # one program per (sub-chunk i, sub-chunk j) pair of a chunk: dA[i-block, j-block] = do_i . v_j
    i_t, i_c = tl.program_id(0), tl.program_id(1)
    i_i, i_j = i_c // NC, i_c % NC
    if i_t * BT + i_i * BC >= T:
        return
    o_c = i_t * BT + i_i * BC + tl.arange(0, BC)
    o_v = tl.arange(0, BV)
    m_c = o_c < T
    b_do = tl.load(do + o_c[:, None] * BV + o_v[None, :], mask=m_c[:, None], other=0.0)
    b_dA = tl.zeros([BC, BC], dtype=tl.float32)
    if i_i > i_j:
        o_j = i_t * BT + i_j * BC + tl.arange(0, BC)
        p_v = v + o_v[:, None] + o_j[None, :] * BV  # [BV, BC] pointers
        b_v = tl.load(p_v, mask=(o_j < T)[None, :], other=0.0)
        b_dA = tl.dot(b_do, b_v, input_precision="ieee")
    elif i_i == i_j:
        o_i = tl.arange(0, BC)
        p_v = v + (i_t * BT + i_j * BC) * BV + o_v  # [BV] pointers: one row at a time
        for j in range(0, min(BC, T - i_t * BT - i_j * BC)):
            b_v = tl.load(p_v)
            b_dAj = tl.sum(b_do * b_v[None, :], 1)
            b_dA = tl.where((o_i == j)[None, :] & (o_i >= j)[:, None], b_dAj[:, None], b_dA)
            p_v += BV
    o_jA = i_j * BC + tl.arange(0, BC)
    tl.store(dA + o_c[:, None] * BT + o_jA[None, :], b_dA, mask=m_c[:, None])


def test_branch_sides_with_different_block_shapes_under_one_name():
    T, BT, BC, BV = 40, 64, 16, 32  # 40 rows: the last sub-chunk pairs are past the end and return early
    nc = BT // BC
    v, do = torch.randn(T, BV), torch.randn(T, BV)
    dA = torch.zeros(T, BT)
    grid = (triton.cdiv(T, BT), nc * nc)
    tilescope.trace(block_tril_scores)[grid](v, do, dA, T, BT=BT, BC=BC, BV=BV, NC=nc)
    scores = do.double() @ v.double().T
    rows, cols = torch.meshgrid(torch.arange(T), torch.arange(T), indexing="ij")
    expected = torch.where(cols <= rows, scores, 0.0)  # blocks below the diagonal whole, diagonal ones lower
    torch.testing.assert_close(dA[:, :T].double(), expected, rtol=1e-5, atol=1e-5)
