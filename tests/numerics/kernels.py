"""Kernels that stress the GPU's numerics, and the cases that launch them.

Each case is plain data: a kernel, how to draw its inputs, its launch (grid, constexprs, launch
options such as ``num_warps`` and ``enable_fp_fusion``), its outputs and what the numerics contract
promises for them (``bound``: 0 for bit-identical, else the measured ulp bound). This module needs
only NumPy, torch and Triton, so the same file runs on the H200 (``record_h200.py``) and in the CPU
test suite (``test_h200_goldens.py``).

Inputs are drawn in float32 with NumPy and rounded to the kernel's dtype by torch (nearest even);
exponents are spread over a few binades so that alignment and rounding decisions vary.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

DTYPES = {
    "fp32": torch.float32,
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
    "fp8e4m3": torch.float8_e4m3fn,
    "fp8e5m2": torch.float8_e5m2,
    "int8": torch.int8,
}


# ----------------------------------------------------------------------------- kernels


@triton.jit
def dot_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    PRECISION: tl.constexpr,
    ACC: tl.constexpr,
):
    """c = a @ b over K in BK steps, one BM x BN tile per program (row-major operands)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k + offs_k)[None, :])
        b = tl.load(b_ptr + (k + offs_k)[:, None] * N + offs_n[None, :])
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def dot_acc_kernel(
    a_ptr,
    b_ptr,
    acc_ptr,
    c_ptr,
    M,
    N,
    K,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    PRECISION: tl.constexpr,
    MAX_IMPRECISE: tl.constexpr,
):
    """c = acc + a @ b with an fp32 accumulator loaded from memory, over K in BK steps
    (``MAX_IMPRECISE``: the fp8 dots' ``max_num_imprecise_acc``, None for Triton's default)."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.load(acc_ptr + offs_m[:, None] * N + offs_n[None, :])
    for k in range(0, K, BK):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k + offs_k)[None, :])
        b = tl.load(b_ptr + (k + offs_k)[:, None] * N + offs_n[None, :])
        acc = tl.dot(a, b, acc, input_precision=PRECISION, max_num_imprecise_acc=MAX_IMPRECISE)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


@triton.jit
def fma_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    d_ptr,
    add_ptr,
    sub_ptr,
    rsub_ptr,
    two_ptr,
    horner_ptr,
    n,
    BLOCK: tl.constexpr,
    STEPS: tl.constexpr,
):
    """a*b + c, a*b - c, c - a*b, a*b + c*d and a Horner chain acc = acc*a + c, in the inputs' dtype."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    c = tl.load(c_ptr + offs, mask=mask)
    d = tl.load(d_ptr + offs, mask=mask)
    tl.store(add_ptr + offs, a * b + c, mask=mask)
    tl.store(sub_ptr + offs, a * b - c, mask=mask)
    tl.store(rsub_ptr + offs, c - a * b, mask=mask)
    tl.store(two_ptr + offs, a * b + c * d, mask=mask)
    acc = b
    for _ in tl.static_range(STEPS):
        acc = acc * a + c
    tl.store(horner_ptr + offs, acc, mask=mask)


@triton.jit
def sum_1d_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """One tl.sum over a contiguous block per program, in the block's dtype."""
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK))
    tl.store(out_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def sum_2d_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr):
    """tl.sum of an R x C row-major block along AXIS, one block per program."""
    pid = tl.program_id(0)
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    x = tl.load(x_ptr + pid * R * C + rows[:, None] * C + cols[None, :])
    s = tl.sum(x, axis=AXIS)
    if AXIS == 1:
        tl.store(out_ptr + pid * R + rows, s)
    else:
        tl.store(out_ptr + pid * C + cols, s)


@triton.jit
def sum_columns_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr):
    """tl.sum along AXIS of an R x C block read from a column-major tile (element (r, c) at
    ``c * R + r``): the compiler lays the block out along its columns, not its rows."""
    pid = tl.program_id(0)
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    x = tl.load(x_ptr + pid * R * C + rows[:, None] + cols[None, :] * R)
    s = tl.sum(x, axis=AXIS)
    if AXIS == 1:
        tl.store(out_ptr + pid * R + rows, s)
    else:
        tl.store(out_ptr + pid * C + cols, s)


