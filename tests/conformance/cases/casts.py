"""Conversions as Triton's generated code does them: round to nearest even (and toward zero on
request) into fp16/bf16, fp8 with saturation to the largest finite value, exact upcasts, and
float <-> int in and out of range."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ..case import LOW_PRECISION, Case, poison, register
from ._common import f64, rnd


@triton.jit
def downcast_kernel(x_ptr, h_ptr, b_ptr, hz_ptr, bz_ptr, n, BLOCK: tl.constexpr):
    """fp32 -> fp16 / bf16, round to nearest even (default) and toward zero (fp_downcast_rounding)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(h_ptr + offs, x.to(tl.float16), mask=mask)
    tl.store(b_ptr + offs, x.to(tl.bfloat16), mask=mask)
    tl.store(hz_ptr + offs, x.to(tl.float16, fp_downcast_rounding="rtz"), mask=mask)
    tl.store(bz_ptr + offs, x.to(tl.bfloat16, fp_downcast_rounding="rtz"), mask=mask)


def _downcast_inputs(rng):
    n = 1024
    parts = [
        rng.standard_normal(256) * 10.0 ** rng.integers(-8, 6, 256),  # many magnitudes, fp16 subnormals
        rng.uniform(6e4, 7e4, 64) * rng.choice([-1, 1], 64),  # around fp16's 65504 overflow
    ]
    # Exact ties between neighbouring bf16 values and between fp16 values: nearest-even decides.
    bf = rng.standard_normal(256).astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    parts.append((bf | np.uint32(0x8000)).view(np.float32))
    hf = rng.standard_normal(256).astype(np.float16).astype(np.float32).view(np.uint32)
    parts.append((hf | np.uint32(0x1000)).view(np.float32))
    x = np.concatenate(parts).astype(np.float32)
    x = np.concatenate([x, rng.standard_normal(n - x.size).astype(np.float32)])
    out = {k: poison(n, np.float16) for k in ("h", "hz")} | {k: poison(n, "bfloat16") for k in ("b", "bz")}
    return {"x": x, **out, "n": n}


def _toward_zero(x: np.ndarray, dtype) -> np.ndarray:
    """Round float64 `x` toward zero into `dtype`: nearest, then one ulp back where nearest went
    outward. IEEE round-toward-zero never overflows: past the largest finite value it gives that."""
    dt = LOW_PRECISION.get(dtype, dtype) if isinstance(dtype, str) else dtype
    with np.errstate(over="ignore"):
        near = x.astype(dt)
    too_far = np.abs(near.astype(np.float64)) > np.abs(x)  # includes overflow to inf
    return np.where(too_far, _step_toward_zero(near, dt).astype(np.float64), near.astype(np.float64))


def _step_toward_zero(v: np.ndarray, dt) -> np.ndarray:
    """The neighbour of each `dt` value one ulp closer to zero (via the bit pattern)."""
    bits = v.view(np.uint16).astype(np.int32)
    mag = bits & 0x7FFF
    sign = bits & 0x8000
    mag = np.where(mag > 0, mag - 1, 0)
    return (sign | mag).astype(np.uint16).view(dt)


def _downcast_reference(i):
    x = f64(i["x"])
    return {
        "h": rnd(x, np.float16),
        "b": rnd(x, "bfloat16"),
        "hz": _toward_zero(x, np.float16),
        "bz": _toward_zero(x, "bfloat16"),
    }


register(
    Case(
        name="cast_fp32_to_fp16_bf16",
        make_inputs=_downcast_inputs,
        launch=lambda wrap, t: wrap(downcast_kernel)[(triton.cdiv(t["n"], 256),)](
            t["x"], t["h"], t["b"], t["hz"], t["bz"], t["n"], BLOCK=256
        ),
        reference=_downcast_reference,
        outputs=("h", "b", "hz", "bz"),
        tolerance={k: (0.0, 0.0) for k in ("h", "b", "hz", "bz")},
        tags=frozenset({"exact", "fp16", "bf16"}),
    )
)


