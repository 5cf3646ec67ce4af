"""Tensor descriptors: tile loads and stores, row gathers and scatters, and reductions count like the
pointer accesses they perform."""

import numpy as np
import torch
import triton
import triton.language as tl

from . import RAW, WAR, WAW, RaceCase, race, rand


@triton.jit
def desc_copy_tiles(src_ptr, dst_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    STEP_M: tl.constexpr):
    src = tl.make_tensor_descriptor(src_ptr, shape=[M, N], strides=[N, 1],
                                    block_shape=[BLOCK_M, BLOCK_N])
    dst = tl.make_tensor_descriptor(dst_ptr, shape=[M, N], strides=[N, 1],
                                    block_shape=[BLOCK_M, BLOCK_N])
    off_m, off_n = tl.program_id(0) * STEP_M, tl.program_id(1) * BLOCK_N
    dst.store([off_m, off_n], src.load([off_m, off_n]) * 2.0)  # race: store


def _copy(step_m):
    def make(rng):
        return [rand(rng, 32, 32), torch.zeros(32, 32), 32, 32], {
            "BLOCK_M": 8, "BLOCK_N": 16, "STEP_M": step_m}
    return make


def _check_copy(before, args):
    np.testing.assert_allclose(args[1].numpy(), before[0].double().numpy() * 2.0, rtol=1e-6)


@triton.jit
def desc_shift_down(x_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # moves every tile one tile down, in place: a program overwrites the tile its neighbour reads
    desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1],
                                     block_shape=[BLOCK_M, BLOCK_N])
    off_m = tl.program_id(0) * BLOCK_M
    tile = desc.load([off_m, 0])  # race: load
    desc.store([off_m + BLOCK_M, 0], tile)  # race: store


def _shift(rng):
    return [rand(rng, 32, 16), 32, 16], {"BLOCK_M": 8, "BLOCK_N": 16}


@triton.jit
def desc_permute_rows(src_ptr, idx_ptr, dst_ptr, n_rows, dim, BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    # dst[idx[r]] = src[r] * 3: a permutation writes each row once; repeated indices write one twice
    src = tl.make_tensor_descriptor(src_ptr, shape=[n_rows, dim], strides=[dim, 1],
                                    block_shape=[1, BLOCK_D])
    dst = tl.make_tensor_descriptor(dst_ptr, shape=[n_rows, dim], strides=[dim, 1],
                                    block_shape=[1, BLOCK_D])
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    idx = tl.load(idx_ptr + rows)
    dst.scatter(src.gather(rows, 0) * 3.0, idx, 0)  # race: scatter


def _permute(repeated):
    def make(rng):
        idx = rng.permutation(16).astype(np.int32)
        if repeated:
            idx[12] = idx[3]  # programs 0 and 1 (8 rows each) both write row idx[3]
        return [rand(rng, 16, 16), torch.from_numpy(idx), torch.zeros(16, 16), 16, 16], {
            "BLOCK_R": 8, "BLOCK_D": 16}
    return make


def _check_permute(before, args):
    expected = np.zeros((16, 16))
    expected[before[1].numpy()] = before[0].double().numpy() * 3.0
    np.testing.assert_allclose(args[2].numpy(), expected, rtol=1e-6)


@triton.jit
def desc_gather_sum(table_ptr, idx_ptr, out_ptr, n_rows, dim, BLOCK_R: tl.constexpr,
                    BLOCK_D: tl.constexpr):
    # every program gathers rows of a shared table (reads never race) and sums them into its own row
    table = tl.make_tensor_descriptor(table_ptr, shape=[n_rows, dim], strides=[dim, 1],
                                      block_shape=[1, BLOCK_D])
    pid = tl.program_id(0)
    idx = tl.load(idx_ptr + pid * BLOCK_R + tl.arange(0, BLOCK_R))
    tl.store(out_ptr + pid * BLOCK_D + tl.arange(0, BLOCK_D), tl.sum(table.gather(idx, 0), axis=0))


def _gather(rng):
    idx = rng.integers(0, 20, 32).astype(np.int32)
    return [rand(rng, 20, 16), torch.from_numpy(idx), torch.zeros(4, 16), 20, 16], {
        "BLOCK_R": 8, "BLOCK_D": 16}


def _check_gather(before, args):
    table, idx = before[0].double().numpy(), before[1].numpy().reshape(4, 8)
    np.testing.assert_allclose(args[2].numpy(), table[idx].sum(axis=1), rtol=1e-5)


@triton.jit
def desc_accumulate(x_ptr, out_ptr, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PEEK: tl.constexpr):
    # every program adds its tile of x into the one tile of out (descriptor reductions are atomics)
    x = tl.make_tensor_descriptor(x_ptr, shape=[4 * BLOCK_M, N], strides=[N, 1],
                                  block_shape=[BLOCK_M, BLOCK_N])
    out = tl.make_tensor_descriptor(out_ptr, shape=[BLOCK_M, N], strides=[N, 1],
                                    block_shape=[BLOCK_M, BLOCK_N])
    pid = tl.program_id(0)
    out.atomic_add([0, 0], x.load([pid * BLOCK_M, 0]))  # race: reduce
    if PEEK and pid == 0:
        tl.store(x_ptr + tl.arange(0, BLOCK_N), tl.sum(out.load([0, 0]), axis=0))  # race: peek


def _accumulate(peek):
    def make(rng):
        return [rand(rng, 32, 16), torch.zeros(8, 16), 16], {"BLOCK_M": 8, "BLOCK_N": 16, "PEEK": peek}
    return make


def _check_accumulate(before, args):
    x = before[0].double().numpy().reshape(4, 8, 16)
    np.testing.assert_allclose(args[1].numpy(), x.sum(axis=0), rtol=1e-5)


CASES = [
    RaceCase("desc_copy_tiles", desc_copy_tiles, _copy(8), (4, 2), check=_check_copy),
    RaceCase("desc_copy_overlapping_tiles", desc_copy_tiles, _copy(4), (4, 2),
             (race("store", kinds=(WAW,)),)),
    RaceCase("desc_shift_down_in_place", desc_shift_down, _shift, (3,),
             (race("load", "store", kinds=(RAW,)),)),
    RaceCase("desc_scatter_permutation", desc_permute_rows, _permute(False), (2,), check=_check_permute),
    RaceCase("desc_scatter_repeated_row", desc_permute_rows, _permute(True), (2,),
             (race("scatter", kinds=(WAW,)),)),
    RaceCase("desc_gather_shared_table", desc_gather_sum, _gather, (4,), check=_check_gather),
    RaceCase("desc_reduce_one_tile", desc_accumulate, _accumulate(False), (4,), check=_check_accumulate),
    RaceCase("desc_reduce_then_load", desc_accumulate, _accumulate(True), (4,),
             (race("reduce", "peek", kinds=(WAR,)),)),
]
