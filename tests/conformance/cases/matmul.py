"""Matrix multiplication in the forms real kernels take: grouped program order with masks over
ragged shapes in every dtype, input_precision and out_dtype, persistent tiles over device-side
tensor descriptors, host TensorDescriptor arguments, split-K with atomics, and grouped GEMM over a
table of int64 pointers."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ..case import Case, poison, register
from ._common import f64, normal


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    ACC_DTYPE: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
):
    """The tutorial matmul: GROUP_SIZE_M swizzled program order for L2 reuse, masked edges."""
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=ACC_DTYPE)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator, input_precision=INPUT_PRECISION, out_dtype=ACC_DTYPE)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(c_ptr.dtype.element_ty)

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def _matmul_launch(block_m, block_n, block_k, acc=tl.float32, precision="ieee"):
    def launch(wrap, t):
        a, b, c = t["a"], t["b"], t["c"]
        (m, k), n = a.shape, b.shape[1]
        grid = lambda meta: (triton.cdiv(m, meta["BLOCK_SIZE_M"]) * triton.cdiv(n, meta["BLOCK_SIZE_N"]),)  # noqa: E731
        wrap(matmul_kernel)[grid](
            a,
            b,
            c,
            m,
            n,
            k,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            c.stride(0),
            c.stride(1),
            BLOCK_SIZE_M=block_m,
            BLOCK_SIZE_N=block_n,
            BLOCK_SIZE_K=block_k,
            GROUP_SIZE_M=4,
            ACC_DTYPE=acc,
            INPUT_PRECISION=precision,
        )

    return launch


def _mm_reference(i):
    return {"c": f64(i["a"]) @ f64(i["b"])}


def _mm_inputs(m, n, k, in_dtype, out_dtype, scale=1.0):
    def make(rng):
        return {
            "a": normal(rng, (m, k), in_dtype, scale),
            "b": normal(rng, (k, n), in_dtype, scale),
            "c": poison((m, n), out_dtype if isinstance(out_dtype, str) else np.dtype(out_dtype)),
        }

    return make


register(
    Case(
        name="matmul_fp32_ieee",
        make_inputs=_mm_inputs(150, 130, 70, np.float32, np.float32),
        launch=_matmul_launch(32, 32, 32),
        reference=_mm_reference,
        outputs=("c",),
        # fp32 fma accumulation of 70 terms of N(0,1) products: a few ulp of sum|ab| (~56).
        tolerance={"c": (1e-5, 5e-5)},
    )
)


def _tf32_inputs(rng):
    m, n, k = 64, 48, 64
    # a: tf32-exact values times (1 + 2^-13). The tail is below half a tf32 ulp, so tf32 drops it
    # (rounding or truncation alike) while ieee keeps it: the two differ by ~1.2e-4 relative.
    a_tf32 = _round_tf32(rng.uniform(0.5, 2.0, (m, k)))
    a = (a_tf32 * (1 + 2.0**-13)).astype(np.float32)
    b = _round_tf32(rng.uniform(0.5, 2.0, (k, n))).astype(np.float32)
    return {"a": a, "b": b, "c": poison((m, n), np.float32)}


def _round_tf32(x: np.ndarray) -> np.ndarray:
    """Round float64 values to the 10-bit significand of tf32 (nearest even), returned as float64."""
    m, e = np.frexp(x)
    return np.ldexp(np.round(m * 2.0**11) / 2.0**11, e)


register(
    Case(
        name="matmul_tf32",
        make_inputs=_tf32_inputs,
        launch=_matmul_launch(32, 16, 16, precision="tf32"),
        reference=lambda i: {"c": _round_tf32(f64(i["a"])) @ f64(i["b"])},
        outputs=("c",),
        # Positive terms only: fp32 accumulation of 64 products is within 64 * 2^-24 relative; 2e-5
        # separates tf32 (reference) from ieee (1.2e-4 away).
        tolerance={"c": (2e-5, 0.0)},
        tags=frozenset({"tf32"}),
    )
)

register(
    Case(
        name="matmul_fp16",
        make_inputs=_mm_inputs(150, 130, 70, np.float16, np.float16),
        launch=_matmul_launch(32, 32, 32),
        reference=_mm_reference,
        outputs=("c",),
        # fp16 products are exact in fp32; the fp16 store rounds once (2^-11 relative).
        tolerance={"c": (2.0**-10, 1e-4)},
        tags=frozenset({"fp16"}),
    )
)

register(
    Case(
        name="matmul_bf16",
        make_inputs=_mm_inputs(96, 80, 72, "bfloat16", np.float32),
        launch=_matmul_launch(32, 32, 32),
        reference=_mm_reference,
        outputs=("c",),
        # bf16 products are exact in fp32; fp32 accumulation of 72 terms (~1e-6 relative to sum|ab|).
        tolerance={"c": (1e-5, 5e-5)},
        tags=frozenset({"bf16"}),
    )
)


def _fp8_case(name, dtype):
    return Case(
        name=name,
        make_inputs=_mm_inputs(100, 72, 96, dtype, np.float32),
        launch=_matmul_launch(64, 64, 32),
        reference=_mm_reference,
        outputs=("c",),
        # fp8 products are exact, but Hopper's fp8 tensor-core accumulator keeps ~14 significand
        # bits between promotions: allow ~1e-3 of sum|ab| (~75).
        tolerance={"c": (1e-3, 2e-2)},
        tags=frozenset({"fp8"}),
    )


register(_fp8_case("matmul_fp8_e4m3", "float8_e4m3fn"))
register(_fp8_case("matmul_fp8_e5m2", "float8_e5m2"))


def _int8_inputs(rng):
    m, n, k = 70, 80, 96
    return {
        "a": rng.integers(-128, 128, (m, k)).astype(np.int8),
        "b": rng.integers(-128, 128, (k, n)).astype(np.int8),
        "c": poison((m, n), np.int32),
    }


register(
    Case(
        name="matmul_int8",
        make_inputs=_int8_inputs,
        # Integer dots take the default input_precision; out_dtype=int32 matches the accumulator.
        launch=_matmul_launch(32, 32, 32, acc=tl.int32, precision=None),
        reference=lambda i: {"c": i["a"].astype(np.int64) @ i["b"].astype(np.int64)},
        outputs=("c",),
        tolerance={"c": (0.0, 0.0)},  # integer dot with an int32 accumulator: exact
        tags=frozenset({"exact"}),
    )
)


@triton.jit
def matmul_fp16_acc_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr
):
    """Dot with out_dtype=float16: the accumulator itself is fp16 (cheaper, less exact)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)
    for k in range(0, K, BLOCK_K):
        a = tl.load(
            a_ptr + rm[:, None] * K + (k + rk)[None, :],
            mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            b_ptr + (k + rk)[:, None] * N + rn[None, :],
            mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(a, b, acc, out_dtype=tl.float16)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


register(
    Case(
        name="matmul_out_dtype_fp16",
        make_inputs=_mm_inputs(64, 48, 64, np.float16, np.float16, scale=0.5),
        launch=lambda wrap, t: wrap(matmul_fp16_acc_kernel)[(2, 3)](
            t["a"], t["b"], t["c"], 64, 48, 64, BLOCK_M=32, BLOCK_N=16, BLOCK_K=16
        ),
        reference=_mm_reference,
        outputs=("c",),
        # fp16 accumulation: partial sums up to ~8 carry 2^-8 ulps, rounded at least 4 times per output.
        tolerance={"c": (1e-2, 3e-2)},
        tags=frozenset({"fp16"}),
    )
)


@triton.jit
def _compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M: tl.constexpr):
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (tile_id % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def matmul_descriptor_persistent(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    NUM_SMS: tl.constexpr,
):
    """Persistent matmul (tutorial 09): NUM_SMS programs walk the tiles; device-side descriptors
    pad out-of-range loads with zeros and clip stores; B is given as (N, K)."""
    dtype = c_ptr.dtype.element_ty
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_SIZE_M * num_pid_n

    a_desc = tl.make_tensor_descriptor(
        a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_K]
    )
    b_desc = tl.make_tensor_descriptor(
        b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_SIZE_N, BLOCK_SIZE_K]
    )
    c_desc = tl.make_tensor_descriptor(
        c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_N]
    )
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS):
        pid_m, pid_n = _compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        offs_am = pid_m * BLOCK_SIZE_M
        offs_bn = pid_n * BLOCK_SIZE_N
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_SIZE_K
            a = a_desc.load([offs_am, offs_k])
            b = b_desc.load([offs_bn, offs_k])
            accumulator = tl.dot(a, b.T, accumulator)
        c_desc.store([offs_am, offs_bn], accumulator.to(dtype))