@triton.jit
def to_fp8_kernel(x_ptr, h_ptr, bf_ptr, e4_ptr, e5_ptr, h5_ptr, b4_ptr, n, BLOCK: tl.constexpr):
    """fp32/fp16/bf16 -> fp8 e4m3 / e5m2: nearest even, saturating to the largest finite value."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    h = tl.load(h_ptr + offs, mask=mask)
    bf = tl.load(bf_ptr + offs, mask=mask)
    tl.store(e4_ptr + offs, x.to(tl.float8e4nv), mask=mask)
    tl.store(e5_ptr + offs, x.to(tl.float8e5), mask=mask)
    tl.store(h5_ptr + offs, h.to(tl.float8e5), mask=mask)
    tl.store(b4_ptr + offs, bf.to(tl.float8e4nv), mask=mask)


def _to_fp8_inputs(rng):
    n = 512
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-4, 6, n)
    x[:8] = [448.0, 464.0, 500.0, -1e6, 57344.0, 61440.0, 1e9, -3e-4]
    x = x.astype(np.float32)
    h = np.clip(x, -6e4, 6e4).astype(np.float16)
    return {
        "x": x,
        "h": h,
        "bf": x.astype(LOW_PRECISION["bfloat16"]),
        "e4": poison(n, "float8_e4m3fn"),
        "e5": poison(n, "float8_e5m2"),
        "h5": poison(n, "float8_e5m2"),
        "b4": poison(n, "float8_e4m3fn"),
        "n": n,
    }


def _sat(x: np.ndarray, dtype: str) -> np.ndarray:
    """Nearest-even fp8 with satfinite: magnitudes past the largest finite value clamp to it."""
    big = 448.0 if dtype == "float8_e4m3fn" else 57344.0
    return rnd(np.clip(x, -big, big), dtype)


register(
    Case(
        name="cast_to_fp8_saturating",
        make_inputs=_to_fp8_inputs,
        launch=lambda wrap, t: wrap(to_fp8_kernel)[(2,)](
            t["x"], t["h"], t["bf"], t["e4"], t["e5"], t["h5"], t["b4"], t["n"], BLOCK=256
        ),
        reference=lambda i: {
            "e4": _sat(f64(i["x"]), "float8_e4m3fn"),
            "e5": _sat(f64(i["x"]), "float8_e5m2"),
            "h5": _sat(f64(i["h"]), "float8_e5m2"),
            "b4": _sat(f64(i["bf"]), "float8_e4m3fn"),
        },
        outputs=("e4", "e5", "h5", "b4"),
        tolerance={k: (0.0, 0.0) for k in ("e4", "e5", "h5", "b4")},
        tags=frozenset({"exact", "fp8"}),
    )
)


@triton.jit
def from_fp8_kernel(e4_ptr, e5_ptr, e4f_ptr, e5f_ptr, e4b_ptr, e5h_ptr, BLOCK: tl.constexpr):
    """fp8 -> fp32 / bf16 / fp16 upcasts (every value representable: exact)."""
    offs = tl.arange(0, BLOCK)
    e4 = tl.load(e4_ptr + offs)
    e5 = tl.load(e5_ptr + offs)
    tl.store(e4f_ptr + offs, e4.to(tl.float32))
    tl.store(e5f_ptr + offs, e5.to(tl.float32))
    tl.store(e4b_ptr + offs, e4.to(tl.bfloat16))
    tl.store(e5h_ptr + offs, e5.to(tl.float16))


def _from_fp8_inputs(rng):
    # Every finite bit pattern of each format, shuffled (NaN patterns left out: their payloads are
    # not specified across conversions).
    e4 = np.arange(256, dtype=np.uint8).view(LOW_PRECISION["float8_e4m3fn"])
    e5 = np.arange(256, dtype=np.uint8).view(LOW_PRECISION["float8_e5m2"])
    e4 = e4[np.isfinite(e4.astype(np.float64))]
    e5 = e5[np.isfinite(e5.astype(np.float64))]
    e4 = np.resize(rng.permutation(e4), 256)
    e5 = np.resize(rng.permutation(e5), 256)
    return {
        "e4": e4,
        "e5": e5,
        "e4f": poison(256, np.float32),
        "e5f": poison(256, np.float32),
        "e4b": poison(256, "bfloat16"),
        "e5h": poison(256, np.float16),
    }


register(
    Case(
        name="cast_fp8_upcast",
        make_inputs=_from_fp8_inputs,
        launch=lambda wrap, t: wrap(from_fp8_kernel)[(1,)](
            t["e4"], t["e5"], t["e4f"], t["e5f"], t["e4b"], t["e5h"], BLOCK=256
        ),
        reference=lambda i: {
            "e4f": f64(i["e4"]),
            "e5f": f64(i["e5"]),
            "e4b": f64(i["e4"]),
            "e5h": f64(i["e5"]),
        },
        outputs=("e4f", "e5f", "e4b", "e5h"),
        tolerance={k: (0.0, 0.0) for k in ("e4f", "e5f", "e4b", "e5h")},
        tags=frozenset({"exact", "fp8"}),
    )
)


@triton.jit
def float_int_kernel(
    x_ptr, x8_ptr, i_ptr, l_ptr, f2i_ptr, f2i8_ptr, i2f_ptr, l2f_ptr, u2f_ptr, i2h_ptr, n, BLOCK: tl.constexpr
):
    """float -> int truncates toward zero; int -> float rounds to nearest even (past 2^24)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    x8 = tl.load(x8_ptr + offs, mask=mask, other=0.0)
    i = tl.load(i_ptr + offs, mask=mask, other=0)
    big = tl.load(l_ptr + offs, mask=mask, other=0)
    tl.store(f2i_ptr + offs, x.to(tl.int32), mask=mask)
    tl.store(f2i8_ptr + offs, x8.to(tl.int8), mask=mask)
    tl.store(i2f_ptr + offs, i.to(tl.float32), mask=mask)
    tl.store(l2f_ptr + offs, big.to(tl.float32), mask=mask)
    tl.store(u2f_ptr + offs, i.to(tl.uint32, bitcast=True).to(tl.float32), mask=mask)
    tl.store(i2h_ptr + offs, (i >> 16).to(tl.float16), mask=mask)


