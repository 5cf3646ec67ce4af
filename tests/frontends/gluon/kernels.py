"""Gluon kernels written like Triton's Gluon tutorials (``python/tutorials/gluon``): explicit
layouts, shared memory, mbarriers, TMA and wgmma, each with the host function that launches it.

Every host function takes ``run``: what wraps the kernel before ``[grid](...)`` is called
(``tilescope.trace`` with clients on the CPU, the kernel itself on a GPU), so the same code makes
the golden outputs on the H200 (``golden.py``). The TMA entry points are looked up once: Triton
3.9 calls them ``async_load``/``async_store``, earlier releases ``async_copy_global_to_shared``/
``async_copy_shared_to_global``.
"""

from __future__ import annotations

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

tma_load = tma.async_load if hasattr(tma, "async_load") else tma.async_copy_global_to_shared
tma_store = tma.async_store if hasattr(tma, "async_store") else tma.async_copy_shared_to_global
constexpr_function = getattr(gluon, "constexpr_function", None) or gl.constexpr_function


def _same(kernel):
    return kernel


# ---------------------------------------------------------------------------- registers only


@gluon.jit
def vector_add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: gl.constexpr, num_warps: gl.constexpr):
    # each thread holds 4 contiguous elements; 32 lanes, then the warps, tile the block
    layout: gl.constexpr = gl.BlockedLayout([4], [32], [num_warps], [0])
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout)
    mask = offs < n
    a = gl.load(a_ptr + offs, mask=mask)
    b = gl.load(b_ptr + offs, mask=mask)
    gl.store(c_ptr + offs, a + b, mask=mask)


def vector_add(a, b, run=_same, BLOCK=512, num_warps=4):
    c = torch.empty_like(a)
    n = a.numel()
    run(vector_add_kernel)[(triton.cdiv(n, BLOCK),)](a, b, c, n, BLOCK, num_warps=num_warps)
    return c


@gluon.jit
def softmax_kernel(x_ptr, y_ptr, n_rows, n_cols, stride, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    rows = gl.program_id(0) * BLOCK_M + gl.arange(0, BLOCK_M, gl.SliceLayout(1, layout))
    cols = gl.arange(0, BLOCK_N, gl.SliceLayout(0, layout))
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    offs = rows[:, None] * stride + cols[None, :]
    x = gl.load(x_ptr + offs, mask=mask, other=-float("inf"))
    row_max = gl.max(x, axis=1)
    e = gl.exp(x - gl.expand_dims(row_max, 1))
    denom = gl.sum(e, axis=1)
    gl.store(y_ptr + offs, e / gl.expand_dims(denom, 1), mask=mask)


def softmax(x, run=_same, BLOCK_M=16):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    BLOCK_N = triton.next_power_of_2(n_cols)
    run(softmax_kernel)[(triton.cdiv(n_rows, BLOCK_M),)](x, y, n_rows, n_cols, x.stride(0), BLOCK_M, BLOCK_N)
    return y


@gluon.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_rows, N: gl.constexpr, eps, BLOCK_M: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [1, 32], [4, 1], [1, 0])
    rows = gl.program_id(0) * BLOCK_M + gl.arange(0, BLOCK_M, gl.SliceLayout(1, layout))
    cols = gl.arange(0, N, gl.SliceLayout(0, layout))
    mask = rows[:, None] < n_rows
    offs = rows[:, None] * N + cols[None, :]
    x = gl.load(x_ptr + offs, mask=mask)
    mean = gl.sum(x, axis=1) / N
    xc = x - gl.expand_dims(mean, 1)
    var = gl.sum(xc * xc, axis=1) / N
    rstd = 1.0 / gl.sqrt(var + eps)
    w = gl.load(w_ptr + cols)
    b = gl.load(b_ptr + cols)
    y = xc * gl.expand_dims(rstd, 1) * gl.expand_dims(w, 0) + gl.expand_dims(b, 0)
    gl.store(y_ptr + offs, y, mask=mask)


def layer_norm(x, w, b, run=_same, eps=1e-5, BLOCK_M=8):
    y = torch.empty_like(x)
    n_rows, n = x.shape
    run(layer_norm_kernel)[(triton.cdiv(n_rows, BLOCK_M),)](x, w, b, y, n_rows, n, eps, BLOCK_M)
    return y