def _set_allocator(device_tensor) -> None:
    """Device-side descriptors need global scratch on the GPU; harmless elsewhere."""
    import torch

    def alloc(size: int, alignment: int, stream):
        return torch.empty(size, device=device_tensor.device, dtype=torch.int8)

    triton.set_allocator(alloc)


def _persistent_launch(wrap, t):
    _set_allocator(t["a"])
    (m, k), n = t["a"].shape, t["b"].shape[0]
    wrap(matmul_descriptor_persistent)[(4,)](
        t["a"],
        t["b"],
        t["c"],
        m,
        n,
        k,
        BLOCK_SIZE_M=32,
        BLOCK_SIZE_N=32,
        BLOCK_SIZE_K=32,
        GROUP_SIZE_M=2,
        NUM_SMS=4,
    )


def _nt_inputs(rng):
    m, n, k = 100, 72, 88  # 16-byte aligned strides, ragged against the 32-blocks
    return {
        "a": normal(rng, (m, k), np.float16),
        "b": normal(rng, (n, k), np.float16),
        "c": poison((m, n), np.float16),
    }


register(
    Case(
        name="matmul_persistent_device_descriptor",
        make_inputs=_nt_inputs,
        launch=_persistent_launch,
        reference=lambda i: {"c": f64(i["a"]) @ f64(i["b"]).T},
        outputs=("c",),
        tolerance={"c": (2.0**-10, 1e-4)},  # fp16 store rounds once; fp16 products exact in fp32
        tags=frozenset({"descriptor", "fp16"}),
    )
)


