"""FLOPs from the engine's compute counts: the same as from one compute record per op, on kernels
with loops, divergent while loops (attempts abandoned and replayed), per-program trip counts and dots.

``GOLDEN`` holds the roofline figures of each kernel as the profiler reported them when it still
counted FLOPs from compute records (commit d1b925b): the same with values computed and with
addresses only.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from kernels import matmul_kernel, polynomial_kernel, searchsorted_kernel

import tilescope
from benchmarks.divergent import csr_spmv_kernel
from tilescope.clients.base import Client
from tilescope.clients.profiler import roofline
from tilescope.frontends.triton.runtime import RUNTIME
from tilescope.ir import ComputeCount, Need, OpKind

_COMPUTE = frozenset({OpKind.ELEMENTWISE, OpKind.DOT, OpKind.REDUCE, OpKind.SCAN})


def _polynomial(rng):
    n, block, degree = 1000, 128, 5
    x = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    out = torch.full((n,), float("nan"))
    acc = np.ones(n)
    for d in range(degree):
        acc = acc * x.double().numpy() + (d + 1.0)
    meta = {"DEGREE": degree, "BLOCK": block}
    return polynomial_kernel, (-(-n // block),), (x, out, n), meta, out, np.exp(acc * 0.01), 1e-5


def _searchsorted(rng):
    n, queries = 4096, 64
    table = torch.from_numpy(np.sort(rng.standard_normal(n)).astype(np.float32))
    q = torch.from_numpy(rng.standard_normal(queries).astype(np.float32))
    out = torch.full((queries,), -1, dtype=torch.int32)
    ref = np.searchsorted(table.numpy(), q.numpy())
    return searchsorted_kernel, (queries,), (table, n, q, out), {}, out, ref, 0.0


def _csr(rng):
    rows, block = 32, 16
    lengths = rng.integers(1, 100, rows)
    rowptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    cols = rng.integers(0, 512, int(rowptr[-1])).astype(np.int32)
    vals = rng.standard_normal(cols.size).astype(np.float32)
    x = rng.standard_normal(512).astype(np.float32)
    y = torch.full((rows,), float("nan"))
    ref = np.add.reduceat(vals.astype(np.float64) * x[cols], rowptr[:-1])
    args = (*(torch.from_numpy(a) for a in (rowptr, cols, vals, x)), y)
    return csr_spmv_kernel, (rows,), args, {"BLOCK": block}, y, ref, 1e-4


def _matmul(rng):
    m = n = k = 64
    a = torch.from_numpy(rng.standard_normal((m, k)).astype(np.float32))
    b = torch.from_numpy(rng.standard_normal((k, n)).astype(np.float32))
    c = torch.full((m, n), float("nan"))
    meta = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_SIZE_M": 2}
    args = (a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride())
    return matmul_kernel, (4,), args, meta, c, a.double().numpy() @ b.double().numpy(), 1e-4


CASES = {"polynomial": _polynomial, "searchsorted": _searchsorted, "csr": _csr, "matmul": _matmul}
GOLDEN = {
    "csr": {
        "flops": 4384,
        "flops_by_roof": {"fp32": 4384},
        "dram_bytes": 16032,
        "request_bytes": 275072,
        "intensity": 0.2735,
        "roof": "fp32",
        "ridge": 12.02,
        "bound": "memory",
        "floor_us": {"memory": 0.003772, "compute": 8.579e-05},
        "attainable_tflops": 1.162,
    },
    "matmul": {
        "flops": 524288,
        "flops_by_roof": {"fp32": 524288},
        "dram_bytes": 49152,
        "request_bytes": 81920,
        "intensity": 10.67,
        "roof": "fp32",
        "ridge": 12.02,
        "bound": "memory",
        "floor_us": {"memory": 0.01157, "compute": 0.01026},
        "attainable_tflops": 45.33,
    },
    "polynomial": {
        "flops": 13352,
        "flops_by_roof": {"fp32": 13352},
        "dram_bytes": 8000,
        "request_bytes": 8000,
        "intensity": 1.669,
        "roof": "fp32",
        "ridge": 12.02,
        "bound": "memory",
        "floor_us": {"memory": 0.001882, "compute": 0.0002613},
        "attainable_tflops": 7.093,
    },
    "searchsorted": {
        "flops": 768,
        "flops_by_roof": {"fp32": 768},
        "dram_bytes": 7168,
        "request_bytes": 28672,
        "intensity": 0.1071,
        "roof": "fp32",
        "ridge": 12.02,
        "bound": "memory",
        "floor_us": {"memory": 0.001687, "compute": 1.503e-05},
        "attainable_tflops": 0.4554,
    },
}


class _Records(Client):
    """Every compute record, and every compute count, of the launches it sees."""

    name = "compute-records"
    kinds = _COMPUTE
    needs = frozenset({Need.ADDRESSES_ONLY, Need.COMPUTE_COUNTS})

    def __init__(self):
        self.records, self.counts = [], []

    def on_op(self, record):
        self.records.append(record)

    def on_compute(self, count):
        self.counts.append(count)


def _run(case: str, rng, clients, compute_outputs: bool):
    kernel, grid, args, meta, out, ref, tolerance = CASES[case](rng)
    for learned in (RUNTIME.eager_sites, RUNTIME.copy_sites, RUNTIME.serial_loops):
        learned(kernel).clear()  # as on a first launch: attempts abandoned (a value was needed) and redone
    launcher = tilescope.trace(kernel, clients=clients, compute_outputs=compute_outputs)
    launcher[grid](*args, **meta)
    if compute_outputs:
        np.testing.assert_allclose(out.numpy(), ref, rtol=tolerance, atol=tolerance)
    return launcher


def _as_count(record) -> ComputeCount:
    """The count one compute record stands for."""
    return ComputeCount(record.kind, record.launch_id, record.site, record.dtype, record.shape,
                        record.operands, tuple(sorted(record.attrs.items())),
                        record.program_ids.shape[0])  # fmt: skip


def _per_site(counts) -> dict:
    totals: dict = {}
    for c in counts:
        key = (c.kind, c.site, c.dtype, c.shape, c.operands, c.attrs)
        totals[key] = totals.get(key, 0) + c.programs
    return totals


@pytest.mark.parametrize("compute_outputs", [True, False], ids=["values", "addresses"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_roofline_is_what_compute_records_gave(case, compute_outputs):
    launcher = _run(case, np.random.default_rng(7), "profiler", compute_outputs)
    (report,) = launcher.reports
    assert report.launches[-1]["roofline"] == GOLDEN[case]


@pytest.mark.parametrize("case", sorted(CASES))
def test_counts_add_up_to_the_records_per_site(case):
    seen = _Records()
    _run(case, np.random.default_rng(7), [seen, "profiler"], compute_outputs=False)
    assert seen.records and seen.counts
    assert _per_site(seen.counts) == {k: v for k, v in _per_site(map(_as_count, seen.records)).items() if v}
    work: dict[str, int] = {}
    for c in map(_as_count, seen.records):
        work[roofline.roof_of(c)] = work.get(roofline.roof_of(c), 0) + roofline.flops(c)
    assert {r: n for r, n in work.items() if n} == GOLDEN[case]["flops_by_roof"]
