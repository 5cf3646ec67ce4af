"""Triton kernels that exercise every part of the op-stream contract (tests/core/test_op_stream.py)."""

import triton
import triton.language as tl


@triton.jit
def loops_and_masks(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(pid % 3 + 1):  # a trip count that differs between programs
        acc += tl.load(x_ptr + offs, mask=offs < n - i, other=0.0)
    steps = 0
    while steps < pid % 2 + 1:  # so does this one
        acc = acc * 0.5
        steps += 1
    tl.debug_barrier()
    tl.store(out_ptr + offs, acc, mask=offs < n)


@triton.jit
def every_atomic(counters_ptr, flags_ptr, block_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.atomic_add(counters_ptr + 0, 1, sem="relaxed", scope="gpu")
    tl.atomic_max(counters_ptr + 1, pid, sem="acquire", scope="cta")
    tl.atomic_min(counters_ptr + 2, pid)
    tl.atomic_and(counters_ptr + 3, pid, sem="release")
    tl.atomic_or(counters_ptr + 4, pid, scope="sys")
    tl.atomic_xor(counters_ptr + 5, pid)
    tl.atomic_xchg(counters_ptr + 6, pid, sem="acq_rel", scope="gpu")
    tl.atomic_cas(flags_ptr + pid, 0, 1, sem="acq_rel")
    seen = tl.atomic_load(flags_ptr + pid, sem="acquire")
    tl.atomic_store(flags_ptr + pid, seen + 1, sem="release", scope="gpu")
    lanes = tl.arange(0, BLOCK)
    tl.atomic_add(block_ptr + lanes, lanes, mask=lanes < pid + 1)


@triton.jit
def descriptor_ops(a_ptr, b_ptr, idx_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    a = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    b = tl.make_tensor_descriptor(b_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    tile = a.load([pid * BM, 0])
    b.store([pid * BM, 0], tile + 1.0)
    a_rows = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, BN])
    b_rows = tl.make_tensor_descriptor(b_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, BN])
    rows = tl.load(idx_ptr + pid * BM + tl.arange(0, BM))
    b_rows.scatter(a_rows.gather(rows, 0) * 2.0, rows, BN)
    b.atomic_add([pid * BM, 0], tile)


@triton.jit(debug=True)
def faults(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs <= n)  # off by one: lane n reads past x
    tl.device_assert(x >= 0, "x must be non-negative")
    tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit
def divergent_rows(x_ptr, out_ptr, hits_ptr, n_cols, tail, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(
        x_ptr + row * n_cols + cols, mask=cols < n_cols + tail, other=0.0
    )  # tail > 0 reads past the row
    total = tl.sum(x, axis=0)
    if row % 3 == 1:
        x = x - total
        tl.atomic_add(hits_ptr + 0, 1)
    elif total > 0:
        x = x * 2.0
        tl.atomic_add(hits_ptr + 1, 1, sem="relaxed")
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(row % 4):
        acc += x * (i + 1)
        tl.atomic_max(hits_ptr + 2, i)
    k = row % 2
    while k < 2:
        acc = acc + 1.0
        k += 1
    tl.store(out_ptr + row * n_cols + cols, acc + x, mask=cols < n_cols)
