"""Kernels the profiler tests measure, written as library code would write them."""

import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs))


@triton.jit
def masked_copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def column_kernel(x_ptr, out_ptr, rows, stride_row, BLOCK: tl.constexpr):
    """out[j, :] = x[:, j]: one program per column of a row-major matrix."""
    col = tl.program_id(0)
    r = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + r * stride_row + col, mask=r < rows)
    tl.store(out_ptr + col * rows + r, v, mask=r < rows)


@triton.jit
def flagged_copy_kernel(src_ptr, flags_ptr, dst_ptr, BLOCK: tl.constexpr):
    """Copies the elements whose flag is set (the mask comes from memory)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = tl.load(flags_ptr + offs) != 0
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=keep), mask=keep)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                  stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    """Triton's matmul tutorial: a 1-D grid mapped to tiles in groups of GROUP_SIZE_M rows."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, acc, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def matmul_2d_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                     stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """A matmul on a 2-D grid: program (m, n) computes tile (m, n); launch order runs m fastest."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k + offs_k[None, :]) * stride_ak)
        b = tl.load(b_ptr + (k + offs_k[:, None]) * stride_bk + offs_n[None, :] * stride_bn)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, acc)


@triton.jit
def row_softmax_kernel(x_ptr, out_ptr, stride_row, ROWS: tl.constexpr, COLS: tl.constexpr):
    """Softmax of each row of a (ROWS, COLS) block held whole in registers."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :])
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    tl.store(out_ptr + rows[:, None] * stride_row + cols[None, :], e / tl.sum(e, axis=1)[:, None])


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))  # one value per program, as every reduction ends


@triton.jit
def embedding_kernel(idx_ptr, w_ptr, out_ptr, D: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    idx = tl.load(idx_ptr + rows)
    cols = tl.arange(0, D)
    tl.store(out_ptr + rows[:, None] * D + cols[None, :], tl.load(w_ptr + idx[:, None] * D + cols[None, :]))


@triton.jit
def polynomial_kernel(x_ptr, out_ptr, n, DEGREE: tl.constexpr, BLOCK: tl.constexpr):
    """Horner's rule, one elementwise multiply-add per degree, over a masked tail."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    acc = tl.zeros([BLOCK], dtype=tl.float32) + 1.0
    for d in range(DEGREE):
        acc = acc * x + (d + 1.0)
    tl.store(out_ptr + offs, tl.exp(acc * 0.01), mask=offs < n)


@triton.jit
def searchsorted_kernel(sorted_ptr, n, queries_ptr, out_ptr):
    """A binary search per program: a while loop whose trip count differs between programs (one float
    subtraction an iteration, so the loop has FLOPs)."""
    pid = tl.program_id(0)
    q = tl.load(queries_ptr + pid)
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        go_right = tl.load(sorted_ptr + mid) - q < 0.0
        lo = tl.where(go_right, mid + 1, lo)
        hi = tl.where(go_right, hi, mid)
    tl.store(out_ptr + pid, lo)
