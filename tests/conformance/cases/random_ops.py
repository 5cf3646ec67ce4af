"""Counter-based randomness: dropout with tl.rand, tl.randint / randint4x and tl.randn, checked
against Philox 4x32-10 recomputed in NumPy (not statistically): the streams are bit-exact."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ..case import Case, poison, register
from ._common import f64, normal, philox4x32, uint_to_uniform


@triton.jit
def dropout_kernel(x_ptr, out_ptr, rand_ptr, n, p, scale, seed, BLOCK: tl.constexpr):
    """Seeded dropout (the low-memory tutorial): the keep mask is recomputed from (seed, offset)."""
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x * scale, 0.0)
    tl.store(out_ptr + offsets, output, mask=mask)
    tl.store(rand_ptr + offsets, random, mask=mask)


def _dropout_inputs(rng):
    n = 2000
    p = 0.3
    return {
        "x": normal(rng, n),
        "out": poison(n, np.float32),
        "rand": poison(n, np.float32),
        "n": n,
        "p": p,
        "scale": float(np.float32(1 / (1 - p))),
        "seed": int(rng.integers(0, 2**31)),
    }


def _dropout_reference(i):
    r = uint_to_uniform(philox4x32(i["seed"], np.arange(i["n"]))[0])
    keep = r > np.float32(i["p"])
    out = np.where(keep, i["x"] * np.float32(i["scale"]), np.float32(0))
    return {"out": f64(out), "rand": f64(r)}


register(
    Case(
        name="dropout_rand",
        make_inputs=_dropout_inputs,
        launch=lambda wrap, t: wrap(dropout_kernel)[(triton.cdiv(t["n"], 512),)](
            t["x"], t["out"], t["rand"], t["n"], t["p"], t["scale"], t["seed"], BLOCK=512
        ),
        reference=_dropout_reference,
        outputs=("out", "rand"),
        # Philox is integer arithmetic; the uniform float is one int->fp32 conversion and one
        # multiply; x * scale is one rounded multiply: bit-exact.
        tolerance={"out": (0.0, 0.0), "rand": (0.0, 0.0)},
        tags=frozenset({"exact", "rand"}),
    )
)


@triton.jit
def randint_kernel(r_ptr, r0_ptr, r1_ptr, r2_ptr, r3_ptr, normal_ptr, n, base, seed, BLOCK: tl.constexpr):
    """tl.randint, tl.randint4x and tl.randn at offsets base + i, with a seed past 32 bits."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    counter = base + offs
    r = tl.randint(seed, counter)
    tl.store(r_ptr + offs, r.to(tl.int32, bitcast=True), mask=mask)
    r0, r1, r2, r3 = tl.randint4x(seed, counter)
    tl.store(r0_ptr + offs, r0.to(tl.int32, bitcast=True), mask=mask)
    tl.store(r1_ptr + offs, r1.to(tl.int32, bitcast=True), mask=mask)
    tl.store(r2_ptr + offs, r2.to(tl.int32, bitcast=True), mask=mask)
    tl.store(r3_ptr + offs, r3.to(tl.int32, bitcast=True), mask=mask)
    tl.store(normal_ptr + offs, tl.randn(seed, counter), mask=mask)


_RI_OUT = ("r", "r0", "r1", "r2", "r3")


def _randint_inputs(rng):
    n = 1000
    return {
        **{k: poison(n, np.int32) for k in _RI_OUT},
        "normal": poison(n, np.float32),
        "n": n,
        "base": int(rng.integers(0, 2**30)),
        "seed": int(rng.integers(2**32, 2**40)),
    }


def _randint_reference(i):
    streams = philox4x32(i["seed"], i["base"] + np.arange(i["n"]))
    ints = [s.view(np.int32).astype(np.int64) for s in streams]
    u1 = np.maximum(f64(uint_to_uniform(streams[0])), 1.0e-7)
    u2 = f64(uint_to_uniform(streams[1]))
    normal = np.sqrt(-2.0 * np.log(u1)) * np.cos(6.283185307179586 * u2)
    return {"r": ints[0], "r0": ints[0], "r1": ints[1], "r2": ints[2], "r3": ints[3], "normal": normal}


register(
    Case(
        name="randint_randn",
        make_inputs=_randint_inputs,
        launch=lambda wrap, t: wrap(randint_kernel)[(triton.cdiv(t["n"], 256),)](
            *(t[k] for k in _RI_OUT), t["normal"], t["n"], t["base"], t["seed"], BLOCK=256
        ),
        reference=_randint_reference,
        outputs=(*_RI_OUT, "normal"),
        # Integer streams are exact. randn is Box-Muller through fast log/sqrt/cos: |r| <= 5.7,
        # so ~1e-6 relative error in r and 2e-6 absolute in cos give ~2e-5 absolute.
        tolerance={**{k: (0.0, 0.0) for k in _RI_OUT}, "normal": (1e-5, 2e-5)},
        tags=frozenset({"rand"}),
    )
)
