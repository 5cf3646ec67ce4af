"""Gluon kernels with the bugs Gluon authors make, each line marked ``# BUG <tag>``.

Written like ``kernels.py`` (and Triton's Gluon tutorials), each with one mistake: a mask that
lets one lane past the end, a ring of shared buffers indexed one slot too far, an mbarrier phase
never toggled and a warp-specialised consumer that never frees a slot (both hang), a consumer
that frees its slot before reading it and a producer that refills one without waiting (races
between partitions), a TMA store whose source was never waited for, operands in two different
layouts, a blocked layout placing the wrong number of warps, more shared memory than a program
may have.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma

from tests.frontends.gluon.kernels import _add_load_partition, tma_load, tma_store


@gluon.jit
def scale_mask_off_by_one(x_ptr, y_ptr, n, scale, BLOCK: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([4], [32], [4], [0])
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout)
    mask = offs <= n  # one lane too many
    x = gl.load(x_ptr + offs, mask=mask)  # BUG load
    gl.store(y_ptr + offs, x * scale, mask=offs < n)


@gluon.jit
def row_sum_ring_overrun(
    x_desc, out_ptr, n_cols, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, NUM_BUFFERS: gl.constexpr
):
    # rows of x summed over column tiles, TMA loads double-buffered in a ring of NUM_BUFFERS slots
    layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    off_m = gl.program_id(0) * BLOCK_M
    bufs = gl.allocate_shared_memory(x_desc.dtype, [NUM_BUFFERS, BLOCK_M, BLOCK_N], x_desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [NUM_BUFFERS, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(NUM_BUFFERS):
        mbarrier.init(bars.index(i), count=1)
    acc = gl.zeros([BLOCK_M], gl.float32, gl.SliceLayout(1, layout))
    for t in range(gl.cdiv(n_cols, BLOCK_N)):
        slot = t % (NUM_BUFFERS + 1)  # the ring has NUM_BUFFERS slots, not NUM_BUFFERS + 1
        bar = bars.index(t % NUM_BUFFERS)
        mbarrier.expect(bar, x_desc.block_type.nbytes)
        tma_load(x_desc, [off_m, t * BLOCK_N], bar, bufs.index(slot))  # BUG ring
        mbarrier.wait(bar, (t // NUM_BUFFERS) & 1)
        acc += gl.sum(bufs.index(t % NUM_BUFFERS).load(layout), axis=1)
    rows = off_m + gl.arange(0, BLOCK_M, gl.SliceLayout(1, layout))
    gl.store(out_ptr + rows, acc)


@gluon.jit
def row_sum_phase_not_toggled(x_desc, out_ptr, n_cols, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    off_m = gl.program_id(0) * BLOCK_M
    buf = gl.allocate_shared_memory(x_desc.dtype, [BLOCK_M, BLOCK_N], x_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    acc = gl.zeros([BLOCK_M], gl.float32, gl.SliceLayout(1, layout))
    phase = 0
    for t in range(gl.cdiv(n_cols, BLOCK_N)):
        mbarrier.expect(bar, x_desc.block_type.nbytes)
        tma_load(x_desc, [off_m, t * BLOCK_N], bar, buf)
        mbarrier.wait(bar, phase)  # BUG phase
        acc += gl.sum(buf.load(layout), axis=1)
    rows = off_m + gl.arange(0, BLOCK_M, gl.SliceLayout(1, layout))
    gl.store(out_ptr + rows, acc)


@gluon.jit
def memcpy_without_wait(in_desc, out_desc, XBLOCK: gl.constexpr):
    pid = gl.program_id(0)
    smem = gl.allocate_shared_memory(in_desc.dtype, [XBLOCK], in_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, in_desc.block_type.nbytes)
    tma_load(in_desc, [pid * XBLOCK], bar, smem)  # BUG copy
    tma_store(out_desc, [pid * XBLOCK], smem)  # BUG read
    tma.store_wait(pendings=0)
    mbarrier.wait(bar, phase=0)
    mbarrier.invalidate(bar)


@gluon.jit
def bias_add_layout_mismatch(x_ptr, b_ptr, y_ptr, N: gl.constexpr, BLOCK_M: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    bias_layout: gl.constexpr = gl.BlockedLayout([1, 4], [1, 32], [4, 1], [1, 0])
    rows = gl.program_id(0) * BLOCK_M + gl.arange(0, BLOCK_M, gl.SliceLayout(1, layout))
    cols = gl.arange(0, N, gl.SliceLayout(0, layout))
    x = gl.load(x_ptr + rows[:, None] * N + cols[None, :])
    bias_cols = gl.arange(0, N, gl.SliceLayout(0, bias_layout))
    bias = gl.load(b_ptr + gl.expand_dims(bias_cols, 0))
    y = x + bias  # BUG layout
    gl.store(y_ptr + rows[:, None] * N + cols[None, :], y)


@gluon.jit
def copy_two_warp_layout(x_ptr, y_ptr, BLOCK: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([4], [32], [2], [0])  # written for num_warps=2
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout)  # BUG warps
    gl.store(y_ptr + offs, gl.load(x_ptr + offs))


@gluon.jit
def add_too_much_shared(
    a_desc, b_desc, c_desc, XBLOCK: gl.constexpr, YBLOCK: gl.constexpr, num_buffers: gl.constexpr
):
    layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [1, 4], [1, 0])
    ring: gl.constexpr = [num_buffers, XBLOCK, YBLOCK]
    a_smem = gl.allocate_shared_memory(a_desc.dtype, ring, a_desc.layout)
    b_smem = gl.allocate_shared_memory(b_desc.dtype, ring, b_desc.layout)  # BUG shared
    c_smem = gl.allocate_shared_memory(c_desc.dtype, [XBLOCK, YBLOCK], c_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
    tma_load(a_desc, [0, 0], bar, a_smem.index(0))
    tma_load(b_desc, [0, 0], bar, b_smem.index(0))
    mbarrier.wait(bar, phase=0)
    c_smem.store(a_smem.index(0).load(layout) + b_smem.index(0).load(layout))
    fence_async_shared()
    tma_store(c_desc, [0, 0], c_smem)
    tma.store_wait(pendings=0)


@gluon.jit
def _sum_partition_never_frees(
    out_ptr, a_bufs, b_bufs, ready, empty, xoff, n_tiles, XBLOCK: gl.constexpr, NUM_BUFFERS: gl.constexpr
):
    layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [1, 4], [1, 0])
    acc = gl.zeros([XBLOCK], gl.float32, gl.SliceLayout(1, layout))
    for i in range(n_tiles):
        slot = i % NUM_BUFFERS
        mbarrier.wait(ready.index(slot), (i // NUM_BUFFERS) & 1)  # BUG hang
        acc += gl.sum(a_bufs.index(slot).load(layout) + b_bufs.index(slot).load(layout), axis=1)
        # missing: mbarrier.arrive(empty.index(slot)), so the producer never reuses the slot
    gl.store(out_ptr + xoff + gl.arange(0, XBLOCK, gl.SliceLayout(1, layout)), acc)


@gluon.jit
def row_sum_warp_specialized_never_frees(
    a_desc, b_desc, out_ptr, ynumel, XBLOCK: gl.constexpr, YBLOCK: gl.constexpr, NUM_BUFFERS: gl.constexpr
):
    xoff = gl.program_id(0) * XBLOCK
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, [NUM_BUFFERS, XBLOCK, YBLOCK], a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, [NUM_BUFFERS, XBLOCK, YBLOCK], b_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [NUM_BUFFERS, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [NUM_BUFFERS, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(NUM_BUFFERS):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    n_tiles = gl.cdiv(ynumel, YBLOCK)
    gl.warp_specialize(
        [
            (
                _sum_partition_never_frees,
                (out_ptr, a_bufs, b_bufs, ready, empty, xoff, n_tiles, XBLOCK, NUM_BUFFERS),
            ),
            (
                _add_load_partition,
                (a_desc, b_desc, a_bufs, b_bufs, ready, empty, xoff, n_tiles, YBLOCK, NUM_BUFFERS),
            ),
        ],
        [1],
        [24],
    )


@gluon.jit
def add_consumer_frees_slot_early(
    c_desc,
    a_bufs,
    b_bufs,
    c_smem,
    ready,
    empty,
    xoff,
    n_tiles,
    YBLOCK: gl.constexpr,
    NUM_BUFFERS: gl.constexpr,
):
    layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [1, 4], [1, 0])
    for i in range(n_tiles):
        slot = i % NUM_BUFFERS
        mbarrier.wait(ready.index(slot), (i // NUM_BUFFERS) & 1)
        mbarrier.arrive(empty.index(slot), count=1)  # frees the slot before reading it
        c = a_bufs.index(slot).load(layout) + b_bufs.index(slot).load(layout)  # BUG early
        tma.store_wait(pendings=0)
        c_smem.store(c)
        fence_async_shared()
        tma_store(c_desc, [xoff, i * YBLOCK], c_smem)
    tma.store_wait(pendings=0)


@gluon.jit
def add_producer_without_empty_wait(
    a_desc,
    b_desc,
    a_bufs,
    b_bufs,
    ready,
    empty,
    xoff,
    n_tiles,
    YBLOCK: gl.constexpr,
    NUM_BUFFERS: gl.constexpr,
):
    for i in range(n_tiles):
        slot = i % NUM_BUFFERS
        # missing: mbarrier.wait(empty.index(slot), ((i // NUM_BUFFERS) & 1) ^ 1)
        bar = ready.index(slot)
        mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma_load(a_desc, [xoff, i * YBLOCK], bar, a_bufs.index(slot))  # BUG empty
        tma_load(b_desc, [xoff, i * YBLOCK], bar, b_bufs.index(slot))
