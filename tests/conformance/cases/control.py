"""Control flow and launch machinery: program-dependent branches, while loops with per-program
trip counts, static_range, device_print, heuristics, autotune with reset_to_zero, callable grids."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ..case import Case, poison, register
from ._common import f64, normal, rnd, uniform


@triton.jit
def branchy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Each program takes one of three paths chosen by its id, as a tail/boundary special case does."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if pid % 3 == 0:
        y = x * 2.0
    elif pid % 3 == 1:
        y = x
        for _ in range(3):
            y = y + 1.0
    else:
        y = -x
    tl.store(out_ptr + offs, y, mask=mask)


def _branchy_inputs(rng):
    n = 64 * 11 - 5
    return {"x": normal(rng, n), "out": poison(n, np.float32), "n": n}


def _branchy_reference(i):
    x = i["x"].astype(np.float32)
    pid = np.arange(x.size) // 64
    plus3 = ((x + np.float32(1)) + np.float32(1)) + np.float32(1)  # three fp32 roundings, as the loop
    return {"out": np.where(pid % 3 == 0, f64(x) * 2, np.where(pid % 3 == 1, f64(plus3), -f64(x)))}


register(
    Case(
        name="program_branch",
        make_inputs=_branchy_inputs,
        launch=lambda wrap, t: wrap(branchy_kernel)[(triton.cdiv(t["n"], 64),)](
            t["x"], t["out"], t["n"], BLOCK=64
        ),
        reference=_branchy_reference,
        outputs=("out",),
        tolerance={"out": (0.0, 0.0)},  # exact fp32 ops, rounded in the kernel's order
        tags=frozenset({"exact", "control"}),
    )
)


@triton.jit
def ragged_loop_kernel(x_ptr, counts_ptr, out_ptr, iters_ptr, D: tl.constexpr):
    """Damped accumulation repeated a per-program number of times (while and for with loaded bounds)."""
    pid = tl.program_id(0)
    cols = tl.arange(0, D)
    x = tl.load(x_ptr + pid * D + cols)
    count = tl.load(counts_ptr + pid)
    acc = tl.zeros([D], dtype=tl.float32)
    i = 0
    while i < count:
        acc = acc * 0.5 + x
        i += 1
    # A second loop whose bound is also per-program: count the steps taken.
    steps = 0
    for _ in range(0, count, 2):
        steps += 1
    tl.store(out_ptr + pid * D + cols, acc)
    tl.store(iters_ptr + pid, steps)


def _ragged_inputs(rng):
    programs, d = 24, 32
    counts = rng.integers(0, 9, programs).astype(np.int32)
    counts[1] = 0  # one program never enters the loop
    return {
        "x": normal(rng, (programs, d)),
        "counts": counts,
        "out": poison((programs, d), np.float32),
        "iters": poison(programs, np.int32),
        "programs": programs,
        "D": d,
    }


def _ragged_reference(i):
    x = i["x"].astype(np.float32)
    out = np.zeros_like(x)
    for p, c in enumerate(i["counts"]):
        acc = np.zeros(x.shape[1], np.float32)
        for _ in range(int(c)):
            acc = acc * np.float32(0.5) + x[p]  # acc * 0.5 is exact, so fma contraction cannot differ
        out[p] = acc
    return {"out": f64(out), "iters": (i["counts"].astype(np.int64) + 1) // 2}


register(
    Case(
        name="while_per_program_trip_count",
        make_inputs=_ragged_inputs,
        launch=lambda wrap, t: wrap(ragged_loop_kernel)[(t["programs"],)](
            t["x"], t["counts"], t["out"], t["iters"], D=t["D"]
        ),
        reference=_ragged_reference,
        outputs=("out", "iters"),
        tolerance={"out": (0.0, 0.0), "iters": (0.0, 0.0)},
        tags=frozenset({"exact", "control"}),
    )
)


@triton.jit
def horner_kernel(x_ptr, coef_ptr, out_ptr, n, DEGREE: tl.constexpr, BLOCK: tl.constexpr):
    """Polynomial by Horner's rule with the coefficient loop unrolled by tl.static_range."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = tl.zeros([BLOCK], dtype=tl.float32) + tl.load(coef_ptr + DEGREE)
    for k in tl.static_range(DEGREE - 1, -1, -1):
        acc = acc * x + tl.load(coef_ptr + k)
    tl.store(out_ptr + offs, acc, mask=mask)


def _horner_inputs(rng):
    n = 1000
    return {"x": uniform(rng, n, -1.0, 1.0), "coef": normal(rng, 6), "out": poison(n, np.float32), "n": n}


register(
    Case(
        name="static_range_horner",
        make_inputs=_horner_inputs,
        launch=lambda wrap, t: wrap(horner_kernel)[(triton.cdiv(t["n"], 256),)](
            t["x"], t["coef"], t["out"], t["n"], DEGREE=5, BLOCK=256
        ),
        reference=lambda i: {"out": np.polynomial.polynomial.polyval(f64(i["x"]), f64(i["coef"]))},
        outputs=("out",),
        # Five fp32 multiply-adds (maybe contracted to fma) on |x| <= 1, coefficients ~N(0,1): a few
        # ulps of the largest partial sum (~5) bound the error.
        tolerance={"out": (1e-6, 5e-6)},
        tags=frozenset({"control"}),
    )
)


@triton.jit
def print_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Scales a vector and prints a per-program checksum, the debugging habit kernels ship with."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.device_print("pid sum", tl.sum(x, axis=0))
    tl.store(out_ptr + offs, x * 3.0, mask=mask)


