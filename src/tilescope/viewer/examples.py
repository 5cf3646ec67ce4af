"""Three kernels the viewer's documentation, screenshots, tests and benchmark show, and their traces.

- :func:`add_kernel` (tilescope.examples.vector_add): a vector add whose last block is cut by a mask;
- :func:`grouped_matmul_kernel`: Triton's tutorial matmul with ``GROUP_M`` ordering of the tiles;
- :func:`copy_rows_kernel`: a 2-D tile copy whose load mask forgets the rows (out of bounds);
- :func:`smooth_kernel`: a 3-point moving average, racing when run in place (``y`` is ``x``).

Each ``*_trace`` function runs its kernel under the tracer and the sanitizer (the race detector for
:func:`race_trace`) and stores the reports beside the trace, as ``tilescope run`` does.
"""

from __future__ import annotations

import os

import numpy as np
import triton
import triton.language as tl

from ..examples.vector_add import add_kernel
from .findings import write_reports

__all__ = [
    "add_kernel",
    "grouped_matmul_kernel",
    "copy_rows_kernel",
    "smooth_kernel",
    "vector_add_trace",
    "grouped_matmul_trace",
    "out_of_bounds_trace",
    "race_trace",
]


@triton.jit
def grouped_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                          stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """``C = A @ B``, programs walking C's tiles in groups of ``GROUP_M`` rows (better L2 reuse)."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def copy_rows_kernel(src_ptr, dst_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Copy a matrix tile by tile. Bug: the load's mask checks the columns but not the rows."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols[None, :] < N
    tile = tl.load(src_ptr + rows[:, None] * stride_m + cols[None, :], mask=mask)
    tl.store(dst_ptr + rows[:, None] * stride_m + cols[None, :], tile, mask=mask & (rows[:, None] < M))


@triton.jit
def smooth_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """``y[i] = (x[i - 1] + x[i] + x[i + 1]) / 3``. In place (``y`` is ``x``) each program reads the
    edge elements its neighbours overwrite: a race on each side."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    left = tl.load(x_ptr + offs - 1, mask=(offs >= 1) & (offs - 1 < n), other=0.0)
    mid = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    right = tl.load(x_ptr + offs + 1, mask=offs + 1 < n, other=0.0)
    tl.store(y_ptr + offs, (left + mid + right) / 3.0, mask=offs < n)


def _run(kernel, grid, args, meta, trace_dir, values: str, clients=("tracer", "sanitizer")):
    import tilescope

    launcher = tilescope.trace(kernel, clients=list(clients), trace_dir=trace_dir, values=values)
    launcher[grid](*args, **meta)
    write_reports(trace_dir, [r for r in launcher.reports if r.client != "tracer"])
    return launcher


def vector_add_trace(trace_dir: str | os.PathLike, n: int = 1000, block: int = 128, values: str = "all"):
    """Trace ``x + y`` over ``n`` elements in blocks of ``block`` (the last one masked); returns the
    launcher."""
    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.empty_like(x)
    return _run(add_kernel, (triton.cdiv(n, block),), (x, y, out, n), {"BLOCK": block}, trace_dir, values)


def grouped_matmul_trace(
    trace_dir: str | os.PathLike,
    m: int = 96,
    n: int = 80,
    k: int = 40,
    block_m: int = 16,
    block_n: int = 16,
    block_k: int = 16,
    group_m: int = 2,
    values: str = "sample",
):
    """Trace a grouped matmul of ``m x k`` by ``k x n`` float32 matrices; returns the launcher."""
    rng = np.random.default_rng(0)
    a, b = rng.random((m, k), dtype=np.float32), rng.random((k, n), dtype=np.float32)
    c = np.empty((m, n), np.float32)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    args = (a, b, c, m, n, k, a.strides[0] // 4, 1, b.strides[0] // 4, 1, c.strides[0] // 4, 1)
    meta = {"BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k, "GROUP_M": group_m}
    return _run(grouped_matmul_kernel, grid, args, meta, trace_dir, values)


def out_of_bounds_trace(
    trace_dir: str | os.PathLike,
    m: int = 50,
    n: int = 40,
    block_m: int = 16,
    block_n: int = 16,
    values: str = "off",
):
    """Trace :func:`copy_rows_kernel` on an ``m x n`` matrix: the last row block reads past the end."""
    src = np.arange(m * n, dtype=np.float32).reshape(m, n)
    dst = np.zeros_like(src)
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    return _run(
        copy_rows_kernel,
        grid,
        (src, dst, m, n, n),
        {"BLOCK_M": block_m, "BLOCK_N": block_n},
        trace_dir,
        values,
    )


def race_trace(trace_dir: str | os.PathLike, n: int = 256, block: int = 64, values: str = "off"):
    """Trace :func:`smooth_kernel` in place over ``n`` elements under the tracer and the race
    detector; returns the launcher."""
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    grid = (triton.cdiv(n, block),)
    return _run(smooth_kernel, grid, (x, x, n), {"BLOCK": block}, trace_dir, values, ("tracer", "racecheck"))
