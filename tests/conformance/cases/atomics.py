"""Atomics with their return values: every read-modify-write op uncontended (old values exact),
and contended counters whose final values and ticket sets are order-independent."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ..case import Case, poison, register
from ._common import f64, normal

_INT_OPS = ("add", "max", "min", "and", "or", "xor", "xchg", "cas")
_FLT_OPS = ("fadd", "fmax", "fmin")


@triton.jit
def atomic_rmw_kernel(ti_ptr, vi_ptr, cmp_ptr, oldi_ptr, tf_ptr, vf_ptr, oldf_ptr, n, BLOCK: tl.constexpr):
    """Each lane owns one element per target row, so every old value is determined."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(vi_ptr + offs, mask=mask, other=0)
    tl.store(oldi_ptr + 0 * n + offs, tl.atomic_add(ti_ptr + 0 * n + offs, v, mask=mask), mask=mask)
    tl.store(oldi_ptr + 1 * n + offs, tl.atomic_max(ti_ptr + 1 * n + offs, v, mask=mask), mask=mask)
    tl.store(oldi_ptr + 2 * n + offs, tl.atomic_min(ti_ptr + 2 * n + offs, v, mask=mask), mask=mask)
    tl.store(oldi_ptr + 3 * n + offs, tl.atomic_and(ti_ptr + 3 * n + offs, v, mask=mask), mask=mask)
    tl.store(
        oldi_ptr + 4 * n + offs, tl.atomic_or(ti_ptr + 4 * n + offs, v, mask=mask, sem="relaxed"), mask=mask
    )
    tl.store(
        oldi_ptr + 5 * n + offs, tl.atomic_xor(ti_ptr + 5 * n + offs, v, mask=mask, sem="release"), mask=mask
    )
    tl.store(oldi_ptr + 6 * n + offs, tl.atomic_xchg(ti_ptr + 6 * n + offs, v, mask=mask), mask=mask)
    cmp = tl.load(cmp_ptr + offs, mask=mask, other=0)
    tl.store(oldi_ptr + 7 * n + offs, tl.atomic_cas(ti_ptr + 7 * n + offs, cmp, v), mask=mask)
    w = tl.load(vf_ptr + offs, mask=mask, other=0.0)
    tl.store(oldf_ptr + 0 * n + offs, tl.atomic_add(tf_ptr + 0 * n + offs, w, mask=mask), mask=mask)
    tl.store(oldf_ptr + 1 * n + offs, tl.atomic_max(tf_ptr + 1 * n + offs, w, mask=mask), mask=mask)
    tl.store(
        oldf_ptr + 2 * n + offs, tl.atomic_min(tf_ptr + 2 * n + offs, w, mask=mask, sem="acquire"), mask=mask
    )


def _rmw_inputs(rng):
    n = 256  # a whole number of blocks: atomic_cas takes no mask
    ti = rng.integers(-(2**31), 2**31, (len(_INT_OPS), n), dtype=np.int64).astype(np.int32)
    vi = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    cmp = np.where(np.arange(n) % 2 == 0, ti[7], ti[7] ^ 1).astype(np.int32)  # half the CAS lanes match
    tf = normal(rng, (len(_FLT_OPS), n), scale=4.0)
    return {
        "ti": ti,
        "vi": vi,
        "cmp": cmp,
        "oldi": poison((len(_INT_OPS), n), np.int32),
        "tf": tf,
        "vf": normal(rng, n, scale=4.0),
        "oldf": poison((len(_FLT_OPS), n), np.float32),
        "n": n,
    }


def _rmw_reference(i):
    ti, v = i["ti"].astype(np.int64), i["vi"].astype(np.int64)
    wrap = (ti[0] + v + 2**31) % 2**32 - 2**31
    new = np.stack(
        [
            wrap,
            np.maximum(ti[1], v),
            np.minimum(ti[2], v),
            ti[3] & v,
            ti[4] | v,
            ti[5] ^ v,
            v,
            np.where(i["cmp"] == ti[7], v, ti[7]),
        ]
    )
    tf, w = f64(i["tf"]), f64(i["vf"])
    newf = np.stack([tf[0] + w, np.maximum(tf[1], w), np.minimum(tf[2], w)])
    newf[0] = f64(newf[0].astype(np.float32))  # one fp32 rounding
    return {"ti": new, "oldi": ti, "tf": newf, "oldf": tf}