@triton.jit
def matmul_host_descriptor_kernel(
    a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr
):
    """Matmul whose operands arrive as host-built TensorDescriptor arguments."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k])
        b = b_desc.load([k, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc)


def _host_desc_launch(wrap, t):
    from triton.tools.tensor_descriptor import TensorDescriptor

    a, b, c = t["a"], t["b"], t["c"]
    (m, k), n = a.shape, b.shape[1]
    bm, bn, bk = 32, 32, 32
    a_desc = TensorDescriptor.from_tensor(a, [bm, bk])
    b_desc = TensorDescriptor.from_tensor(b, [bk, bn])
    c_desc = TensorDescriptor.from_tensor(c, [bm, bn])
    wrap(matmul_host_descriptor_kernel)[(triton.cdiv(m, bm), triton.cdiv(n, bn))](
        a_desc, b_desc, c_desc, m, n, k, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk
    )


register(
    Case(
        name="matmul_host_descriptor",
        make_inputs=_mm_inputs(72, 56, 80, np.float16, np.float32),  # 16-byte strides
        launch=_host_desc_launch,
        reference=_mm_reference,
        outputs=("c",),
        tolerance={"c": (1e-5, 5e-5)},  # fp16 products exact in fp32; 80-term fp32 accumulation
        tags=frozenset({"descriptor", "fp16"}),
    )
)


@triton.jit
def matmul_splitk_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SPLIT_K: tl.constexpr,
):
    """Split-K: program (tile, s) reduces every SPLIT_K-th K block and atomically adds into C."""
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        k_remaining = K - k * (BLOCK_K * SPLIT_K)
        a = tl.load(a_ptrs, mask=(rk[None, :] < k_remaining) & (rm[:, None] < M), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_remaining) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * SPLIT_K
        b_ptrs += BLOCK_K * SPLIT_K * N
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=mask)


def _splitk_inputs(rng):
    m, n, k = 48, 40, 300
    # C starts from a bias the atomics add onto (the output is read-modify-write).
    return {
        "a": normal(rng, (m, k), np.float16),
        "b": normal(rng, (k, n), np.float16),
        "c": normal(rng, (m, n)),
    }


def _splitk_launch(wrap, t):
    (m, k), n = t["a"].shape, t["b"].shape[1]
    wrap(matmul_splitk_kernel)[(triton.cdiv(m, 32) * triton.cdiv(n, 32), 4)](
        t["a"], t["b"], t["c"], m, n, k, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, SPLIT_K=4
    )


register(
    Case(
        name="matmul_splitk_atomic",
        make_inputs=_splitk_inputs,
        launch=_splitk_launch,
        reference=lambda i: {"c": f64(i["c"]) + f64(i["a"]) @ f64(i["b"])},
        outputs=("c",),
        # 300-term fp32 accumulation plus 4 atomic fp32 adds in any order: ~1e-5 of sum|ab| (~240).
        tolerance={"c": (1e-5, 2e-4)},
        tags=frozenset({"atomics", "fp16"}),
    )
)


@triton.jit
def grouped_matmul_kernel(
    group_a_ptrs,
    group_b_ptrs,
    group_c_ptrs,
    group_gemm_sizes,
    g_lds,
    group_size,
    NUM_SM: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
):
    """Grouped GEMM (tutorial 08): per-group matrices reached through int64 pointer tables."""
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        gm = tl.load(group_gemm_sizes + g * 3)
        gn = tl.load(group_gemm_sizes + g * 3 + 1)
        gk = tl.load(group_gemm_sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_SIZE_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_SIZE_N)
        num_tiles = num_m_tiles * num_n_tiles
        while tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles:
            k = gk
            lda = tl.load(g_lds + g * 3)
            ldb = tl.load(g_lds + g * 3 + 1)
            ldc = tl.load(g_lds + g * 3 + 2)
            a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float32))
            b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float32))
            c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float32))
            tile_idx_in_gemm = tile_idx - last_problem_end
            tile_m_idx = tile_idx_in_gemm // num_n_tiles
            tile_n_idx = tile_idx_in_gemm % num_n_tiles
            offs_am = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_bn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            offs_k = tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_bn[None, :]
            accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(k, BLOCK_SIZE_K)):
                a = tl.load(
                    a_ptrs,
                    mask=(offs_am[:, None] < gm) & (offs_k[None, :] < k - kk * BLOCK_SIZE_K),
                    other=0.0,
                )
                b = tl.load(
                    b_ptrs,
                    mask=(offs_k[:, None] < k - kk * BLOCK_SIZE_K) & (offs_bn[None, :] < gn),
                    other=0.0,
                )
                accumulator = tl.dot(a, b, accumulator, input_precision="ieee")
                a_ptrs += BLOCK_SIZE_K
                b_ptrs += BLOCK_SIZE_K * ldb
            c_ptrs = c_ptr + ldc * offs_am[:, None] + offs_bn[None, :]
            tl.store(c_ptrs, accumulator, mask=(offs_am[:, None] < gm) & (offs_bn[None, :] < gn))
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


_GROUPS = ((40, 24, 36), (16, 48, 20), (33, 17, 50))  # (m, n, k) per group


def _grouped_inputs(rng):
    a_size = sum(m * k for m, _, k in _GROUPS)
    b_size = sum(k * n for _, n, k in _GROUPS)
    c_size = sum(m * n for m, n, _ in _GROUPS)
    return {
        "a_all": normal(rng, a_size),
        "b_all": normal(rng, b_size),
        "c_all": poison(c_size, np.float32),
        "sizes": np.array(_GROUPS, np.int32).reshape(-1),
        "lds": np.array([(k, n, n) for _, n, k in _GROUPS], np.int32).reshape(-1),
    }


def _grouped_launch(wrap, t):
    import torch

    # Each group lives inside one flat buffer per operand; the kernel sees only the pointer tables.
    ptrs = {"a": [], "b": [], "c": []}
    offs = {"a": 0, "b": 0, "c": 0}
    for m, n, k in _GROUPS:
        for name, size in (("a", m * k), ("b", k * n), ("c", m * n)):
            buf = t[f"{name}_all"]
            ptrs[name].append(buf.data_ptr() + offs[name] * buf.element_size())
            offs[name] += size
    dev = t["a_all"].device
    tables = [torch.tensor(ptrs[x], dtype=torch.int64, device=dev) for x in ("a", "b", "c")]
    num_sm = 4
    wrap(grouped_matmul_kernel)[(num_sm,)](
        *tables,
        t["sizes"],
        t["lds"],
        len(_GROUPS),
        NUM_SM=num_sm,
        BLOCK_SIZE_M=16,
        BLOCK_SIZE_N=16,
        BLOCK_SIZE_K=16,
    )


def _grouped_reference(i):
    out, ao, bo = [], 0, 0
    for m, n, k in _GROUPS:
        a = f64(i["a_all"][ao : ao + m * k]).reshape(m, k)
        b = f64(i["b_all"][bo : bo + k * n]).reshape(k, n)
        out.append((a @ b).reshape(-1))
        ao, bo = ao + m * k, bo + k * n
    return {"c_all": np.concatenate(out)}


register(
    Case(
        name="grouped_gemm_pointer_array",
        make_inputs=_grouped_inputs,
        launch=_grouped_launch,
        reference=_grouped_reference,
        outputs=("c_all",),
        tolerance={"c_all": (1e-5, 3e-5)},  # ieee fp32 accumulation of <= 50 terms
        tags=frozenset({"pointer_array"}),
    )
)
