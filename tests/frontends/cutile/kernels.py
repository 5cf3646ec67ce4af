"""cuTile kernels written the way NVIDIA's cuTile samples write them (``import cuda.tile as ct``).

Tile shapes are compile-time constants (powers of two); arrays whose sizes are not multiples of the
tile rely on cuTile's defined padding for loads and on partial stores.
"""

from __future__ import annotations

import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def vector_add(a, b, c, tile: ConstInt):
    """c = a + b, one tile per block; the last tile is partial."""
    bid = ct.bid(0)
    a_tile = ct.load(a, index=(bid,), shape=(tile,))
    b_tile = ct.load(b, index=(bid,), shape=(tile,))
    ct.store(c, index=(bid,), tile=a_tile + b_tile)


@ct.kernel
def softmax_rows(x, out, tile_n: ConstInt):
    """Row softmax: one row per block, the row padded with -inf up to the tile width."""
    row = ct.bid(0)
    t = ct.load(x, index=(row, 0), shape=(1, tile_n), padding_mode=ct.PaddingMode.NEG_INF)
    t = ct.astype(t, ct.float32)
    e = ct.exp(t - ct.max(t, axis=1, keepdims=True))
    ct.store(out, index=(row, 0), tile=e / ct.sum(e, axis=1, keepdims=True))


@ct.kernel
def matmul(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """C = A @ B: fp16 operands, fp32 accumulation with ct.mma, zero padding on ragged K."""
    bidx, bidy = ct.bid(0), ct.bid(1)
    num_k = ct.num_tiles(A, axis=1, shape=(tm, tk))
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    zero_pad = ct.PaddingMode.ZERO
    for k in range(num_k):
        a = ct.load(A, index=(bidx, k), shape=(tm, tk), padding_mode=zero_pad)
        b = ct.load(B, index=(k, bidy), shape=(tk, tn), padding_mode=zero_pad)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(bidx, bidy), tile=ct.astype(acc, C.dtype))


@ct.kernel
def matmul_tf32(A, B, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
    """C = A @ B for fp32 arrays on the tensor cores: operands as tfloat32."""
    bidx, bidy = ct.bid(0), ct.bid(1)
    acc = ct.zeros((tm, tn), dtype=ct.float32)
    dtype = ct.tfloat32 if A.dtype == ct.float32 else A.dtype
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(bidx, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO).astype(dtype)
        b = ct.load(B, index=(k, bidy), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO).astype(dtype)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(bidx, bidy), tile=acc)


@ct.kernel
def layer_norm(X, W, Bias, Y, n_cols: ConstInt, tile_n: ConstInt, eps: float):
    """Row layer norm; padded columns are masked out of the variance."""
    row = ct.bid(0)
    x = ct.load(X, index=(row, 0), shape=(1, tile_n), padding_mode=ct.PaddingMode.ZERO)
    w = ct.load(W, index=(0,), shape=(tile_n,), padding_mode=ct.PaddingMode.ZERO)
    b = ct.load(Bias, index=(0,), shape=(tile_n,), padding_mode=ct.PaddingMode.ZERO)
    mean = ct.sum(x, axis=1, keepdims=True) / n_cols
    valid = ct.expand_dims(ct.arange(tile_n, dtype=ct.int32) < n_cols, 0)
    centered = ct.where(valid, x - mean, 0.0)
    var = ct.sum(centered * centered, axis=1, keepdims=True) / n_cols
    y = centered * ct.rsqrt(var + eps) * ct.expand_dims(w, 0) + ct.expand_dims(b, 0)
    ct.store(Y, index=(row, 0), tile=y)


@ct.kernel
def transpose(x, out, tm: ConstInt, tn: ConstInt):
    """out = x.T: tile (i, j) of x read in F order becomes tile (j, i) of out."""
    i, j = ct.bid(0), ct.bid(1)
    t = ct.load(x, index=(j, i), shape=(tn, tm), order="F")
    ct.store(out, index=(j, i), tile=t)


@ct.kernel
def embedding(ids, table, out, tile_rows: ConstInt, dim: ConstInt):
    """out[r] = table[ids[r]]: row ids loaded as a tile, rows gathered."""
    bid = ct.bid(0)
    rows = ct.load(ids, index=(bid,), shape=(tile_rows,))
    cols = ct.arange(dim, dtype=ct.int32)
    vectors = ct.gather(table, (ct.expand_dims(rows, 1), ct.expand_dims(cols, 0)))
    ct.store(out, index=(bid, 0), tile=vectors)


@ct.function
def silu(x):
    return x / (1.0 + ct.exp(-x))


@ct.kernel
def swiglu(gate, up, out, tile: ConstInt):
    """out = silu(gate) * up in bf16, computed in fp32 (a helper function, promotion of bf16 with fp32)."""
    bid = ct.bid(0)
    g = ct.load(gate, index=(bid, 0), shape=(1, tile))
    u = ct.load(up, index=(bid, 0), shape=(1, tile))
    y = silu(ct.astype(g, ct.float32)) * u
    ct.store(out, index=(bid, 0), tile=ct.astype(y, out.dtype))


@ct.kernel
def row_sums(x, sums, tm: ConstInt, tn: ConstInt):
    """sums[r] = sum of row r, accumulated tile by tile along the columns."""
    bid = ct.bid(0)
    acc = ct.zeros((tm,), dtype=ct.float32)
    for j in range(ct.num_tiles(x, axis=1, shape=(tm, tn))):
        t = ct.load(x, index=(bid, j), shape=(tm, tn), padding_mode=ct.PaddingMode.ZERO)
        acc = acc + ct.sum(t, axis=1)
    ct.store(sums, index=(bid,), tile=acc)