register(
    Case(
        name="atomics_return_values",
        make_inputs=_rmw_inputs,
        launch=lambda wrap, t: wrap(atomic_rmw_kernel)[(2,)](
            t["ti"], t["vi"], t["cmp"], t["oldi"], t["tf"], t["vf"], t["oldf"], t["n"], BLOCK=128
        ),
        reference=_rmw_reference,
        outputs=("ti", "oldi", "tf", "oldf"),
        tolerance={k: (0.0, 0.0) for k in ("ti", "oldi", "tf", "oldf")},
        tags=frozenset({"exact", "atomics"}),
    )
)


@triton.jit
def contended_kernel(
    x_ptr,
    counters_ptr,
    fmax_ptr,
    ticket_ptr,
    seen_ptr,
    ticket_base,
    BLOCK: tl.constexpr,
    NUM_COUNTERS: tl.constexpr,
):
    """All programs hammer a few counters; a scalar atomic_add hands each program a ticket."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    slot = offs % NUM_COUNTERS
    tl.atomic_add(counters_ptr + 0 * NUM_COUNTERS + slot, x)
    tl.atomic_max(counters_ptr + 1 * NUM_COUNTERS + slot, x)
    tl.atomic_min(counters_ptr + 2 * NUM_COUNTERS + slot, x)
    tl.atomic_and(counters_ptr + 3 * NUM_COUNTERS + slot, x)
    tl.atomic_or(counters_ptr + 4 * NUM_COUNTERS + slot, x)
    tl.atomic_xor(counters_ptr + 5 * NUM_COUNTERS + slot, x)
    tl.atomic_max(fmax_ptr + slot, x.to(tl.float32) * -0.5)  # negative floats: sign-aware max
    ticket = tl.atomic_add(ticket_ptr, 1)
    tl.store(seen_ptr + (ticket - ticket_base), pid + 1)
    # seen[] holds which program drew each ticket; the test reads only that all were drawn once.
    tl.atomic_add(seen_ptr + tl.num_programs(0) + (ticket - ticket_base), 1)


_PROGRAMS, _BLOCK, _COUNTERS = 16, 64, 8


def _contended_inputs(rng):
    n = _PROGRAMS * _BLOCK
    counters = rng.integers(-1000, 1000, (6, _COUNTERS)).astype(np.int32)
    base = int(rng.integers(0, 10**6))
    seen = np.concatenate([poison(_PROGRAMS, np.int32), rng.integers(0, 5, _PROGRAMS).astype(np.int32)])
    return {
        "x": rng.integers(-(2**20), 2**20, n).astype(np.int32),
        "counters": counters,
        "fmax": normal(rng, _COUNTERS) - np.float32(2**20),
        "ticket": np.array([base], np.int32),
        "seen": seen,
        "base": base,
    }


def _contended_reference(i):
    x = i["x"].astype(np.int64).reshape(-1, _COUNTERS)  # element k goes to slot k % 8
    c = i["counters"].astype(np.int64)
    new = np.stack(
        [
            c[0] + x.sum(0),
            np.maximum(c[1], x.max(0)),
            np.minimum(c[2], x.min(0)),
            np.bitwise_and.reduce(np.vstack([c[3], x]), axis=0),
            np.bitwise_or.reduce(np.vstack([c[4], x]), axis=0),
            np.bitwise_xor.reduce(np.vstack([c[5], x]), axis=0),
        ]
    )
    fmax = np.maximum(f64(i["fmax"]), (x * -0.5).max(0))
    seen = i["seen"].astype(np.int64).copy()
    seen[_PROGRAMS:] += 1  # every ticket drawn exactly once
    return {
        "counters": new,
        "fmax": fmax,
        "ticket": np.array([i["base"] + _PROGRAMS]),
        "seen_count": seen[_PROGRAMS:],
    }


def _contended_launch(wrap, t):
    wrap(contended_kernel)[(_PROGRAMS,)](
        t["x"],
        t["counters"],
        t["fmax"],
        t["ticket"],
        t["seen"],
        t["base"],
        BLOCK=_BLOCK,
        NUM_COUNTERS=_COUNTERS,
    )
    t["seen_count"] = t["seen"][_PROGRAMS:]


register(
    Case(
        name="atomics_contended",
        make_inputs=_contended_inputs,
        launch=_contended_launch,
        reference=_contended_reference,
        outputs=("counters", "fmax", "ticket", "seen_count"),
        # Integer and max results do not depend on the order the atomics land in: bit-exact.
        tolerance={k: (0.0, 0.0) for k in ("counters", "fmax", "ticket", "seen_count")},
        tags=frozenset({"exact", "atomics"}),
    )
)
