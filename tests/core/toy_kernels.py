"""Kernels in the toy DSL (tests/core/toy.py), written the way tile kernels are."""

from toy import kernel

BLOCK = 64


@kernel
def vector_add(k, x, y, out, n):
    offs = k.program_id(0) * BLOCK + k.arange(BLOCK)
    mask = offs < n
    k.store(out + offs, k.load(x + offs, mask) + k.load(y + offs, mask), mask)


@kernel
def masked_row_sum(k, x, out, n_cols):
    row = k.program_id(0)
    cols = k.arange(BLOCK)
    mask = cols < n_cols
    values = k.load(x + row * n_cols + cols, mask)
    k.store(out + row, k.sum(k.where(mask, values, 0.0), 0))


@kernel
def histogram(k, data, bins, n):
    offs = k.program_id(0) * BLOCK + k.arange(BLOCK)
    mask = offs < n
    k.atomic_add(bins + k.load(data + offs, mask), 1, mask)


@kernel
def shifted_store(k, x, out, n):
    offs = k.program_id(0) * BLOCK + k.arange(BLOCK)
    k.store(out + offs + 1, k.load(x + offs, offs < n), offs < n)  # off by one: the last lane writes past out