@gluon.jit
def block_sum_kernel(x_ptr, y_ptr, M: gl.constexpr, N: gl.constexpr, AXIS: gl.constexpr,
                     LAYOUT: gl.constexpr):  # fmt: skip
    # one block summed along AXIS in the dtype, in the order LAYOUT gives (per thread, lanes, warps)
    rows = gl.arange(0, M, gl.SliceLayout(1, LAYOUT))
    cols = gl.arange(0, N, gl.SliceLayout(0, LAYOUT))
    x = gl.load(x_ptr + rows[:, None] * N + cols[None, :])
    total = gl.sum(x, axis=AXIS)
    if AXIS == 0:
        gl.store(y_ptr + cols, total)
    else:
        gl.store(y_ptr + rows, total)


def block_sum(x, axis, layout, run=_same, num_warps=4):
    """``x.sum(axis)`` in ``x``'s dtype, the block held in ``layout``
    (``(size_per_thread, threads_per_warp, warps_per_cta, order)``)."""
    m, n = x.shape
    y = torch.empty(n if axis == 0 else m, dtype=x.dtype, device=x.device)
    run(block_sum_kernel)[(1,)](x, y, m, n, axis, gl.BlockedLayout(*layout), num_warps=num_warps)
    return y


# ---------------------------------------------------------------------------- shared memory


@gluon.jit
def transpose_kernel(x_ptr, y_ptr, M, N, BLOCK: gl.constexpr):
    # read rows coalesced, go through shared memory, write the transpose coalesced as well
    load_layout: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    store_layout: gl.constexpr = gl.BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1])
    smem_layout: gl.constexpr = gl.SwizzledSharedLayout(vec=4, per_phase=1, max_phase=8, order=[1, 0])
    pid_m = gl.program_id(0)
    pid_n = gl.program_id(1)
    rows = pid_m * BLOCK + gl.arange(0, BLOCK, gl.SliceLayout(1, load_layout))
    cols = pid_n * BLOCK + gl.arange(0, BLOCK, gl.SliceLayout(0, load_layout))
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tile = gl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
    smem = gl.allocate_shared_memory(x_ptr.dtype.element_ty, [BLOCK, BLOCK], smem_layout)
    smem.store(tile)
    t = smem.load(store_layout)
    rows_t = pid_m * BLOCK + gl.arange(0, BLOCK, gl.SliceLayout(1, store_layout))
    cols_t = pid_n * BLOCK + gl.arange(0, BLOCK, gl.SliceLayout(0, store_layout))
    mask_t = (rows_t[:, None] < M) & (cols_t[None, :] < N)
    gl.store(y_ptr + cols_t[None, :] * M + rows_t[:, None], t, mask=mask_t)


def transpose(x, run=_same, BLOCK=32):
    M, N = x.shape
    y = torch.empty(N, M, dtype=x.dtype, device=x.device)
    run(transpose_kernel)[(triton.cdiv(M, BLOCK), triton.cdiv(N, BLOCK))](x, y, M, N, BLOCK)
    return y


# ---------------------------------------------------------------------------- TMA and mbarriers


@gluon.jit
def memcpy_1d_tma_kernel(in_desc, out_desc, XBLOCK: gl.constexpr):
    pid = gl.program_id(0)
    smem = gl.allocate_shared_memory(in_desc.dtype, [XBLOCK], in_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, in_desc.block_type.nbytes)
    tma_load(in_desc, [pid * XBLOCK], bar, smem)
    mbarrier.wait(bar, phase=0)
    mbarrier.invalidate(bar)
    tma_store(out_desc, [pid * XBLOCK], smem)
    tma.store_wait(pendings=0)


def memcpy_1d_tma(x, run=_same, XBLOCK=64):
    out = torch.empty_like(x)
    layout = gl.NVMMASharedLayout.get_default_for([XBLOCK], gl.float32)
    in_desc = TensorDescriptor(x, x.shape, x.stride(), [XBLOCK], layout)
    out_desc = TensorDescriptor(out, out.shape, out.stride(), [XBLOCK], layout)
    run(memcpy_1d_tma_kernel)[(triton.cdiv(x.numel(), XBLOCK),)](in_desc, out_desc, XBLOCK, num_warps=1)
    return out


