"""NKI kernels written the way AWS's NKI tutorials write them, for tilescope's NKI frontend.

Each kernel takes HBM tensors and returns its outputs (``nl.shared_hbm``) or writes into a given
one. Shapes follow the hardware's rules: 128 partitions, PSUM tiles of at most 512 fp32.
"""

from __future__ import annotations

import math

import tilescope.frontends.nki.isa as nisa
import tilescope.frontends.nki.language as nl
from tilescope.frontends import nki

PMAX = nl.tile_size.pmax


@nki.jit
def tensor_add(a_input, b_input):
    """c = a + b over a 2-D grid of (128, 512) tiles."""
    c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
    offset_x = nl.program_id(0) * 128
    offset_y = nl.program_id(1) * 512
    ix = offset_x + nl.arange(128)[:, None]
    iy = offset_y + nl.arange(512)[None, :]
    a_tile = nl.load(a_input[ix, iy])
    b_tile = nl.load(b_input[ix, iy])
    nl.store(c_output[ix, iy], value=a_tile + b_tile)
    return c_output


@nki.jit
def scaled_add_ragged(x, y, out, alpha):
    """out = alpha * x + y for a row count that is not a multiple of 128 (masked tail)."""
    rows, cols = x.shape
    ix = nl.arange(PMAX)[:, None]
    iy = nl.arange(cols)[None, :]
    for t in nl.affine_range(math.ceil(rows / PMAX)):
        row = t * PMAX + ix
        x_tile = nl.load(x[row, iy], mask=(row < rows))
        y_tile = nl.load(y[row, iy], mask=(row < rows))
        nl.store(out[row, iy], value=nl.add(nl.multiply(x_tile, alpha), y_tile), mask=(row < rows))


@nki.jit
def softmax(x):
    """Row softmax; one program per block of 128 rows, each row whole in the free dimension."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows = nl.program_id(0) * PMAX + nl.arange(PMAX)[:, None]
    cols = nl.arange(x.shape[1])[None, :]
    tile = nl.load(x[rows, cols])
    row_max = nl.max(tile, axis=1, keepdims=True)
    e = nl.exp(tile - row_max)
    total = nl.sum(e, axis=1, keepdims=True)
    nl.store(out[rows, cols], value=e / total)
    return out


@nki.jit
def matmul_tiled(lhsT, rhs):
    """result = lhsT.T @ rhs: (K, M) and (K, N), tiles of 128 x 128 x 512 accumulated in PSUM."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    TILE_M, TILE_K, TILE_N = nl.tile_size.gemm_stationary_fmax, PMAX, nl.tile_size.gemm_moving_fmax
    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                lhsT_tile = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                rhs_tile = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                res_psum += nisa.nc_matmul(lhsT_tile, rhs_tile)
            res_sb = nl.copy(res_psum, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=res_sb)
    return result


@nki.jit
def matmul_spmd(a, b):
    """c = a @ b with nl.matmul; program (i, j) computes one (128, 512) block, K in steps of 128."""
    M, K = a.shape
    _, N = b.shape
    c = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    i, j = nl.program_id(0), nl.program_id(1)
    acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        a_tile = nl.load(a[nl.ds(i * 128, 128), nl.ds(k * 128, 128)])
        b_tile = nl.load(b[nl.ds(k * 128, 128), nl.ds(j * 512, 512)])
        acc += nl.matmul(a_tile, b_tile)
    nl.store(c[nl.ds(i * 128, 128), nl.ds(j * 512, 512)], value=acc)
    return c


@nki.jit
def rmsnorm(a_tensor, g_tensor):
    """out = a * rsqrt(mean(a^2)) * g over rows, 128 rows a step, masked tail."""
    out_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    num_rows, width = a_tensor.shape
    ix = nl.arange(PMAX)[:, None]
    iw = nl.arange(1)[:, None]
    iy = nl.arange(width)[None, :]
    g_tile = nl.load(g_tensor.reshape((1, width))[iw, iy])
    for i in nl.affine_range(math.ceil(num_rows / PMAX)):
        rows = i * PMAX + ix
        a_tile = nl.load(a_tensor[rows, iy], mask=(rows < num_rows))
        square_sum = nl.sum(nl.square(a_tile), axis=[1], keepdims=True)
        rms_reciprocal = nl.rsqrt(square_sum / width)
        out_tile = nl.multiply(a_tile, rms_reciprocal)
        out_tile[...] = nl.multiply(out_tile, g_tile.broadcast_to((PMAX, width)), mask=(rows < num_rows))
        nl.store(out_tensor[rows, iy], value=out_tile, mask=(rows < num_rows))
    return out_tensor


