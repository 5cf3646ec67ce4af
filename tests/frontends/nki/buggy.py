"""NKI kernels with the bugs kernel authors make: out-of-bounds DMAs and broken tile rules.

The faulty line of each carries a ``# BUG`` comment; the tests find the line from it.
"""

from __future__ import annotations

import math

import tilescope.frontends.nki.isa as nisa
import tilescope.frontends.nki.language as nl
from tilescope.frontends import nki


@nki.jit
def rmsnorm_unmasked(a_tensor):
    """RMS norm of a row count that is not a multiple of 128, with the tail mask forgotten."""
    out = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    num_rows, width = a_tensor.shape
    ix = nl.arange(128)[:, None]
    iy = nl.arange(width)[None, :]
    for i in nl.affine_range(math.ceil(num_rows / 128)):
        a_tile = nl.load(a_tensor[i * 128 + ix, iy])  # BUG load
        rms = nl.rsqrt(nl.mean(nl.square(a_tile), axis=1, keepdims=True))
        nl.store(out[i * 128 + ix, iy], value=a_tile * rms)  # BUG store
    return out


@nki.jit
def softmax_shifted(x):
    """Softmax whose row offset is off by one: the last program reads one row past the end."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows = nl.program_id(0) * 128 + 1 + nl.arange(128)[:, None]
    cols = nl.arange(x.shape[1])[None, :]
    tile = nl.load(x[rows, cols])  # BUG load
    e = nl.exp(tile - nl.max(tile, axis=1, keepdims=True))
    nl.store(out[rows - 1, cols], value=e / nl.sum(e, axis=1, keepdims=True))
    return out


@nki.jit
def transpose_unswapped(x):
    """A blocked transpose that forgot to swap the block coordinates on the store."""
    rows, cols = x.shape
    out = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)
    bi, bj = nl.program_id(0), nl.program_id(1)
    i_p, i_f = nl.mgrid[0:128, 0:128]
    block = nl.load(x[bi * 128 + i_p, bj * 128 + i_f])
    nl.store(out[bi * 128 + i_p, bj * 128 + i_f], value=nl.transpose(block))  # BUG store
    return out


@nki.jit
def matmul_k_overrun(lhsT, rhs):
    """A K loop rounded up without a mask: the last K tile reads past both operands."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(math.ceil(K / 128)):
        lhsT_tile = nl.load(lhsT[k * 128:(k + 1) * 128, :])  # BUG load
        rhs_tile = nl.load(rhs[k * 128:(k + 1) * 128, :])
        acc += nisa.nc_matmul(lhsT_tile, rhs_tile)
    nl.store(result, value=acc)
    return result


@nki.jit
def double_height_tile(x):
    """Loads 256 rows into one tile: more partitions than SBUF has."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x[0:256, :])  # BUG partition
    nl.store(out[0:256, :], value=tile)
    return out


@nki.jit
def psum_too_wide(a, b):
    """A PSUM accumulator of 1024 fp32 per partition: twice a PSUM bank."""
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 1024), nl.float32, buffer=nl.psum)  # BUG psum
    acc += nl.matmul(nl.load(a), nl.load(b), transpose_x=True)  # BUG moving
    nl.store(out, value=acc)
    return out


@nki.jit
def column_sum_over_partitions(x):
    """Sums over the partition dimension, which NKI's reductions cannot do."""
    out = nl.ndarray((1, x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    total = nl.sum(nl.load(x), axis=0, keepdims=True)  # BUG reduce
    nl.store(out, value=total)
    return out


@nki.jit
def column_sums_racy(x, out):
    """Each program sums the columns of its 128 rows into the same output column (the programs race)."""
    i = nl.program_id(0)
    width = x.shape[1]
    block = nl.transpose(nl.load(x[i * 128 + nl.arange(128)[:, None], nl.arange(width)[None, :]]))
    sums = nl.sum(block, axis=1, keepdims=True)  # (width, 1): this program's column sums
    nl.store(out[nl.arange(width)[:, None], nl.arange(1)[None, :]], value=sums)  # BUG race


@nki.jit
def shift_rows_in_place(a):
    """a[r] = a[r + 1] in place, 128 rows per program: program p reads rows program p + 1 overwrites."""
    i = nl.program_id(0)
    cols = nl.arange(a.shape[1])[None, :]
    rows = i * 128 + nl.arange(128)[:, None]
    nxt = nl.load(a[rows + 1, cols], mask=(rows + 1 < a.shape[0]))  # BUG read
    nl.store(a[rows, cols], value=nxt, mask=(rows + 1 < a.shape[0]))  # BUG write
