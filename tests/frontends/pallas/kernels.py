"""Pallas kernels written the way the Pallas tutorials write them (quickstart, TPU matmul and
pipelining guides, the GPU flash-attention and layer-norm ops), each with a float64 reference.

Every wrapper is an ordinary JAX function that calls ``pl.pallas_call(..., interpret=True)``:
called directly it runs in JAX's own interpreter (the reference the tests compare with), and
``tilescope.trace(wrapper)(*args)`` runs it on the engine.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as plgpu

# --- vector add (quickstart)


def add_vectors_kernel(x_ref, y_ref, o_ref):
    x, y = x_ref[...], y_ref[...]
    o_ref[...] = x + y


def add_vectors(x, y, block=256):
    return pl.pallas_call(
        add_vectors_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(pl.cdiv(x.shape[0], block),),
        in_specs=[pl.BlockSpec((block,), lambda i: (i,)), pl.BlockSpec((block,), lambda i: (i,))],
        out_specs=pl.BlockSpec((block,), lambda i: (i,)),
        interpret=True,
    )(x, y)


# --- masked add on whole refs (Pallas-Triton style)


def masked_add_kernel(x_ref, y_ref, o_ref, *, n, block):
    pid = pl.program_id(0)
    offsets = pid * block + jnp.arange(block)
    mask = offsets < n
    x = plgpu.load(x_ref.at[pl.ds(pid * block, block)], mask=mask, other=0.0)
    y = plgpu.load(y_ref.at[pl.ds(pid * block, block)], mask=mask, other=0.0)
    plgpu.store(o_ref.at[pl.ds(pid * block, block)], x + y, mask=mask)


def masked_add(x, y, block=128):
    n = x.shape[0]
    return pl.pallas_call(
        functools.partial(masked_add_kernel, n=n, block=block),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(pl.cdiv(n, block),),
        interpret=True,
    )(x, y)


# --- matmul with BlockSpecs (full K per block)


def matmul_kernel(x_ref, y_ref, z_ref):
    z_ref[...] = jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32).astype(z_ref.dtype)


def matmul(x, y, bm=32, bn=32):
    m, k = x.shape
    _, n = y.shape
    return pl.pallas_call(
        matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, k), lambda i, j: (i, 0)), pl.BlockSpec((k, bn), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
        interpret=True,
    )(x, y)


# --- blocked matmul, accumulating over a k grid axis


def matmul_acc_kernel(x_ref, y_ref, z_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        z_ref[...] = jnp.zeros_like(z_ref)

    z_ref[...] += x_ref[...] @ y_ref[...]


def matmul_acc(x, y, bm=32, bk=32, bn=32):
    m, k = x.shape
    _, n = y.shape
    return pl.pallas_call(
        matmul_acc_kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        grid=(m // bm, n // bn, k // bk),
        in_specs=[
            pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
            pl.BlockSpec((bk, bn), lambda i, j, k: (k, j)),
        ],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary")),
        interpret=True,
    )(x, y)


# --- matmul with a VMEM scratch accumulator


def matmul_scratch_kernel(x_ref, y_ref, z_ref, acc_ref, *, nsteps):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == nsteps - 1)
    def _():
        z_ref[...] = acc_ref[...].astype(z_ref.dtype)


def matmul_scratch(x, y, bm=32, bk=32, bn=32):
    m, k = x.shape
    _, n = y.shape
    return pl.pallas_call(
        functools.partial(matmul_scratch_kernel, nsteps=k // bk),
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0,
            in_specs=[
                pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                pl.BlockSpec((bk, bn), lambda i, j, k: (k, j)),
            ],
            out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
            scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
            grid=(m // bm, n // bn, k // bk),
        ),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary")),
        interpret=True,
    )(x, y)


# --- softmax over rows


def softmax_kernel(x_ref, o_ref):
    x = x_ref[...]
    x = x - jnp.max(x, axis=1, keepdims=True)
    e = jnp.exp(x)
    o_ref[...] = e / jnp.sum(e, axis=1, keepdims=True)


def softmax(x, rows=8):
    m, n = x.shape
    return pl.pallas_call(
        softmax_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(pl.cdiv(m, rows),),
        in_specs=[pl.BlockSpec((rows, n), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((rows, n), lambda i: (i, 0)),
        interpret=True,
    )(x)


# --- layer norm (one row per grid step)


def layer_norm_kernel(x_ref, w_ref, b_ref, o_ref, *, eps):
    x = x_ref[...].astype(jnp.float32)
    mean = jnp.mean(x, axis=-1, keepdims=True)
    centered = x - mean
    var = jnp.mean(centered * centered, axis=-1, keepdims=True)
    y = centered * jax.lax.rsqrt(var + eps)
    o_ref[...] = (y * w_ref[...] + b_ref[...]).astype(o_ref.dtype)


def layer_norm(x, w, b, eps=1e-5):
    m, n = x.shape
    return pl.pallas_call(
        functools.partial(layer_norm_kernel, eps=eps),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(m,),
        in_specs=[
            pl.BlockSpec((1, n), lambda i: (i, 0)),
            pl.BlockSpec((1, n), lambda i: (0, 0)),
            pl.BlockSpec((1, n), lambda i: (0, 0)),
        ],
        out_specs=pl.BlockSpec((1, n), lambda i: (i, 0)),
        interpret=True,
    )(x, w.reshape(1, n), b.reshape(1, n))


# --- flash attention (GPU ops style)


def flash_attention_kernel(q_ref, k_ref, v_ref, o_ref, *, sm_scale, block_k):
    seq_len = k_ref.shape[0]
    q = q_ref[...] * sm_scale
    block_q, head_dim = q.shape
    m_i = jnp.full((block_q,), -jnp.inf, dtype=jnp.float32)
    l_i = jnp.zeros((block_q,), dtype=jnp.float32)
    acc = jnp.zeros((block_q, head_dim), dtype=jnp.float32)

    def body(start_k, carry):
        acc, m_prev, l_prev = carry
        k = k_ref[pl.ds(start_k * block_k, block_k), :]
        v = v_ref[pl.ds(start_k * block_k, block_k), :]
        s = q @ k.T
        m_curr = jnp.maximum(jnp.max(s, axis=1), m_prev)
        p = jnp.exp(s - m_curr[:, None])
        correction = jnp.exp(m_prev - m_curr)
        l_curr = correction * l_prev + jnp.sum(p, axis=1)
        acc = acc * correction[:, None] + p @ v
        return acc, m_curr, l_curr

    acc, m_i, l_i = jax.lax.fori_loop(0, seq_len // block_k, body, (acc, m_i, l_i))
    o_ref[...] = (acc / l_i[:, None]).astype(o_ref.dtype)


def flash_attention(q, k, v, block_q=32, block_k=32):
    seq_len, head_dim = q.shape
    kernel = functools.partial(flash_attention_kernel, sm_scale=1.0 / np.sqrt(head_dim), block_k=block_k)
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype),
        grid=(seq_len // block_q,),
        in_specs=[
            pl.BlockSpec((block_q, head_dim), lambda i: (i, 0)),
            pl.BlockSpec((seq_len, head_dim), lambda i: (0, 0)),
            pl.BlockSpec((seq_len, head_dim), lambda i: (0, 0)),
        ],
        out_specs=pl.BlockSpec((block_q, head_dim), lambda i: (i, 0)),
        interpret=True,
    )(q, k, v)


# --- column sums: a reduction over a sequential axis


def column_sum_kernel(x_ref, o_ref):
    @pl.when(pl.program_id(1) == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    o_ref[...] += jnp.sum(x_ref[...], axis=0, keepdims=True)


def column_sum(x, rows=16, cols=64):
    m, n = x.shape
    return pl.pallas_call(
        column_sum_kernel,
        out_shape=jax.ShapeDtypeStruct((1, n), x.dtype),
        grid=(n // cols, m // rows),
        in_specs=[pl.BlockSpec((rows, cols), lambda j, i: (i, j))],
        out_specs=pl.BlockSpec((1, cols), lambda j, i: (0, j)),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
        interpret=True,
    )(x)


# --- scalar prefetch: gather row blocks by index


def gather_rows_kernel(idx_ref, x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0


def gather_rows(idx, x, rows=8):
    n_out = idx.shape[0]
    return pl.pallas_call(
        gather_rows_kernel,
        out_shape=jax.ShapeDtypeStruct((n_out * rows, x.shape[1]), x.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(n_out,),
            in_specs=[pl.BlockSpec((rows, x.shape[1]), lambda i, idx_ref: (idx_ref[i], 0))],
            out_specs=pl.BlockSpec((rows, x.shape[1]), lambda i, idx_ref: (i, 0)),
        ),
        interpret=True,
    )(idx, x)


# --- in place: input_output_aliases


def scale_in_place_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 3.0 + 1.0


def scale_in_place(x, block=128):
    return pl.pallas_call(
        scale_in_place_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(x.shape[0] // block,),
        in_specs=[pl.BlockSpec((block,), lambda i: (i,))],
        out_specs=pl.BlockSpec((block,), lambda i: (i,)),
        input_output_aliases={0: 0},
        interpret=True,
    )(x)


# --- a while loop: row-wise cumulative maximum search


def first_above_kernel(x_ref, o_ref, *, threshold):
    row = x_ref[...]
    n = row.shape[-1]

    def cond(state):
        i, found = state
        return jnp.logical_and(i < n, found < 0)

    def body(state):
        i, found = state
        value = x_ref[0, pl.ds(i, 1)]
        return i + 1, jnp.where(value[0] > threshold, i, found)

    _, found = jax.lax.while_loop(cond, body, (jnp.int32(0), jnp.int32(-1)))
    o_ref[...] = jnp.full(o_ref.shape, found, jnp.int32)
    del row


def first_above(x, threshold=1.5):
    m, n = x.shape
    return pl.pallas_call(
        functools.partial(first_above_kernel, threshold=threshold),
        out_shape=jax.ShapeDtypeStruct((m, 1), jnp.int32),
        grid=(m,),
        in_specs=[pl.BlockSpec((1, n), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((1, 1), lambda i: (i, 0)),
        interpret=True,
    )(x)


# --- atomics (Pallas-Triton): column sums, split over row blocks


def atomic_column_sum_kernel(x_ref, zeros_ref, o_ref, *, rows):
    pid = pl.program_id(0)
    n = x_ref.shape[1]
    partial = jnp.sum(x_ref[pl.ds(pid * rows, rows), :], axis=0)
    plgpu.atomic_add(o_ref, (pl.ds(0, n),), partial)


def atomic_column_sum(x, rows=16):
    m, n = x.shape
    return pl.pallas_call(
        functools.partial(atomic_column_sum_kernel, rows=rows),
        out_shape=jax.ShapeDtypeStruct((n,), x.dtype),
        grid=(m // rows,),
        input_output_aliases={1: 0},
        interpret=True,
    )(x, jnp.zeros((n,), x.dtype))


# --- assorted lax primitives in one kernel: integer and float math, layout, arg reductions


def assorted_kernel(x_ref, n_ref, o_ref, i_ref):
    x = x_ref[...]  # (8, 32) fp32
    n = n_ref[...]  # (8, 32) int32
    mixed = jnp.clip(x, -1.0, 1.0) ** 3 + jax.nn.sigmoid(x) - jnp.where(x > 0, jnp.abs(x), jnp.sign(x))
    halves = jnp.concatenate([x[:, 16:], x[:, :16]], axis=1)
    gram = jax.lax.dot_general(x, halves, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32)
    running = jnp.cumsum(x, axis=1) + jax.lax.cummax(x, axis=0, reverse=True)
    o_ref[...] = mixed + halves * 0.5 + jnp.tanh(gram[:, :1]) + jnp.floor(x * 3.0) / 3.0 + running
    bits = (n >> 2) ^ (n << 1) | (n & 7)
    rows = jnp.argmax(x, axis=1).astype(jnp.int32)[:, None] + jnp.argmin(n, axis=1).astype(jnp.int32)[:, None]
    anypos = jnp.any(x > 1.5, axis=1, keepdims=True).astype(jnp.int32)
    i_ref[...] = bits + n // 3 + n % 5 + rows + anypos + jnp.max(n, axis=0, keepdims=True)


def assorted(x, n):
    return pl.pallas_call(
        assorted_kernel,
        out_shape=(jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(n.shape, n.dtype)),
        grid=(x.shape[0] // 8,),
        in_specs=[pl.BlockSpec((8, 32), lambda i: (i, 0)), pl.BlockSpec((8, 32), lambda i: (i, 0))],
        out_specs=(pl.BlockSpec((8, 32), lambda i: (i, 0)), pl.BlockSpec((8, 32), lambda i: (i, 0))),
        interpret=True,
    )(x, n)


# --- compare-and-swap (Pallas-Triton): the first program to claim a slot keeps it


def claim_kernel(x_ref, init_ref, o_ref):
    del x_ref, init_ref
    plgpu.atomic_cas(o_ref, jnp.int32(-1), pl.program_id(0))


def claim(x):
    return pl.pallas_call(
        claim_kernel,
        out_shape=jax.ShapeDtypeStruct((), jnp.int32),
        grid=(x.shape[0],),
        input_output_aliases={1: 0},
        interpret=True,
    )(x, jnp.int32(-1))
