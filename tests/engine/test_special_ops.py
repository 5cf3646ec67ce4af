"""Operations outside the conformance corpus: dot_scaled, interpreted kernels, libdevice by symbol."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import triton
import triton.language as tl

import tilescope


@triton.jit
def scaled_kernel(a_ptr, as_ptr, b_ptr, bs_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    rs = tl.arange(0, K // 32)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    a_s = tl.load(as_ptr + rm[:, None] * (K // 32) + rs[None, :])
    b_s = tl.load(bs_ptr + rn[:, None] * (K // 32) + rs[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot_scaled(a, a_s, "e4m3", b, b_s, "e4m3"))


def test_dot_scaled_e4m3_with_e8m0_scales():
    M, N, K = 16, 32, 64
    rng = np.random.default_rng(7)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((K, N)).astype(ml_dtypes.float8_e4m3fn)
    a_s = rng.integers(118, 136, (M, K // 32)).astype(np.uint8)
    b_s = rng.integers(118, 136, (N, K // 32)).astype(np.uint8)
    c = np.full((M, N), np.nan, np.float32)
    tilescope.trace(scaled_kernel)[(1,)](a.view(np.uint8), a_s, b.view(np.uint8), b_s, c, M=M, N=N, K=K)
    af = a.astype(np.float64) * np.repeat(2.0 ** (a_s.astype(np.float64) - 127), 32, axis=1)
    bf = b.astype(np.float64) * np.repeat(2.0 ** (b_s.astype(np.float64) - 127), 32, axis=1).T
    ref = af @ bf
    # products of fp8 values are exact in fp32; the fp32 accumulation of K=64 terms bounds the error
    np.testing.assert_allclose(c, ref, rtol=0, atol=64 * np.finfo(np.float32).eps * np.abs(ref).max())


def test_kernel_decorated_under_triton_interpret_runs_on_the_engine(tmp_path):
    script = textwrap.dedent('''
        import os
        os.environ["TRITON_INTERPRET"] = "1"
        import numpy as np, triton, triton.language as tl, tilescope
        from triton.runtime.interpreter import InterpretedFunction

        @triton.jit
        def double(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)

        assert isinstance(double, InterpretedFunction)
        x = np.arange(16, dtype=np.float32)
        tilescope.trace(double)[(1,)](x, BLOCK=16)
        assert (x == np.arange(16) * 2).all()
        print("ok")
    ''')
    path = tmp_path / "interpreted.py"
    path.write_text(script)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


@triton.jit
def descriptor_gather_scatter(src_ptr, dst_ptr, idx_ptr, M, N, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    src = tl.make_tensor_descriptor(src_ptr, [M, N], [N, 1], [1, BLOCK_C])
    dst = tl.make_tensor_descriptor(dst_ptr, [M, N], [N, 1], [1, BLOCK_C])
    rows = tl.load(idx_ptr + tl.arange(0, BLOCK_R))
    col = tl.program_id(0) * BLOCK_C
    dst.scatter(src.gather(rows, col) * 2.0, rows, col)


def test_descriptor_gather_and_scatter_rows():
    import torch

    src = torch.randn(64, 64)
    dst = torch.zeros(64, 64)
    rows = torch.randperm(64)[:8].to(torch.int32)
    tilescope.trace(descriptor_gather_scatter)[(4,)](src, dst, rows, 64, 64, BLOCK_R=8, BLOCK_C=16)
    want = torch.zeros(64, 64)
    want[rows.long()] = src[rows.long()] * 2
    assert torch.equal(dst, want)


@triton.jit
def lowp_atomic_add(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr + offs % 4, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_fp16_and_bf16_atomic_add_round_each_update():
    import torch

    for dtype in (torch.float16, torch.bfloat16):
        x = torch.randn(256).to(dtype)
        out = torch.zeros(4, dtype=dtype)
        tilescope.trace(lowp_atomic_add)[(4,)](x, out, 256, BLOCK=64)
        acc = [torch.zeros((), dtype=dtype) for _ in range(4)]
        for i in range(256):  # program order, each update rounded to the storage type
            acc[i % 4] = (acc[i % 4].float() + x[i].float()).to(dtype)
        assert torch.equal(out, torch.stack(acc)), dtype
