"""Pallas kernels with the bugs Pallas authors make, each marked ``# BUG <tag>`` at the line a finding
must name. In JAX's interpret mode every one of them runs without an error: slices clamp, the grid
runs in order, and the output is silently wrong."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as plgpu

# --- out of bounds


def unmasked_add_kernel(x_ref, y_ref, o_ref, *, block):
    pid = pl.program_id(0)
    offsets = pid * block + jnp.arange(block)
    mask = offsets < x_ref.shape[0]
    x = plgpu.load(x_ref.at[pl.ds(pid * block, block)])  # BUG load
    y = plgpu.load(y_ref.at[pl.ds(pid * block, block)], mask=mask, other=0.0)
    plgpu.store(o_ref.at[pl.ds(pid * block, block)], x + y, mask=mask)


def unmasked_add(x, y, block=128):
    """The tail block's load of ``x`` forgot its mask: the last 24 lanes read past the array."""
    return pl.pallas_call(
        functools.partial(unmasked_add_kernel, block=block),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(pl.cdiv(x.shape[0], block),),
        interpret=True,
    )(x, y)


def shifted_copy_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]  # BUG load


def shifted_copy(x, block=128):
    """An index map one block ahead (``i + 1``): the last grid step's block lies wholly past ``x``."""
    return pl.pallas_call(
        shifted_copy_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(x.shape[0] // block,),
        in_specs=[pl.BlockSpec((block,), lambda i: (i + 1,))],
        out_specs=pl.BlockSpec((block,), lambda i: (i,)),
        interpret=True,
    )(x)


def transpose_blocks_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...].T  # BUG store


def transpose_blocks(x, bm=32, bn=32):
    """A transpose whose output index map forgot to swap the grid's sizes: on a non-square grid the
    output blocks of the last rows fall past the end of the output."""
    m, n = x.shape
    return pl.pallas_call(
        transpose_blocks_kernel,
        out_shape=jax.ShapeDtypeStruct((n, m), x.dtype),
        grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, bn), lambda i, j: (i, j))],
        out_specs=pl.BlockSpec((bn, bm), lambda i, j: (i, j)),
        interpret=True,
    )(x)


def chunked_sum_kernel(x_ref, o_ref, *, chunk):
    n = x_ref.shape[0]

    def body(c, acc):
        return acc + x_ref[pl.ds(c * chunk, chunk), :]  # BUG block

    o_ref[...] = jax.lax.fori_loop(0, n // chunk + 1, body, jnp.zeros((chunk, x_ref.shape[1]), jnp.float32))


def chunked_sum(x, rows=32, chunk=8):
    """Sums the row chunks of each block, one chunk too many: the last reaches past the block."""
    m, n = x.shape
    return pl.pallas_call(
        functools.partial(chunked_sum_kernel, chunk=chunk),
        out_shape=jax.ShapeDtypeStruct((m // rows * chunk, n), x.dtype),
        grid=(m // rows,),
        in_specs=[pl.BlockSpec((rows, n), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((chunk, n), lambda i: (i, 0)),
        interpret=True,
    )(x)


# --- races


def pairwise_max_kernel(x_ref, o_ref):
    o_ref[...] = jnp.maximum(o_ref[...], x_ref[...])  # BUG race


def pairwise_max(x, block=128):
    """Two grid steps share each output block (``i // 2``) in a parallel grid: they race on it."""
    n = x.shape[0]
    return pl.pallas_call(
        pairwise_max_kernel,
        out_shape=jax.ShapeDtypeStruct((n // 2,), x.dtype),
        grid=(n // block,),
        in_specs=[pl.BlockSpec((block,), lambda i: (i,))],
        out_specs=pl.BlockSpec((block,), lambda i: (i // 2,)),
        interpret=True,
    )(x)


def row_sum_kernel(x_ref, o_ref):
    @pl.when(pl.program_id(1) == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    o_ref[...] += jnp.sum(x_ref[...], axis=1, keepdims=True)  # BUG race


def row_sum(x, rows=16, cols=64):
    """Accumulates over the column blocks, but marks that axis 'parallel': steps along it revisit one
    output block concurrently."""
    m, n = x.shape
    return pl.pallas_call(
        row_sum_kernel,
        out_shape=jax.ShapeDtypeStruct((m, 1), x.dtype),
        grid=(m // rows, n // cols),
        in_specs=[pl.BlockSpec((rows, cols), lambda i, j: (i, j))],
        out_specs=pl.BlockSpec((rows, 1), lambda i, j: (i, 0)),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")),  # BUG semantics
        interpret=True,
    )(x)


def shift_in_place_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]  # BUG shift


def shift_in_place(x, block=128):
    """Shifts ``x`` left by a block in place (input aliased to the output): each step reads the block
    the next step writes."""
    n = x.shape[0]
    return pl.pallas_call(
        shift_in_place_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(n // block - 1,),
        in_specs=[pl.BlockSpec((block,), lambda i: (i + 1,))],
        out_specs=pl.BlockSpec((block,), lambda i: (i,)),
        input_output_aliases={0: 0},
        interpret=True,
    )(x)