_FI_OUT = ("f2i", "f2i8", "i2f", "l2f", "u2f", "i2h")


def _fi_inputs(rng):
    n = 700
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-1, 9, n)
    return {
        "x": np.clip(x, -2e9, 2e9).astype(np.float32),  # inside int32
        "x8": rng.uniform(-128.9, 127.9, n).astype(np.float32),  # inside int8 after truncation
        "i": rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32),
        "l": rng.integers(-(2**62), 2**62, n, dtype=np.int64),
        "f2i": poison(n, np.int32),
        "f2i8": poison(n, np.int8),
        "i2f": poison(n, np.float32),
        "l2f": poison(n, np.float32),
        "u2f": poison(n, np.float32),
        "i2h": poison(n, np.float16),
        "n": n,
    }


def _fi_reference(i):
    return {
        "f2i": np.trunc(f64(i["x"])).astype(np.int64),
        "f2i8": np.trunc(f64(i["x8"])).astype(np.int64),
        "i2f": rnd(i["i"].astype(np.float64), np.float32),
        # int64 -> float64 would round first; go through Python ints (exact) and round once.
        "l2f": np.array([np.float32(int(v)) for v in i["l"]], dtype=np.float64),
        "u2f": rnd((i["i"].astype(np.int64) % 2**32).astype(np.float64), np.float32),
        "i2h": rnd((i["i"].astype(np.int64) >> 16).astype(np.float64), np.float16),
    }


register(
    Case(
        name="cast_float_int",
        make_inputs=_fi_inputs,
        launch=lambda wrap, t: wrap(float_int_kernel)[(3,)](
            t["x"], t["x8"], t["i"], t["l"], *(t[k] for k in _FI_OUT), t["n"], BLOCK=256
        ),
        reference=_fi_reference,
        outputs=_FI_OUT,
        tolerance={k: (0.0, 0.0) for k in _FI_OUT},
        tags=frozenset({"exact"}),
    )
)


@triton.jit
def float_int_saturate_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """fp32 -> int32 outside the int32 range and for NaN: the GPU's cvt.rzi saturates (NaN -> 0)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x.to(tl.int32), mask=mask)


def _sat_inputs(rng):
    n = 256
    x = rng.standard_normal(n) * 10.0 ** rng.integers(8, 12, n)
    x[:6] = [np.inf, -np.inf, np.nan, 2.0**31, -(2.0**31), 2147483520.0]
    return {"x": x.astype(np.float32), "out": poison(n, np.int32), "n": n}


def _sat_reference(i):
    x = f64(i["x"])
    return {
        "out": np.where(np.isnan(x), 0, np.clip(np.trunc(np.nan_to_num(x)), -(2**31), 2**31 - 1)).astype(
            np.int64
        )
    }


register(
    Case(
        name="cast_float_int_saturate",
        make_inputs=_sat_inputs,
        launch=lambda wrap, t: wrap(float_int_saturate_kernel)[(1,)](t["x"], t["out"], t["n"], BLOCK=256),
        reference=_sat_reference,
        outputs=("out",),
        tolerance={"out": (0.0, 0.0)},
        tags=frozenset({"exact"}),
    )
)
