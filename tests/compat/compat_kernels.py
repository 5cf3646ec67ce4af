"""Kernels written directly against tilescope.compat, in the launch protocol, for both lowerings.

Every case names its lowering (``desc``); the tests check both against float64 references.
"""

import numpy as np
import triton
import triton.language as tl

import tilescope.compat as tlc


@triton.jit
def copy2d_kernel(
    x_ptr,
    y_ptr,
    M,
    N,
    stride_x,
    stride_y,
    CHECK: tl.constexpr,
    PAD: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    DESC: tl.constexpr,
):
    """y tile = x tile loaded with boundary_check=CHECK and padding PAD; y stored fully checked."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x = tlc.make_block_ptr(x_ptr, (M, N), (stride_x, 1), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0), DESC)
    y = tlc.make_block_ptr(
        y_ptr, (M + BM, N + BN), (stride_y, 1), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0), DESC
    )
    tlc.store(y, tlc.load(x, boundary_check=CHECK, padding_option=PAD), boundary_check=(0, 1))


@triton.jit
def reverse_rows_kernel(x_ptr, y_ptr, N, BN: tl.constexpr, DESC: tl.constexpr):
    """y = x walked from the end with negative advances, 1-D blocks, ragged N."""
    row = tl.program_id(0)
    nblocks = tl.cdiv(N, BN)
    x = tlc.make_block_ptr(x_ptr + row * N, (N,), (1,), ((nblocks - 1) * BN,), (BN,), (0,), DESC)
    y = tlc.make_block_ptr(y_ptr + row * N, (N,), (1,), ((nblocks - 1) * BN,), (BN,), (0,), DESC)
    for _ in range(nblocks):
        tlc.store(y, tlc.load(x, boundary_check=(0,)) * 2, boundary_check=(0,))
        x = tlc.advance(x, (-BN,))
        y = tlc.advance(y, (-BN,))


@triton.jit
def sum3d_kernel(x_ptr, out_ptr, B, M, N, sb, sm, BM: tl.constexpr, BN: tl.constexpr, DESC: tl.constexpr):
    """out[b] = sum of x[b] over a rank-3 block pointer walking N, transposed order."""
    b = tl.program_id(0)
    x = tlc.make_block_ptr(x_ptr, (B, M, N), (sb, sm, 1), (b, 0, 0), (1, BM, BN), (0, 1, 2), DESC)
    acc = tl.zeros((1, BM, BN), tl.float32)
    for _ in range(0, N, BN):
        acc += tlc.load(x, boundary_check=(1, 2))
        x = tlc.advance(x, (0, 0, BN))
    tl.store(out_ptr + b, tl.sum(acc))


def cases():
    out = []
    for desc in (False, True):
        out += [
            dict(kernel="copy2d", M=37, N=52, check=(0, 1), pad="zero", desc=desc),
            dict(kernel="copy2d", M=37, N=52, check=(0, 1), pad="nan", desc=desc),
            dict(kernel="copy2d", M=40, N=52, check=(1,), pad="zero", desc=desc),
            dict(kernel="reverse", M=3, N=44 if desc else 45, desc=desc),  # rows 16-byte aligned for desc
            dict(kernel="sum3d", B=3, M=16, N=44, desc=desc),
        ]
    return out


def make_inputs(rng, kernel, M=0, N=0, B=0, **_):
    if kernel == "copy2d":
        return {
            "x": rng.standard_normal((M, N)).astype(np.float32),
            "y": rng.standard_normal((M + 16, N + 16)).astype(np.float32),
        }
    if kernel == "reverse":
        return {
            "x": rng.standard_normal((M, N)).astype(np.float32),
            "y": rng.standard_normal((M, N)).astype(np.float32),
        }
    return {
        "x": rng.standard_normal((B, M, N)).astype(np.float32),
        "out": rng.standard_normal(B).astype(np.float32),
    }


def launch(kernels, t, kernel, desc, M=0, N=0, B=0, check=(), pad=""):
    if kernel == "copy2d":
        grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
        kernels.copy2d_kernel[grid](
            t["x"],
            t["y"],
            M,
            N,
            t["x"].stride(0),
            t["y"].stride(0),
            CHECK=tuple(check),
            PAD=pad,
            BM=16,
            BN=16,
            DESC=desc,
        )
    elif kernel == "reverse":
        kernels.reverse_rows_kernel[(M,)](t["x"], t["y"], N, BN=16, DESC=desc)
    else:
        kernels.sum3d_kernel[(B,)](
            t["x"], t["out"], B, M, N, t["x"].stride(0), t["x"].stride(1), BM=16, BN=16, DESC=desc
        )


def reference(x, kernel, desc, M=0, N=0, B=0, check=(), pad=""):
    if kernel == "copy2d":
        y = x["y"].copy()
        gm, gn = -(-M // 16) * 16, -(-N // 16) * 16
        padded = np.full((gm, gn), np.nan if pad == "nan" else 0.0)
        padded[:M, :N] = x["x"]
        y[:gm, :gn] = padded
        return {"y": y}
    if kernel == "reverse":
        return {"y": x["x"] * 2}
    return {"out": x["x"].sum(axis=(1, 2))}
