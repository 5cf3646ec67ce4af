"""The profiler's GPU validation (issue 13): benchmark kernels measured on an H200 with Nsight Compute.

Runs on the GPU machine with Triton and torch only (no tilescope there). ``--ncu`` launches each
configuration once (run it under ``ncu``, see ``NCU_METRICS``); ``--time`` times each with
``triton.testing.do_bench`` and measures the fp32, tf32 and fp16 matmul roofs. The CPU side,
``benchmarks/profiler_validate.py``, profiles the same configurations with tilescope and compares.
Usage on the GPU: ``ncu --metrics $(python3 profiler_gpu.py --metrics) --csv python3 profiler_gpu.py --ncu``
and ``python3 profiler_gpu.py --time OUT.json``.
"""

from __future__ import annotations

import json
import sys

import torch
import triton
import triton.language as tl

NCU_METRICS = (
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum", "launch__registers_per_thread",
    "launch__shared_mem_per_block_dynamic", "sm__maximum_warps_per_active_cycle_pct",
    "smsp__sass_inst_executed_op_local_st.sum", "gpu__time_duration.sum",
)  # fmt: skip


@triton.jit
def copy_kernel(src_ptr, dst_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs))


@triton.jit
def masked_copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def gather_columns_kernel(x_ptr, out_ptr, rows, stride_r, stride_c, BLOCK: tl.constexpr):
    """out[c, r] = x[r, c] for BLOCK rows of column c per program."""
    col = tl.program_id(0)
    r = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + col * rows + r, tl.load(x_ptr + r * stride_r + col * stride_c))


@triton.jit
def row_softmax_kernel(x_ptr, out_ptr, stride_row, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :])
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    tl.store(out_ptr + rows[:, None] * stride_row + cols[None, :], e / tl.sum(e, axis=1)[:, None])


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                  stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):  # fmt: skip
    """Triton's matmul tutorial (GROUP_SIZE_M=1: row-major tile order)."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16))


N = 1 << 24
COLUMN_ROWS = 1 << 22
SOFTMAX_ROWS = 1 << 17
MATMUL = 2048


def configs(device: str, seed: int = 0) -> dict:
    """name -> (kernel, grid, args, meta); inputs made on ``device`` from a seeded generator."""
    g = torch.Generator(device="cpu").manual_seed(seed)

    def rand(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g, dtype=dtype).to(device)

    out = {}
    x = rand(N)
    out["copy"] = (copy_kernel, (N // 1024,), (x, torch.empty_like(x)), {"BLOCK": 1024})
    base = rand(N + 1)
    out["copy_misaligned"] = (copy_kernel, (N // 1024,), (base[1:], torch.empty(N, device=device)),
                              {"BLOCK": 1024})  # fmt: skip
    tail = N + 4  # no multiple of 16: Triton cannot prove the mask constant over 4 lanes
    xt = rand(tail)
    out["masked_tail"] = (masked_copy_kernel, (triton.cdiv(tail, 1024),), (xt, torch.empty_like(xt), tail),
                          {"BLOCK": 1024})  # fmt: skip
    out["masked_even"] = (masked_copy_kernel, (N // 1024,), (x, torch.empty_like(x), N), {"BLOCK": 1024})
    m = rand(COLUMN_ROWS, 6)
    out["columns_strided"] = (gather_columns_kernel, (6, COLUMN_ROWS // 1024),
                              (m, torch.empty(6, COLUMN_ROWS, device=device), COLUMN_ROWS, *m.stride()),
                              {"BLOCK": 1024})  # fmt: skip
    mt = rand(6, COLUMN_ROWS).T  # the same matrix stored column-major: each column contiguous
    out["columns_contiguous"] = (gather_columns_kernel, (6, COLUMN_ROWS // 1024),
                                 (mt, torch.empty(6, COLUMN_ROWS, device=device), COLUMN_ROWS, *mt.stride()),
                                 {"BLOCK": 1024})  # fmt: skip
    s = rand(SOFTMAX_ROWS, 128)
    for warps in (1, 8):
        meta = {"ROWS": 128, "COLS": 128, "num_warps": warps}
        out[f"softmax_{warps}warp"] = (row_softmax_kernel, (SOFTMAX_ROWS // 128,),
                                       (s, torch.empty_like(s), s.stride(0)), meta)  # fmt: skip
    a = rand(MATMUL, MATMUL, dtype=torch.float16)
    b = rand(MATMUL, MATMUL, dtype=torch.float16)
    tiles = (MATMUL // 128) ** 2
    for group in (1, 8):
        c = torch.empty(MATMUL, MATMUL, dtype=torch.float16, device=device)
        meta = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_SIZE_M": group, "num_warps": 4,
                "num_stages": 3}
        args = (a, b, c, MATMUL, MATMUL, MATMUL, *a.stride(), *b.stride(), *c.stride())
        out[f"matmul_group{group}"] = (matmul_kernel, (tiles,), args, meta)
    return out


def check(name: str, args: tuple) -> None:
    """The launch's output against a float64 reference (raises AssertionError)."""
    if name.startswith(("copy", "masked")):
        torch.testing.assert_close(args[1], args[0], rtol=0, atol=0)
    elif name.startswith("columns"):
        torch.testing.assert_close(args[1], args[0].T, rtol=0, atol=0)
    elif name.startswith("softmax"):
        want = torch.softmax(args[0].double(), dim=1)
        torch.testing.assert_close(args[1].double(), want, rtol=1e-5, atol=1e-7)
    else:
        want = args[0].double() @ args[1].double()
        torch.testing.assert_close(args[2].double(), want, rtol=1e-2, atol=0.25)


def _roofs() -> dict:
    n = 8192
    out = {}
    for name, dtype, tf32 in (("fp32", torch.float32, False), ("tf32", torch.float32, True),
                              ("fp16", torch.float16, False)):  # fmt: skip
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        ms = triton.testing.do_bench(lambda a=a, b=b: a @ b, warmup=50, rep=200)
        out[name] = 2 * n**3 / (ms / 1e3)
    torch.backends.cuda.matmul.allow_tf32 = False
    return out


def main() -> None:
    if "--metrics" in sys.argv:
        print(",".join(NCU_METRICS))
        return
    table = configs("cuda")
    if "--ncu" in sys.argv:
        for kernel, grid, args, meta in table.values():
            kernel[grid](*args, **meta)
        torch.cuda.synchronize()
        return
    times = {}
    for name, (kernel, grid, args, meta) in table.items():
        kernel[grid](*args, **meta)
        check(name, args)
        times[name] = triton.testing.do_bench(lambda k=kernel, g=grid, a=args, m=meta: k[g](*a, **m),
                                              warmup=25, rep=100)  # fmt: skip
    result = {"ms": times, "roofs_flops": _roofs(), "gpu": torch.cuda.get_device_name(),
              "triton": triton.__version__, "torch": torch.__version__}  # fmt: skip
    with open(sys.argv[sys.argv.index("--time") + 1], "w") as fh:
        json.dump(result, fh, indent=1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