register(
    Case(
        name="device_print",
        make_inputs=lambda rng: {"x": normal(rng, 100), "out": poison(100, np.float32), "n": 100},
        launch=lambda wrap, t: wrap(print_kernel)[(4,)](t["x"], t["out"], t["n"], BLOCK=32),
        reference=lambda i: {"out": rnd(f64(i["x"]) * 3.0, np.float32)},
        outputs=("out",),
        tolerance={"out": (0.0, 0.0)},  # printed text is not compared; x * 3 is one correctly rounded mul
        tags=frozenset({"exact", "print"}),
    )
)


@triton.heuristics(
    {
        "BLOCK": lambda args: min(1024, triton.next_power_of_2(args["n"] // 4)),
        "EVEN_N": lambda args: args["n"] % min(1024, triton.next_power_of_2(args["n"] // 4)) == 0,
    }
)
@triton.jit
def scale_kernel(x_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
    """Scale by a runtime float; the block size and the unmasked fast path come from heuristics."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN_N:
        x = tl.load(x_ptr + offs)
        tl.store(out_ptr + offs, x * alpha)
    else:
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x * alpha, mask=mask)


def _scale_inputs(rng):
    return {
        "x": normal(rng, 1024),
        "x2": normal(rng, 1000),
        "out": poison(1024, np.float32),
        "out2": poison(1000, np.float32),
        "alpha": float(np.float32(rng.uniform(0.5, 2.0))),
    }


def _scale_launch(wrap, t):
    grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731
    wrap(scale_kernel)[grid](t["x"], t["out"], t["alpha"], 1024)  # EVEN_N path
    wrap(scale_kernel)[grid](t["x2"], t["out2"], t["alpha"], 1000)  # masked path


register(
    Case(
        name="heuristics_grid_callable",
        make_inputs=_scale_inputs,
        launch=_scale_launch,
        reference=lambda i: {
            "out": rnd(f64(i["x"]) * i["alpha"], np.float32),
            "out2": rnd(f64(i["x2"]) * i["alpha"], np.float32),
        },
        outputs=("out", "out2"),
        tolerance={"out": (0.0, 0.0), "out2": (0.0, 0.0)},  # alpha is an fp32 value: one rounded mul
        tags=frozenset({"exact", "control"}),
    )
)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_N": 32}, num_warps=1),
        triton.Config({"BLOCK_N": 64}, num_warps=2),
    ],
    key=["n_cols"],
    reset_to_zero=["row_sum_ptr"],
)
@triton.jit
def row_sum_atomic_kernel(x_ptr, row_sum_ptr, n_rows, n_cols, BLOCK_N: tl.constexpr):
    """Row sums with one program per (row, column block), combined with atomic adds, so every
    autotuning trial needs the output reset to zero first."""
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0)
    tl.atomic_add(row_sum_ptr + row, tl.sum(x, axis=0))


def _rowsum_inputs(rng):
    rows, cols = 8, 200
    # Integers keep every partial sum exact, whatever order the atomics land in.
    x = rng.integers(-1000, 1000, (rows, cols)).astype(np.int32)
    return {"x": x, "row_sum": poison(rows, np.int32), "rows": rows, "cols": cols}


register(
    Case(
        name="autotune_reset_to_zero",
        make_inputs=_rowsum_inputs,
        launch=lambda wrap, t: wrap(row_sum_atomic_kernel)[
            lambda meta: (t["rows"], triton.cdiv(t["cols"], meta["BLOCK_N"]))
        ](t["x"], t["row_sum"], t["rows"], t["cols"]),
        reference=lambda i: {"row_sum": i["x"].astype(np.int64).sum(axis=1)},
        outputs=("row_sum",),
        tolerance={"row_sum": (0.0, 0.0)},
        tags=frozenset({"exact", "autotune", "atomics", "control"}),
    )
)


@triton.jit
def tile_id_kernel(out_ptr, stride_r, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Writes a code of (program ids, grid size) into its tile: checks a 2-D callable grid."""
    pid_r = tl.program_id(0)
    pid_c = tl.program_id(1)
    code = pid_r * 1000 + pid_c * 10 + tl.num_programs(0) * 100000 + tl.num_programs(1) * 10000000
    rows = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    val = code + (rows[:, None] % BLOCK_R) * 0 + (cols[None, :] % 2)
    tl.store(out_ptr + rows[:, None] * stride_r + cols[None, :], val)


def _tile_reference(i):
    r, c = i["out"].shape
    gr, gc = r // 8, c // 16
    rows, cols = np.meshgrid(np.arange(r), np.arange(c), indexing="ij")
    return {"out": (rows // 8) * 1000 + (cols // 16) * 10 + gr * 100000 + gc * 10000000 + cols % 2}


register(
    Case(
        name="grid_2d_num_programs",
        make_inputs=lambda rng: {"out": poison((int(rng.integers(2, 5)) * 8, 48), np.int32)},
        launch=lambda wrap, t: wrap(tile_id_kernel)[
            lambda meta: (t["out"].shape[0] // meta["BLOCK_R"], t["out"].shape[1] // meta["BLOCK_C"])
        ](t["out"], t["out"].stride(0), BLOCK_R=8, BLOCK_C=16),
        reference=_tile_reference,
        outputs=("out",),
        tolerance={"out": (0.0, 0.0)},
        tags=frozenset({"exact", "control"}),
    )
)
