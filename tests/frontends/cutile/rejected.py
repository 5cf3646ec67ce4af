"""cuTile kernels that cuTile's compiler rejects; the frontend must reject them with cuTile's message."""

from __future__ import annotations

import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def mixed_half_precisions(a, b, c, tile: ConstInt):
    """bf16 + fp16: cuTile has no implicit promotion between the two."""
    bid = ct.bid(0)
    x = ct.load(a, index=(bid,), shape=(tile,))
    y = ct.load(b, index=(bid,), shape=(tile,))
    ct.store(c, index=(bid,), tile=x + y)  # BUG compile


@ct.kernel
def mma_mixed_operands(A, B, C, t: ConstInt):
    """ct.mma of an fp16 and an fp32 tile: mma does not promote its operands."""
    a = ct.load(A, index=(0, 0), shape=(t, t))
    b = ct.load(B, index=(0, 0), shape=(t, t))
    ct.store(C, index=(0, 0), tile=ct.mma(a, b, ct.zeros((t, t), dtype=ct.float32)))  # BUG compile


@ct.kernel
def wrong_index_rank(x, out, tile: ConstInt):
    """A 2-D array loaded with a 1-D index."""
    t = ct.load(x, index=(ct.bid(0),), shape=(tile,))  # BUG compile
    ct.store(out, index=(ct.bid(0),), tile=t)


@ct.kernel
def dynamic_tile_shape(x, out, n):
    """A tile shape from a runtime scalar: tile shapes must be compile-time constants."""
    t = ct.load(x, index=(0,), shape=(n,))  # BUG compile
    ct.store(out, index=(0,), tile=t)
