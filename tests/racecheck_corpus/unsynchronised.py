"""Kernels without synchronisation: split-K, histograms, overlapping tiles, stencils, reductions,
narrow neighbours, launches in stream order."""

import numpy as np
import torch
import triton
import triton.language as tl

from . import RAW, WAR, WAW, RaceCase, race, rand


@triton.jit
def matmul_split_k(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                   stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   SPLIT_K: tl.constexpr, ATOMIC: tl.constexpr):
    pid_m, pid_n, pid_k = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(pid_k * BLOCK_K, K, SPLIT_K * BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    c = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    if ATOMIC:
        tl.atomic_add(c, acc, mask=mask)
    else:
        tl.store(c, acc, mask=mask)  # race: store


def _split_k(atomic):
    def make(rng):
        M, N, K = 32, 32, 128
        a, b = rand(rng, M, K), rand(rng, K, N)
        c = torch.zeros(M, N)
        return ([a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride()],
                {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32, "SPLIT_K": 2, "ATOMIC": atomic})
    return make


def _check_matmul(before, args):
    a, b, c = args[:3]
    np.testing.assert_allclose(c.numpy(), a.double().numpy() @ b.double().numpy(), rtol=1e-4, atol=1e-4)


@triton.jit
def histogram(x_ptr, hist_ptr, n, NBINS: tl.constexpr, BLOCK: tl.constexpr, ATOMIC: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    bins = tl.minimum((x * NBINS).to(tl.int32), NBINS - 1)
    if ATOMIC:
        tl.atomic_add(hist_ptr + bins, 1, mask=mask)
    else:
        counts = tl.histogram(bins, NBINS, mask=mask)
        bin_ids = tl.arange(0, NBINS)
        old = tl.load(hist_ptr + bin_ids)  # race: load
        tl.store(hist_ptr + bin_ids, old + counts)  # race: store


def _histogram(atomic):
    def make(rng):
        x = rng.random(300).astype(np.float32)
        return [torch.from_numpy(x), torch.zeros(16, dtype=torch.int32), 300], {
            "NBINS": 16, "BLOCK": 64, "ATOMIC": atomic}
    return make


def _check_histogram(before, args):
    x, hist = args[0].numpy().astype(np.float64), args[1].numpy()
    bins = np.minimum((x * 16).astype(np.int64), 15)
    np.testing.assert_array_equal(hist, np.bincount(bins, minlength=16))


@triton.jit
def conv3(x_ptr, w_ptr, y_ptr, n, BLOCK: tl.constexpr, STEP: tl.constexpr):
    # each program computes outputs [start, start + BLOCK); STEP < BLOCK makes neighbouring tiles overlap
    start = tl.program_id(0) * STEP
    offs = start + tl.arange(0, BLOCK)
    w0, w1, w2 = tl.load(w_ptr), tl.load(w_ptr + 1), tl.load(w_ptr + 2)
    left = tl.load(x_ptr + offs - 1, mask=(offs >= 1) & (offs - 1 < n), other=0.0)
    mid = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    right = tl.load(x_ptr + offs + 1, mask=offs + 1 < n, other=0.0)
    tl.store(y_ptr + offs, w0 * left + w1 * mid + w2 * right, mask=offs < n)  # race: out


def _conv3(rng):
    return [rand(rng, 200), rand(rng, 3), torch.zeros(200), 200], {"BLOCK": 32, "STEP": 32}


def _conv3_overlapping(rng):
    args, kwargs = _conv3(rng)
    return args, {**kwargs, "STEP": 28}


def _check_conv3(before, args):
    x, w, y = (t.double().numpy() for t in args[:3])
    padded = np.r_[0.0, x, 0.0]
    np.testing.assert_allclose(y, w[0] * padded[:-2] + w[1] * padded[1:-1] + w[2] * padded[2:], rtol=1e-5)


@triton.jit
def smooth(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    left = tl.load(x_ptr + offs - 1, mask=(offs >= 1) & (offs - 1 < n), other=0.0)  # race: left
    mid = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    right = tl.load(x_ptr + offs + 1, mask=offs + 1 < n, other=0.0)  # race: right
    tl.store(y_ptr + offs, (left + mid + right) / 3.0, mask=offs < n)  # race: write


def _smooth_in_place(rng):
    x = rand(rng, 256)
    return [x, x, 256], {"BLOCK": 64}


def _smooth(rng):
    return [rand(rng, 256), torch.zeros(256), 256], {"BLOCK": 64}


def _check_smooth(before, args):
    x, y = args[0].double().numpy(), args[1].numpy()
    padded = np.r_[0.0, x, 0.0]
    np.testing.assert_allclose(y, (padded[:-2] + padded[1:-1] + padded[2:]) / 3.0, rtol=1e-5)


@triton.jit
def sum_partials_one_launch(x_ptr, partial_ptr, out_ptr, n, BLOCK: tl.constexpr, NUM_BLOCKS: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))  # race: partial
    if pid == 0:  # no barrier between programs: the other partials may not be there yet
        partials = tl.load(partial_ptr + tl.arange(0, NUM_BLOCKS))  # race: total
        tl.store(out_ptr, tl.sum(partials))


@triton.jit
def sum_partials(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))


@triton.jit
def sum_final(partial_ptr, out_ptr, NUM_BLOCKS: tl.constexpr):
    tl.store(out_ptr, tl.sum(tl.load(partial_ptr + tl.arange(0, NUM_BLOCKS))))


def _sum_one_launch(rng):
    return [rand(rng, 500), torch.zeros(8), torch.zeros(1), 500], {"BLOCK": 64, "NUM_BLOCKS": 8}


def _sum_two_launches(rng):
    return [rand(rng, 500), torch.zeros(8), torch.zeros(1)], {}


def _two_pass(trace, grid, args, kwargs):
    x, partial, out = args
    trace(sum_partials)[grid](x, partial, 500, BLOCK=64)
    trace(sum_final)[(1,)](partial, out, NUM_BLOCKS=8)  # the next launch on the stream sees every partial


def _check_sum(before, args):
    x, out = args[0].double().numpy(), args[-1].numpy()
    np.testing.assert_allclose(out[0], x[:500].sum(), rtol=1e-5)


@triton.jit
def scale_interleaved(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    # program p owns elements p, p + P, p + 2P, ...: neighbours in memory belong to other programs
    pid, programs = tl.program_id(0), tl.num_programs(0)
    offs = pid + programs * tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, (x.to(tl.float32) * alpha).to(y_ptr.dtype.element_ty), mask=offs < n)


def _interleaved(dtype):
    def make(rng):
        x = rand(rng, 64).to(dtype)
        return [x, torch.zeros(64, dtype=dtype), 64, 1.5], {"BLOCK": 16}
    return make


def _check_interleaved(before, args):
    x, y = args[0].double().numpy(), args[1].double().numpy()
    rtol = 0.07 if args[0].element_size() == 1 else 1e-3  # one rounding to 3 (fp8) or 10 (fp16) mantissa bits
    np.testing.assert_allclose(y, x * 1.5, rtol=rtol)


@triton.jit
def pack_pairs(x_ptr, n, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    # program 0 clears pairs of narrow elements with one wide store; program 1 sets every odd element
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    if pid == 0:
        wide = x_ptr.to(tl.pointer_type(WIDE))
        tl.store(wide + offs, tl.zeros((BLOCK,), WIDE), mask=offs < n // 2)  # race: wide
    else:
        tl.store(x_ptr + 2 * offs + 1,  # race: narrow
                 tl.full((BLOCK,), 1.0, x_ptr.dtype.element_ty), mask=2 * offs + 1 < n)


def _pack(dtype, wide):
    def make(rng):
        return [rand(rng, 32).to(dtype), 32], {"BLOCK": 16, "WIDE": wide}
    return make


@triton.jit
def scale_in_place(x_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * alpha, mask=offs < n)


def _scale_in_place(rng):
    return [rand(rng, 300), 300, 0.5], {"BLOCK": 64}


def _check_scale_in_place(before, args):
    np.testing.assert_allclose(args[0].numpy(), before[0].double().numpy() * 0.5, rtol=1e-6)


@triton.jit
def add_rows(x_ptr, y_ptr, out_ptr, M, N, stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask)
    y = tl.load(y_ptr + row * stride + cols, mask=mask)
    tl.store(out_ptr + row * stride + cols, x + y, mask=mask)


def _add_rows(rng):
    x, y = rand(rng, 8, 40), rand(rng, 8, 40)
    return [x, y, torch.zeros(8, 40), 8, 40, 40], {"BLOCK_N": 64}


def _check_add_rows(before, args):
    x, y = args[0].double().numpy(), args[1].double().numpy()
    np.testing.assert_allclose(args[2].numpy(), x + y, rtol=1e-6)


@triton.jit
def softmax_rows(x_ptr, y_ptr, N, stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < N)


def _softmax(rng):
    return [rand(rng, 6, 50), torch.zeros(6, 50), 50, 50], {"BLOCK_N": 64}


def _check_softmax(before, args):
    x = args[0].double().numpy()
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(args[1].numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5)


@triton.jit
def transpose_rows_in_place(x_ptr, N: tl.constexpr):
    # row i is swapped with column i, one program per row: programs read what others write
    i = tl.program_id(0)
    j = tl.arange(0, N)
    row = tl.load(x_ptr + i * N + j)  # race: row
    col = tl.load(x_ptr + j * N + i)  # race: col
    tl.store(x_ptr + i * N + j, col, mask=j > i)  # race: row-out
    tl.store(x_ptr + j * N + i, row, mask=j > i)  # race: col-out


def _transpose(rng):
    return [rand(rng, 8, 8), 8], {}


CASES = [
    RaceCase("split_k_plain_store", matmul_split_k, _split_k(False), (2, 1, 2),
             (race("store", kinds=(WAW,)),)),
    RaceCase("split_k_atomic_add", matmul_split_k, _split_k(True), (2, 1, 2), check=_check_matmul),
    RaceCase("histogram_load_add_store", histogram, _histogram(False), (5,),
             (race("load", "store", kinds=(RAW, WAR)), race("store", kinds=(WAW,)))),
    RaceCase("histogram_atomic_add", histogram, _histogram(True), (5,), check=_check_histogram),
    RaceCase("conv3_overlapping_tiles", conv3, _conv3_overlapping, (8,), (race("out", kinds=(WAW,)),)),
    RaceCase("conv3_disjoint_tiles", conv3, _conv3, (7,), check=_check_conv3),
    RaceCase("smooth_in_place", smooth, _smooth_in_place, (4,),
             (race("left", "write", kinds=(RAW,)), race("right", "write", kinds=(WAR,)))),
    RaceCase("smooth_out_of_place", smooth, _smooth, (4,), check=_check_smooth),
    RaceCase("sum_without_barrier", sum_partials_one_launch, _sum_one_launch, (8,),
             (race("partial", "total", kinds=(WAR,)),)),
    RaceCase("sum_two_launches", sum_partials, _sum_two_launches, (8,), check=_check_sum, launches=_two_pass),
    RaceCase("scale_fp16_neighbours", scale_interleaved, _interleaved(torch.float16), (4,),
             check=_check_interleaved),
    RaceCase("scale_fp8_neighbours", scale_interleaved, _interleaved(torch.float8_e4m3fn), (4,),
             check=_check_interleaved),
    RaceCase("pack_fp16_pairs_wide_store", pack_pairs, _pack(torch.float16, tl.int32), (2,),
             (race("wide", "narrow", kinds=(WAW,)),)),
    RaceCase("pack_fp8_pairs_wide_store", pack_pairs, _pack(torch.float8_e4m3fn, tl.int16), (2,),
             (race("wide", "narrow", kinds=(WAW,)),)),
    RaceCase("scale_in_place_own_block", scale_in_place, _scale_in_place, (5,), check=_check_scale_in_place),
    RaceCase("add_rows", add_rows, _add_rows, (8,), check=_check_add_rows),
    RaceCase("softmax_rows", softmax_rows, _softmax, (6,), check=_check_softmax),
    RaceCase("transpose_in_place", transpose_rows_in_place, _transpose, (8,),
             (race("row", "col-out", kinds=(RAW,)), race("col", "row-out", kinds=(RAW,)))),
]