@nki.jit
def layernorm(x, gamma, beta, eps):
    """out = (x - mean) / sqrt(var + eps) * gamma + beta; one program per 128 rows."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    width = x.shape[1]
    rows = nl.program_id(0) * PMAX + nl.arange(PMAX)[:, None]
    cols = nl.arange(width)[None, :]
    x_tile = nl.load(x[rows, cols], dtype=nl.float32)
    g_tile = nl.load(gamma.reshape((1, width))[nl.arange(1)[:, None], cols])
    b_tile = nl.load(beta.reshape((1, width))[nl.arange(1)[:, None], cols])
    mean = nl.mean(x_tile, axis=1, keepdims=True)
    centered = x_tile - mean
    var = nl.mean(nl.square(centered), axis=1, keepdims=True)
    normed = centered * nl.rsqrt(var + eps)
    nl.store(out[rows, cols], value=normed * g_tile + b_tile)
    return out


@nki.jit
def transpose_2d(x):
    """out = x.T, one (128, 128) block per program of a 2-D grid."""
    rows, cols = x.shape
    out = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)
    bi, bj = nl.program_id(0), nl.program_id(1)
    i_p, i_f = nl.mgrid[0:128, 0:128]
    block = nl.load(x[bi * 128 + i_p, bj * 128 + i_f])
    nl.store(out[bj * 128 + i_p, bi * 128 + i_f], value=nl.transpose(block))
    return out


@nki.jit
def attention(q, k, v):
    """softmax(Q K^T / sqrt(d)) V for one head: q, k as (d, seq) (d on partitions), v as (seq, d).

    One program per 128 queries; all 512 keys at once in PSUM; probabilities transposed block by
    block to contract over keys.
    """
    d, seq_q = q.shape
    _, seq_k = k.shape
    out = nl.ndarray((seq_q, d), dtype=nl.float32, buffer=nl.shared_hbm)
    qb = nl.program_id(0)
    q_tile = nl.load(q[:, nl.ds(qb * 128, 128)])
    k_tile = nl.load(k[:, :])
    scores = nl.multiply(nisa.nc_matmul(q_tile, k_tile), 1.0 / math.sqrt(d))
    row_max = nl.max(scores, axis=1, keepdims=True)
    probs = nisa.activation(nl.exp, scores, bias=-row_max)
    denom = nl.sum(probs, axis=1, keepdims=True)
    acc = nl.zeros((128, d), nl.float32, buffer=nl.psum)
    for kb in nl.affine_range(seq_k // 128):
        probs_t = nl.transpose(probs[:, kb * 128:(kb + 1) * 128])
        v_tile = nl.load(v[kb * 128:(kb + 1) * 128, :])
        acc += nisa.nc_matmul(probs_t, v_tile)
    nl.store(out[nl.ds(qb * 128, 128), :], value=nl.divide(acc, denom))
    return out


@nki.jit
def bias_gelu_stats(x, bias, out, row_sums):
    """out = tanh-GELU(x + bias) with nisa instructions, and each row's sum into row_sums."""
    rows, cols = x.shape
    i_p = nl.program_id(0) * PMAX + nl.arange(PMAX)[:, None]
    i_f = nl.arange(cols)[None, :]
    x_tile = nl.load(x[i_p, i_f])
    b_tile = nl.load(bias.reshape((1, cols))[nl.arange(1)[:, None], i_f]).broadcast_to((PMAX, cols))
    h = nisa.tensor_tensor(x_tile, b_tile, op=nl.add)
    cube = nisa.tensor_tensor(nl.square(h), h, op=nl.multiply)
    inner = nisa.tensor_scalar(cube, op0=nl.multiply, operand0=0.044715, op1=nl.add, operand1=0.0)
    inner = nisa.tensor_scalar(nisa.tensor_tensor(inner, h, op=nl.add), op0=nl.multiply,
                               operand0=math.sqrt(2.0 / math.pi))
    t = nisa.activation(nl.tanh, inner)
    y = nl.multiply(nl.multiply(h, 0.5), nisa.tensor_scalar(t, op0=nl.add, operand0=1.0))
    nl.store(out[i_p, i_f], value=y)
    total = nisa.tensor_reduce(nl.add, y, axis=1, keepdims=True)
    nl.store(row_sums[i_p, nl.arange(1)[None, :]], value=total)