@gluon.jit
def scale_tma_kernel(in_desc, out_desc, XBLOCK: gl.constexpr):
    # descriptor -> shared -> registers -> shared -> descriptor, the round trip of a TMA kernel
    pid = gl.program_id(0)
    smem = gl.allocate_shared_memory(in_desc.dtype, [XBLOCK], in_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, in_desc.block_type.nbytes)
    tma_load(in_desc, [pid * XBLOCK], bar, smem)
    mbarrier.wait(bar, phase=0)
    value = smem.load(gl.BlockedLayout([1], [32], [1], [0]))
    smem.store(value * 2.0)
    fence_async_shared()
    tma_store(out_desc, [pid * XBLOCK], smem)
    tma.store_wait(pendings=0)


def scale_tma(x, run=_same, XBLOCK=64):
    out = torch.zeros_like(x)
    layout = gl.NVMMASharedLayout.get_default_for([XBLOCK], gl.float32)
    in_desc = TensorDescriptor(x, x.shape, x.stride(), [XBLOCK], layout)
    out_desc = TensorDescriptor(out, out.shape, out.stride(), [XBLOCK], layout)
    run(scale_tma_kernel)[(triton.cdiv(x.numel(), XBLOCK),)](in_desc, out_desc, XBLOCK, num_warps=1)
    return out


@gluon.jit
def copy_rows_kernel(x_ptr, y_ptr, M, N, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr):
    # tensor descriptors made on the device from pointers, shapes and strides
    layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_M, BLOCK_N], gl.float32)
    x_desc = tma.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N], layout)
    y_desc = tma.make_tensor_descriptor(y_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N], layout)
    smem = gl.allocate_shared_memory(gl.float32, [BLOCK_M, BLOCK_N], layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, x_desc.block_type.nbytes)
    tma_load(x_desc, [gl.program_id(0) * BLOCK_M, 0], bar, smem)
    mbarrier.wait(bar, phase=0)
    mbarrier.invalidate(bar)
    tma_store(y_desc, [gl.program_id(0) * BLOCK_M, 0], smem)
    tma.store_wait(pendings=0)


def copy_rows(x, run=_same, BLOCK_M=32):
    M, N = x.shape
    y = torch.zeros_like(x)
    if x.is_cuda:  # device-side descriptors live in a scratch buffer the launch allocates
        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=x.device))
    run(copy_rows_kernel)[(triton.cdiv(M, BLOCK_M),)](x, y, M, N, BLOCK_M, N)
    return y


