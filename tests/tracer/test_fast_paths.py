"""The tracer writes the same trace whether the engine proved an access from its factored form (no
per-lane check, no per-lane mask) or checked it lane by lane: same rows, columns and values, on
gathers, masked tails, loops and divergent programs; and each kernel's output matches float64 NumPy.
A gather written in row form (a base, strides and one offset per block row) reads back as the same
lanes as the trace that lists every lane."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
import triton
import triton.language as tl

import tilescope

# the speed benchmark's divergent kernels: a per-program trip count with a gather, a while loop
from benchmarks.divergent import csr_spmv_kernel as csr_kernel
from benchmarks.divergent import searchsorted_kernel as search_kernel

# rows of w picked by idx: per-row pointers from data plus shared columns
from tests.profiler.kernels import embedding_kernel
from tilescope.clients.tracer import rows
from tilescope.clients.tracer.reader import expand_addresses, read_part
from tilescope.clients.tracer.schema import OPS_SCHEMA
from tilescope.engine import access
from tilescope.examples.matmul import matmul_kernel
from tilescope.examples.vector_add import add_kernel


@triton.jit
def branch_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Even and odd programs take different branches; the tail is masked."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if pid % 2 == 0:
        y = x * 2.0
    else:
        y = x - 1.0
    tl.store(out_ptr + offs, y, mask=mask)


def _vector_add(rng):
    n = 5000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.empty_like(x)
    return lambda k: k[(triton.cdiv(n, 512),)](x, y, out, n, BLOCK=512), lambda: (out, x.astype(float) + y)


def _matmul(rng):
    m, n, k = 70, 50, 90
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    c = np.empty((m, n), np.float32)
    grid = (triton.cdiv(m, 32), triton.cdiv(n, 32))
    return (
        lambda kern: kern[grid](a, b, c, m, n, k, k, 1, n, 1, n, 1, BM=32, BN=32, BK=32),
        lambda: (c, a.astype(float) @ b),
    )


def _embedding(rng):
    programs, rows, d, vocab = 24, 8, 16, 300
    idx = rng.integers(0, vocab, programs * rows)
    w = rng.standard_normal((vocab, d)).astype(np.float32)
    out = np.empty((programs * rows, d), np.float32)
    return lambda k: k[(programs,)](idx, w, out, D=d, ROWS=rows), lambda: (out, w.astype(float)[idx])


def _csr(rng):
    lengths = rng.integers(0, 40, 64)
    rowptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    cols = rng.integers(0, 100, rowptr[-1]).astype(np.int32)
    vals = rng.standard_normal(rowptr[-1]).astype(np.float32)
    x = rng.standard_normal(100).astype(np.float32)
    y = np.empty(64, np.float32)
    ref = np.array(
        [vals[s:e].astype(float) @ x[cols[s:e]] for s, e in zip(rowptr[:-1], rowptr[1:], strict=True)]
    )
    return lambda k: k[(64,)](rowptr, cols, vals, x, y, BLOCK=16), lambda: (y, ref)


def _search(rng):
    table = np.sort(rng.standard_normal(1000)).astype(np.float32)
    queries = rng.standard_normal(200).astype(np.float32)
    out = np.empty(200, np.int32)
    return (
        lambda k: k[(200,)](table, 1000, queries, out),
        lambda: (out, np.searchsorted(table, queries).astype(float)),
    )


def _branch(rng):
    n = 3000
    x = rng.standard_normal(n).astype(np.float32)
    out = np.empty_like(x)
    even = (np.arange(n) // 256) % 2 == 0
    return lambda k: k[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256), lambda: (
        out,
        np.where(even, x * 2.0, x - 1.0),
    )


CASES = {
    "vector_add": (add_kernel, _vector_add, 1e-6),
    "matmul": (matmul_kernel, _matmul, 5e-2),  # tf32 dot: inputs keep 10 mantissa bits, sums of 90
    "embedding": (embedding_kernel, _embedding, 0.0),
    "csr_spmv": (csr_kernel, _csr, 1e-4),
    "binary_search": (search_kernel, _search, 0.0),
    "branch": (branch_kernel, _branch, 1e-6),
}


def _trace(kernel, launch, trace_dir, values: str) -> tuple[pa.Table, dict]:
    """The ops table and launch file (less times and process) of one traced launch."""
    launch(tilescope.trace(kernel, clients="tracer", trace_dir=trace_dir, values=values))
    parts = sorted((trace_dir / "ops").glob("*/part-*.parquet"))
    table = pa.concat_tables([read_part(p) for p in parts])
    launch_file = json.loads(next((trace_dir / "launches").glob("launch-*.json")).read_text())
    for key in ("started", "finished", "process", "engine_launch_id", "parts"):
        launch_file.pop(key)
    return table, launch_file


@pytest.mark.parametrize("values", ["off", "all"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_proven_accesses_trace_as_checked_ones(name, values, tmp_path, monkeypatch):
    kernel, make, tolerance = CASES[name]
    launch, result = make(np.random.default_rng())  # one set of arrays: both traces see the same addresses
    fast, fast_launch = _trace(kernel, launch, tmp_path / "fast", values)
    np.testing.assert_allclose(*result(), rtol=tolerance, atol=tolerance)
    monkeypatch.setattr(access, "_prove", lambda *args: None)
    monkeypatch.setattr(access, "_prove_rows", lambda *args: None)
    monkeypatch.setattr(rows, "_row_form", lambda *args: None)  # list every lane of a gather
    plain, plain_launch = _trace(kernel, launch, tmp_path / "plain", values)
    np.testing.assert_allclose(*result(), rtol=tolerance, atol=tolerance)
    assert fast_launch == plain_launch
    assert fast.num_rows == plain.num_rows > 0
    in_rows = fast.column("address_rows").is_valid().to_numpy(zero_copy_only=False)
    assert in_rows.any() == (name == "embedding")
    fast, plain = expand_addresses(fast), expand_addresses(plain)
    for column in OPS_SCHEMA.names:
        if column not in ("address_strides", "address_rows"):  # how the lanes are stored, not which
            assert _cells(fast, column) == _cells(plain, column), column
    strides = _cells(fast, "address_strides"), _cells(plain, "address_strides")
    assert [f for f, r in zip(strides[0], in_rows, strict=True) if not r] == [
        p for p, r in zip(strides[1], in_rows, strict=True) if not r
    ]
    assert _cells(plain, "address_rows") == [None] * plain.num_rows


def _cells(table: pa.Table, column: str) -> list:
    """A column's cells as Python values, NaN spelled "nan" (NaN != NaN would fail equal columns)."""
    return [
        [("nan" if x != x else x) for x in cell] if isinstance(cell, list) else cell
        for cell in table.column(column).to_pylist()
    ]