@triton.jit
def dot_sum_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    """tl.sum(x * y): the products may fuse into the per-thread additions of the reduction."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + pid, tl.sum(tl.load(x_ptr + offs) * tl.load(y_ptr + offs), axis=0))


@triton.jit
def math_kernel(
    x_ptr,
    y_ptr,
    exp_ptr,
    exp2_ptr,
    log_ptr,
    log2_ptr,
    sin_ptr,
    cos_ptr,
    sqrt_ptr,
    rsqrt_ptr,
    sigmoid_ptr,
    div_ptr,
    fdiv_ptr,
    div_rn_ptr,
    n,
    BLOCK: tl.constexpr,
):
    """Functions that lower to approximate instructions, and the three divisions (in fp32; the stores
    round to the outputs' dtype)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    ax = tl.abs(x)
    tl.store(exp_ptr + offs, tl.exp(x), mask=mask)
    tl.store(exp2_ptr + offs, tl.exp2(x), mask=mask)
    tl.store(log_ptr + offs, tl.log(ax), mask=mask)
    tl.store(log2_ptr + offs, tl.log2(ax), mask=mask)
    tl.store(sin_ptr + offs, tl.sin(x), mask=mask)
    tl.store(cos_ptr + offs, tl.cos(x), mask=mask)
    tl.store(sqrt_ptr + offs, tl.sqrt(ax), mask=mask)
    tl.store(rsqrt_ptr + offs, tl.rsqrt(ax), mask=mask)
    tl.store(sigmoid_ptr + offs, tl.sigmoid(x), mask=mask)
    tl.store(div_ptr + offs, x / y, mask=mask)
    tl.store(fdiv_ptr + offs, tl.fdiv(x, y), mask=mask)
    tl.store(div_rn_ptr + offs, tl.div_rn(x, y), mask=mask)


@triton.jit
def libdevice_kernel(x_ptr, erf_ptr, tanh_ptr, expf_ptr, n, BLOCK: tl.constexpr):
    """libdevice functions that call the special function unit (``ex2.approx``, ``rcp.approx``) from
    their sequences: ``tl.math.erf`` (``__nv_erff``), libdevice's ``tanh`` and ``exp`` (``__nv_expf``,
    not ``tl.exp``'s lowering), in fp32."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(erf_ptr + offs, tl.math.erf(x), mask=mask)
    tl.store(tanh_ptr + offs, libdevice.tanh(x), mask=mask)
    tl.store(expf_ptr + offs, libdevice.exp(x), mask=mask)


# ----------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    """One kernel launch whose outputs the H200 recorded."""

    name: str
    kernel: Any
    make_inputs: Callable[[np.random.Generator], dict[str, torch.Tensor]]
    grid: tuple[int, ...]
    outputs: tuple[str, ...]
    constexprs: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # launch options: num_warps, enable_fp_fusion
    item: str = ""  # the contract item it stresses: tf32, fma, reduce, approx, mma
    scalars: dict[str, int] = field(default_factory=dict)

    def launch(self, wrap: Callable, tensors: dict[str, torch.Tensor]) -> Any:
        """Launch through ``wrap`` (identity: Triton itself; ``tilescope.trace``: the engine)."""
        return wrap(self.kernel)[self.grid](**tensors, **self.scalars, **self.constexprs, **self.options)


def spread(rng: np.random.Generator, shape: Any, binades: int = 4) -> np.ndarray:
    """Normal values scaled by 2**k, k uniform in [-binades, binades]: varied exponents, both signs."""
    return (rng.standard_normal(shape) * np.exp2(rng.integers(-binades, binades + 1, shape))).astype(
        np.float32
    )


def cast(x: np.ndarray, dtype: str) -> torch.Tensor:
    """float32 values rounded to ``dtype`` by torch (nearest even; saturating for fp8 via clamp)."""
    t = torch.from_numpy(np.ascontiguousarray(x))
    if dtype == "int8":
        return t.round().clamp(-128, 127).to(torch.int8)
    if dtype.startswith("fp8"):
        top = 448.0 if dtype == "fp8e4m3" else 57344.0
        t = t.clamp(-top, top)
    return t.to(DTYPES[dtype])


CASES: dict[str, Case] = {}


def _add(case: Case) -> None:
    assert case.name not in CASES, case.name
    CASES[case.name] = case


def _dot_case(
    dtype: str,
    precision: str,
    m: int,
    n: int,
    k: int,
    block: tuple[int, int, int],
    warps: int,
    acc: str = "fp32",
    item: str = "mma",
    binades: int | None = None,
) -> None:
    bm, bn, bk = block
    out_dtype = {"fp32": "fp32", "fp16": "fp16", "int32": "int32"}[acc]

    def make(rng):
        if dtype == "int8":
            a, b = rng.integers(-128, 128, (m, k)), rng.integers(-128, 128, (k, n))
            return {
                "a_ptr": cast(a.astype(np.float32), "int8"),
                "b_ptr": cast(b.astype(np.float32), "int8"),
                "c_ptr": torch.zeros((m, n), dtype=torch.int32),
            }
        spread_by = binades or (2 if dtype.startswith("fp8") else 4)
        out = torch.zeros((m, n), dtype=torch.float16 if out_dtype == "fp16" else torch.float32)
        return {
            "a_ptr": cast(spread(rng, (m, k), spread_by), dtype),
            "b_ptr": cast(spread(rng, (k, n), spread_by), dtype),
            "c_ptr": out,
        }

    acc_ty = {"fp32": tl.float32, "fp16": tl.float16, "int32": tl.int32}[acc]
    tag = f"_s{binades}" if binades else ""
    _add(
        Case(
            f"dot_{dtype}_{precision}_{acc}_k{k}_b{bm}x{bn}x{bk}_w{warps}{tag}",
            dot_kernel,
            make,
            (m // bm, n // bn),
            ("c_ptr",),
            {"BM": bm, "BN": bn, "BK": bk, "PRECISION": precision, "ACC": acc_ty},
            {"num_warps": warps},
            item,
            {"M": m, "N": n, "K": k},
        )
    )


def _dot_acc_case(
    dtype: str,
    precision: str,
    m: int,
    n: int,
    k: int,
    block: tuple[int, int, int],
    warps: int,
    max_imprecise: int | None = None,
) -> None:
    """A chained dot onto an accumulator of full fp32 values loaded from memory."""
    bm, bn, bk = block
    binades = 2 if dtype.startswith("fp8") else 4

    def make(rng):
        return {
            "a_ptr": cast(spread(rng, (m, k), binades), dtype),
            "b_ptr": cast(spread(rng, (k, n), binades), dtype),
            "acc_ptr": torch.from_numpy(spread(rng, (m, n), 2) * np.float32(k**0.5)),
            "c_ptr": torch.zeros((m, n), dtype=torch.float32),
        }

    tag = "" if max_imprecise is None else f"_imprecise{max_imprecise}"
    _add(
        Case(
            f"dotacc_{dtype}_{precision}_k{k}_b{bm}x{bn}x{bk}_w{warps}{tag}",
            dot_acc_kernel,
            make,
            (m // bm, n // bn),
            ("c_ptr",),
            {"BM": bm, "BN": bn, "BK": bk, "PRECISION": precision, "MAX_IMPRECISE": max_imprecise},
            {"num_warps": warps},
            "mma",
            {"M": m, "N": n, "K": k},
        )
    )


def _fma_case(dtype: str, fusion: bool | None, n: int = 2048) -> None:
    def make(rng):
        t = {k: cast(spread(rng, n, 2), dtype) for k in ("a_ptr", "b_ptr", "c_ptr", "d_ptr")}
        # a Horner chain stays bounded when |a| < 1
        t["a_ptr"] = cast(rng.uniform(-0.99, 0.99, n).astype(np.float32), dtype)
        for out in ("add_ptr", "sub_ptr", "rsub_ptr", "two_ptr", "horner_ptr"):
            t[out] = torch.zeros(n, dtype=DTYPES[dtype])
        return t

    options = {} if fusion is None else {"enable_fp_fusion": fusion}
    tag = {None: "default", True: "fused", False: "unfused"}[fusion]
    _add(
        Case(
            f"fma_{dtype}_{tag}",
            fma_kernel,
            make,
            (n // 512,),
            ("add_ptr", "sub_ptr", "rsub_ptr", "two_ptr", "horner_ptr"),
            {"BLOCK": 512, "STEPS": 8},
            options,
            "fma",
            {"n": n},
        )
    )


def _sum_1d_case(dtype: str, block: int, warps: int, programs: int = 16) -> None:
    def make(rng):
        return {
            "x_ptr": cast(spread(rng, programs * block), dtype),
            "out_ptr": torch.zeros(programs, dtype=DTYPES[dtype]),
        }

    _add(
        Case(
            f"sum1d_{dtype}_b{block}_w{warps}",
            sum_1d_kernel,
            make,
            (programs,),
            ("out_ptr",),
            {"BLOCK": block},
            {"num_warps": warps},
            "reduce",
        )
    )


def _sum_2d_case(
    dtype: str, r: int, c: int, axis: int, warps: int, programs: int = 4, columns: bool = False
) -> None:
    def make(rng):
        out = torch.zeros(programs * (r if axis == 1 else c), dtype=DTYPES[dtype])
        return {"x_ptr": cast(spread(rng, programs * r * c), dtype), "out_ptr": out}

    _add(
        Case(
            f"sum2d{'cols' if columns else ''}_{dtype}_{r}x{c}_axis{axis}_w{warps}",
            sum_columns_kernel if columns else sum_2d_kernel,
            make,
            (programs,),
            ("out_ptr",),
            {"R": r, "C": c, "AXIS": axis},
            {"num_warps": warps},
            "reduce",
        )
    )


def _dot_sum_case(dtype: str, block: int, warps: int, fusion: bool = True, programs: int = 16) -> None:
    def make(rng):
        return {
            "x_ptr": cast(spread(rng, programs * block), dtype),
            "y_ptr": cast(spread(rng, programs * block), dtype),
            "out_ptr": torch.zeros(programs, dtype=DTYPES[dtype]),
        }

    _add(
        Case(
            f"dotsum_{dtype}_b{block}_w{warps}_{'fused' if fusion else 'unfused'}",
            dot_sum_kernel,
            make,
            (programs,),
            ("out_ptr",),
            {"BLOCK": block},
            {"num_warps": warps, "enable_fp_fusion": fusion},
            "fma",
        )
    )


MATH_OUTPUTS = (
    "exp_ptr",
    "exp2_ptr",
    "log_ptr",
    "log2_ptr",
    "sin_ptr",
    "cos_ptr",
    "sqrt_ptr",
    "rsqrt_ptr",
    "sigmoid_ptr",
    "div_ptr",
    "fdiv_ptr",
    "div_rn_ptr",
)


def edge_values(rng: np.random.Generator, n: int) -> np.ndarray:
    """float32 inputs where math functions take their other paths: the special values, subnormals,
    every exponent (random bit patterns), large arguments (sine and cosine reduce them by
    Payne-Hanek above 105615), near multiples of pi/2, and near 1 (logarithms cancel there)."""
    specials = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 2.0**-126, -(2.0**-126), 2.0**-149,
                           1e-45, 3.4028235e38, -3.4028235e38, 105615.0, 105614.99, -105615.0, 1.0,
                           -1.0])  # fmt: skip
    parts = [
        rng.integers(0, 0x7F800000, n // 4, dtype=np.int64).astype(np.uint32).view(np.float32),
        np.exp(rng.uniform(np.log(1e5), np.log(3e38), n // 4)).astype(np.float32),
        (rng.integers(1, 2**20, n // 8) * (np.pi / 2) * (1 + rng.uniform(-1e-6, 1e-6, n // 8))).astype(
            np.float32
        ),
        (1 + rng.uniform(-1e-3, 1e-3, n // 8)).astype(np.float32),
        rng.uniform(0, 2.0**-126, n // 8).astype(np.float32),
    ]
    x = np.concatenate([specials, *parts])
    x[len(specials):] *= rng.choice(np.float32([-1, 1]), x.size - len(specials))
    return np.resize(x, n)


def _math_case(dtype: str, draw: Callable, tag: str, n: int = 8192) -> None:
    def make(rng):
        x = draw(rng, n)
        y = spread(rng, n, 6)
        t = {"x_ptr": cast(x, dtype), "y_ptr": cast(y, dtype)}
        for out in MATH_OUTPUTS:
            t[out] = torch.zeros(n, dtype=DTYPES[dtype])
        return t

    _add(
        Case(
            f"math_{dtype}_{tag}",
            math_kernel,
            make,
            (n // 1024,),
            MATH_OUTPUTS,
            {"BLOCK": 1024},
            {},
            "approx",
            {"n": n},
        )
    )


# tf32: one K step isolates operand truncation; K=256 adds the tensor core's accumulation
_dot_case("fp32", "tf32", 64, 64, 32, (64, 64, 32), 4, item="tf32")
_dot_case("fp32", "tf32", 128, 128, 256, (64, 64, 32), 4, item="tf32")
_dot_case("fp32", "tf32", 64, 64, 256, (32, 32, 64), 2, item="tf32")
_dot_case("fp32", "ieee", 64, 64, 64, (32, 32, 32), 4, item="tf32")
for _dt in ("fp16", "bf16"):
    _dot_case(_dt, "tf32", 64, 64, 16, (64, 64, 16), 4)
    _dot_case(_dt, "tf32", 128, 128, 256, (64, 64, 64), 4)
    _dot_case(_dt, "tf32", 64, 64, 256, (32, 32, 32), 2)
_dot_case("fp16", "tf32", 64, 64, 256, (64, 64, 64), 4, acc="fp16")
for _dt in ("fp8e4m3", "fp8e5m2"):
    _dot_case(_dt, "tf32", 64, 64, 32, (64, 64, 32), 4)
    _dot_case(_dt, "tf32", 128, 128, 256, (64, 64, 64), 4)
_dot_case("int8", "tf32", 64, 64, 256, (64, 64, 64), 4, acc="int32")
# fp8 across block shapes and num_warps, wide exponents, a loaded accumulator, max_num_imprecise_acc
_dot_case("fp8e4m3", "tf32", 128, 128, 512, (128, 128, 128), 8)
_dot_case("fp8e5m2", "tf32", 64, 128, 256, (64, 128, 64), 4)
_dot_case("fp8e4m3", "tf32", 64, 64, 256, (64, 64, 64), 4, binades=6)
_dot_acc_case("fp8e4m3", "tf32", 64, 64, 128, (64, 64, 64), 4)
_dot_acc_case("fp8e4m3", "tf32", 64, 64, 256, (64, 64, 128), 4, max_imprecise=32)
_dot_acc_case("fp8e5m2", "tf32", 64, 64, 256, (64, 64, 64), 4, max_imprecise=64)
_dot_acc_case("bf16", "tf32", 64, 64, 64, (64, 64, 32), 4)
_dot_case("fp16", "tf32", 64, 64, 32, (64, 64, 32), 4, acc="fp16")
# ieee fp32: each thread's FMA chain over k, across block shapes and num_warps
_dot_case("fp32", "ieee", 128, 128, 256, (64, 64, 32), 4, item="ieee")
_dot_case("fp32", "ieee", 64, 64, 128, (32, 32, 64), 2, item="ieee")
_dot_case("fp32", "ieee", 128, 64, 64, (128, 64, 16), 8, item="ieee")
_dot_case("fp32", "ieee", 32, 32, 96, (16, 16, 16), 1, item="ieee")
_dot_acc_case("fp32", "ieee", 64, 64, 64, (32, 32, 32), 4)

for _dt in ("fp32", "bf16", "fp16"):
    for _fusion in (None, False):
        _fma_case(_dt, _fusion)
_fma_case("fp32", True)

for _dt in ("bf16", "fp16", "fp32"):
    for _block, _warps in ((256, 4), (1024, 4), (1024, 1), (4096, 8), (128, 8), (32, 1)):
        _sum_1d_case(_dt, _block, _warps)
for _dt in ("bf16", "fp16"):
    _sum_2d_case(_dt, 32, 256, 1, 4)
    _sum_2d_case(_dt, 32, 256, 0, 4)
    _sum_2d_case(_dt, 16, 64, 1, 8)
    _sum_2d_case(_dt, 64, 16, 0, 2)
_sum_2d_case("fp32", 32, 256, 1, 4)
_sum_2d_case("fp32", 32, 256, 0, 4)
# blocks read down their columns: the layout (so the order) the compiler picks is not the row-major rule's
_sum_2d_case("bf16", 256, 32, 0, 4, columns=True)
_sum_2d_case("bf16", 64, 64, 1, 4, columns=True)
_sum_2d_case("fp16", 128, 32, 0, 8, columns=True)
_sum_2d_case("fp32", 256, 32, 0, 4, columns=True)
for _dt in ("fp32", "bf16"):
    _dot_sum_case(_dt, 1024, 4)
    _dot_sum_case(_dt, 1024, 4, fusion=False)
_dot_sum_case("fp32", 256, 8)

def _uniform(lo: float, hi: float) -> Callable:
    return lambda rng, n: rng.uniform(lo, hi, n).astype(np.float32)


_math_case("fp32", _uniform(-20.0, 20.0), "wide")
_math_case("fp32", _uniform(-3.14159, 3.14159), "pi")
_math_case("bf16", _uniform(-20.0, 20.0), "wide")
_math_case("fp16", _uniform(-8.0, 8.0), "wide")
_math_case("fp32", edge_values, "edge")

LIBDEVICE_OUTPUTS = ("erf_ptr", "tanh_ptr", "expf_ptr")


def _libdevice_case(draw: Callable, tag: str, n: int = 8192) -> None:
    def make(rng):
        return {"x_ptr": torch.from_numpy(draw(rng, n)), **{o: torch.zeros(n) for o in LIBDEVICE_OUTPUTS}}

    _add(Case(f"libdevice_fp32_{tag}", libdevice_kernel, make, (n // 1024,), LIBDEVICE_OUTPUTS,
              {"BLOCK": 1024}, {}, "approx", {"n": n}))  # fmt: skip


_libdevice_case(_uniform(-12.0, 12.0), "wide")
_libdevice_case(edge_values, "edge")