@gluon.jit
def add_tma_pipelined_kernel(
    a_desc,
    b_desc,
    c_desc,
    xnumel,
    ynumel,
    XBLOCK: gl.constexpr,
    YBLOCK: gl.constexpr,
    num_buffers: gl.constexpr,
):
    pid = gl.program_id(0)
    layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [1, 4], [1, 0])
    xoff = pid * XBLOCK
    dtype: gl.constexpr = a_desc.type.block_type.element_ty
    a_smem = gl.allocate_shared_memory(dtype, [num_buffers, XBLOCK, YBLOCK], a_desc.layout)
    b_smem = gl.allocate_shared_memory(dtype, [num_buffers, XBLOCK, YBLOCK], b_desc.layout)
    c_smem = gl.allocate_shared_memory(dtype, [XBLOCK, YBLOCK], c_desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [num_buffers, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(num_buffers):
        mbarrier.init(bars.index(i), count=1)
    copy_index = 0
    read_index = 0
    for _ in gl.static_range(num_buffers - 1):
        bar = bars.index(copy_index % num_buffers)
        mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma_load(a_desc, [xoff, copy_index * YBLOCK], bar, a_smem.index(copy_index % num_buffers))
        tma_load(b_desc, [xoff, copy_index * YBLOCK], bar, b_smem.index(copy_index % num_buffers))
        copy_index += 1
    for _ in range(gl.cdiv(ynumel, YBLOCK) - (num_buffers - 1)):
        bar = bars.index(copy_index % num_buffers)
        mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma_load(a_desc, [xoff, copy_index * YBLOCK], bar, a_smem.index(copy_index % num_buffers))
        tma_load(b_desc, [xoff, copy_index * YBLOCK], bar, b_smem.index(copy_index % num_buffers))
        copy_index += 1
        mbarrier.wait(bars.index(read_index % num_buffers), read_index // num_buffers & 1)
        slot = read_index % num_buffers
        c = a_smem.index(slot).load(layout) + b_smem.index(slot).load(layout)
        tma.store_wait(pendings=0)
        c_smem.store(c)
        fence_async_shared()
        tma_store(c_desc, [xoff, read_index * YBLOCK], c_smem)
        read_index += 1
    for _ in gl.static_range(num_buffers - 1):
        mbarrier.wait(bars.index(read_index % num_buffers), read_index // num_buffers & 1)
        slot = read_index % num_buffers
        c = a_smem.index(slot).load(layout) + b_smem.index(slot).load(layout)
        tma.store_wait(pendings=0)
        c_smem.store(c)
        fence_async_shared()
        tma_store(c_desc, [xoff, read_index * YBLOCK], c_smem)
        read_index += 1
    for i in gl.static_range(num_buffers):
        mbarrier.invalidate(bars.index(i))
    tma.store_wait(pendings=0)


def add_tma_pipelined(a, b, run=_same, XBLOCK=32, YBLOCK=64, num_buffers=2, kernel=None):
    c = torch.empty_like(a)
    xnumel, ynumel = a.shape
    layout = gl.NVMMASharedLayout.get_default_for([XBLOCK, YBLOCK], gl.float32)
    descs = [TensorDescriptor(t, t.shape, t.stride(), [XBLOCK, YBLOCK], layout) for t in (a, b, c)]
    run(kernel or add_tma_pipelined_kernel)[(triton.cdiv(xnumel, XBLOCK),)](
        *descs, xnumel, ynumel, XBLOCK, YBLOCK, num_buffers
    )
    return c


@gluon.jit
def _add_load_partition(
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
    # the producer: TMA loads into a ring of slots, each slot reused once the consumer freed it
    for i in range(n_tiles):
        slot = i % NUM_BUFFERS
        mbarrier.wait(empty.index(slot), ((i // NUM_BUFFERS) & 1) ^ 1)  # the first round passes
        bar = ready.index(slot)
        mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma_load(a_desc, [xoff, i * YBLOCK], bar, a_bufs.index(slot))
        tma_load(b_desc, [xoff, i * YBLOCK], bar, b_bufs.index(slot))


@gluon.jit
def _add_compute_partition(
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
    # the consumer: add the two tiles of a slot, free the slot, store the sum with TMA
    layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [1, 4], [1, 0])
    for i in range(n_tiles):
        slot = i % NUM_BUFFERS
        mbarrier.wait(ready.index(slot), (i // NUM_BUFFERS) & 1)
        c = a_bufs.index(slot).load(layout) + b_bufs.index(slot).load(layout)
        mbarrier.arrive(empty.index(slot), count=1)
        tma.store_wait(pendings=0)
        c_smem.store(c)
        fence_async_shared()
        tma_store(c_desc, [xoff, i * YBLOCK], c_smem)
    tma.store_wait(pendings=0)


@gluon.jit
def add_warp_specialized_kernel(
    a_desc,
    b_desc,
    c_desc,
    ynumel,
    XBLOCK: gl.constexpr,
    YBLOCK: gl.constexpr,
    NUM_BUFFERS: gl.constexpr,
    LOAD: gl.constexpr,
    COMPUTE: gl.constexpr,
):
    # the producer (LOAD) and the consumer (COMPUTE, the default partition) share a ring of slots
    xoff = gl.program_id(0) * XBLOCK
    dtype: gl.constexpr = a_desc.dtype
    a_bufs = gl.allocate_shared_memory(dtype, [NUM_BUFFERS, XBLOCK, YBLOCK], a_desc.layout)
    b_bufs = gl.allocate_shared_memory(dtype, [NUM_BUFFERS, XBLOCK, YBLOCK], b_desc.layout)
    c_smem = gl.allocate_shared_memory(dtype, [XBLOCK, YBLOCK], c_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [NUM_BUFFERS, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [NUM_BUFFERS, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(NUM_BUFFERS):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    n_tiles = gl.cdiv(ynumel, YBLOCK)
    gl.warp_specialize(
        [
            (COMPUTE, (c_desc, a_bufs, b_bufs, c_smem, ready, empty, xoff, n_tiles, YBLOCK, NUM_BUFFERS)),
            (LOAD, (a_desc, b_desc, a_bufs, b_bufs, ready, empty, xoff, n_tiles, YBLOCK, NUM_BUFFERS)),
        ],
        [1],
        [24],
    )


def add_warp_specialized(a, b, run=_same, XBLOCK=32, YBLOCK=64, NUM_BUFFERS=2, load=None, compute=None):
    c = torch.empty_like(a)
    layout = gl.NVMMASharedLayout.get_default_for([XBLOCK, YBLOCK], gl.float32)
    descs = [TensorDescriptor(t, t.shape, t.stride(), [XBLOCK, YBLOCK], layout) for t in (a, b, c)]
    grid = (triton.cdiv(a.shape[0], XBLOCK),)
    partitions = (load or _add_load_partition, compute or _add_compute_partition)
    run(add_warp_specialized_kernel)[grid](*descs, a.shape[1], XBLOCK, YBLOCK, NUM_BUFFERS, *partitions)
    return c


@constexpr_function
def get_warps_per_cta(BLOCK_M, BLOCK_N, num_warps):
    warps_per_cta = [4, 1]
    while warps_per_cta[0] * warps_per_cta[1] != num_warps:
        if BLOCK_M > 16 * warps_per_cta[0]:
            warps_per_cta[0] *= 2
        else:
            warps_per_cta[1] *= 2
    return warps_per_cta


@constexpr_function
def get_instr_shape_n(BLOCK_M, BLOCK_N, num_warps):
    m_reps = triton.cdiv(BLOCK_M, 16)
    n_reps = triton.cdiv(num_warps, m_reps)
    max_n = max(BLOCK_N // n_reps, 8)
    n = 256
    while n > max_n or BLOCK_N % n != 0:
        n -= 8
    return n


@gluon.jit
def blocked_mma_kernel(a_desc, b_desc, c_desc, TRANSPOSE_B: gl.constexpr, num_warps: gl.constexpr):
    BLOCK_M: gl.constexpr = c_desc.block_type.shape[0]
    BLOCK_N: gl.constexpr = c_desc.block_type.shape[1]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    K = a_desc.shape[1]
    a_smem = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_type.shape, a_desc.layout)
    b_smem = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_type.shape, b_desc.layout)
    off_m = gl.program_id(axis=0) * BLOCK_M
    off_n = gl.program_id(axis=1) * BLOCK_N
    k_width: gl.constexpr = 256 // a_desc.dtype.primitive_bitwidth
    n: gl.constexpr = get_instr_shape_n(BLOCK_M, BLOCK_N, num_warps)
    warps_per_cta: gl.constexpr = get_warps_per_cta(BLOCK_M, BLOCK_N, num_warps)
    mma_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=warps_per_cta, instr_shape=[16, n, k_width]
    )
    acc = gl.zeros((BLOCK_M, BLOCK_N), dtype=c_desc.dtype, layout=mma_layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    phase = 0
    for k in range(0, K, BLOCK_K):
        mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma_load(a_desc, [off_m, k], bar, a_smem)
        if TRANSPOSE_B:
            tma_load(b_desc, [off_n, k], bar, b_smem)
        else:
            tma_load(b_desc, [k, off_n], bar, b_smem)
        mbarrier.wait(bar, phase=phase)
        phase ^= 1
        if TRANSPOSE_B:
            b = b_smem.permute((1, 0))
        else:
            b = b_smem
        acc = warpgroup_mma(a_smem, b, acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
    mbarrier.invalidate(bar)
    c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
    c_smem.store(acc)
    fence_async_shared()
    tma_store(c_desc, [off_m, off_n], c_smem)
    tma.store_wait(pendings=0)


def blocked_mma(A, B, run=_same, BLOCK_M=64, BLOCK_N=64, BLOCK_K=64, TRANSPOSE_B=False, num_warps=4):
    M = A.shape[0]
    N = B.shape[0] if TRANSPOSE_B else B.shape[1]
    C = torch.empty(M, N, dtype=torch.float32, device=A.device)
    a_layout = gl.NVMMASharedLayout.get_default_for([BLOCK_M, BLOCK_K], gl.float16)
    a_desc = TensorDescriptor(A, A.shape, A.stride(), [BLOCK_M, BLOCK_K], a_layout)
    b_block = [BLOCK_N, BLOCK_K] if TRANSPOSE_B else [BLOCK_K, BLOCK_N]
    b_layout = gl.NVMMASharedLayout.get_default_for(b_block, gl.float16)
    b_desc = TensorDescriptor(B, B.shape, B.stride(), b_block, b_layout)
    c_layout = gl.NVMMASharedLayout.get_default_for([BLOCK_M, BLOCK_N], gl.float32)
    c_desc = TensorDescriptor(C, C.shape, C.stride(), [BLOCK_M, BLOCK_N], c_layout)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    run(blocked_mma_kernel)[grid](a_desc, b_desc, c_desc, TRANSPOSE_B, num_warps=num_warps)
    return C