@pytest.mark.parametrize("name", sorted(CASES))
def test_lane_steps_the_engine_knew_trace_as_derived_ones(name, tmp_path, monkeypatch):
    """An address block whose lane steps the engine worked out while moving its data (and carried
    over to the block plus a constant: a pointer advanced in a loop) reaches the tracer with them;
    the trace is the one the tracer writes working them out from the block itself, cell for cell."""
    kernel, make, tolerance = CASES[name]
    launch, result = make(np.random.default_rng())
    given, form = [], rows._block_form
    monkeypatch.setattr(rows, "_block_form", lambda b, lanes=None: given.append(lanes) or form(b, lanes))
    known, known_launch = _trace(kernel, launch, tmp_path / "known", "off")
    np.testing.assert_allclose(*result(), rtol=tolerance, atol=tolerance)
    assert any(lanes is not None for lanes in given) or name not in ("matmul", "vector_add")
    monkeypatch.setattr(access, "known", lambda *args: None)
    derived, derived_launch = _trace(kernel, launch, tmp_path / "derived", "off")
    np.testing.assert_allclose(*result(), rtol=tolerance, atol=tolerance)
    assert known_launch == derived_launch and known.num_rows == derived.num_rows > 0
    for column in OPS_SCHEMA.names:
        assert _cells(known, column) == _cells(derived, column), column
