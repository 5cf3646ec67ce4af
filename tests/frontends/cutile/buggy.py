"""cuTile kernels with undefined behaviour cuTile leaves to the programmer; faulty lines end in ``# BUG``."""

from __future__ import annotations

import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def scale_unchecked(x, out, tile: ConstInt):
    """A load with bounds checks turned off, on an array whose size is not a multiple of the tile."""
    bid = ct.bid(0)
    t = ct.load(x, index=(bid,), shape=(tile,), check_bounds=False)  # BUG load
    ct.store(out, index=(bid,), tile=t * 2.0)


@ct.kernel
def copy_rows(x, out, tm: ConstInt, tn: ConstInt):
    """A row-block copy launched with one block too many: that block's tiles lie entirely outside."""
    bid = ct.bid(0)
    t = ct.load(x, index=(bid, 0), shape=(tm, tn))  # BUG load
    ct.store(out, index=(bid, 0), tile=t)  # BUG store


@ct.kernel
def gather_unchecked(ids, table, out, tile_rows: ConstInt, dim: ConstInt):
    """An embedding lookup with bounds checks off: an id past the table's rows reads outside it."""
    bid = ct.bid(0)
    rows = ct.load(ids, index=(bid,), shape=(tile_rows,))
    cols = ct.arange(dim, dtype=ct.int32)
    where = (ct.expand_dims(rows, 1), ct.expand_dims(cols, 0))
    vectors = ct.gather(table, where, check_bounds=False)  # BUG gather
    ct.store(out, index=(bid, 0), tile=vectors)


@ct.kernel
def column_sums_racy(x, sums, tm: ConstInt, tn: ConstInt):
    """Each block sums the columns of its rows into the same output tile (the blocks race)."""
    bid = ct.bid(0)
    t = ct.load(x, index=(bid, 0), shape=(tm, tn))
    ct.store(sums, index=(0, 0), tile=ct.sum(t, axis=0, keepdims=True))  # BUG race


@ct.kernel
def shift_rows_in_place(a, tm: ConstInt, tn: ConstInt):
    """Shifts row blocks up by one in place: a block reads the rows the next block overwrites."""
    bid = ct.bid(0)
    t = ct.load(a, index=(bid + 1, 0), shape=(tm, tn))  # BUG read
    ct.store(a, index=(bid, 0), tile=t)  # BUG write
