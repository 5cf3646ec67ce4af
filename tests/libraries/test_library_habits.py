"""Habits of production Triton libraries that small examples lack (issue 18), each as a library writes it.

Every test here failed before the fix it names: the kernel either raised inside tilescope or ran
differently from GPU Triton.
"""

from __future__ import annotations

import json

import pytest
import torch
import triton
import triton.language as tl
from triton.language.extra.libdevice import rsqrt  # bound by import, as Liger-Kernel's rms_norm does

import tilescope
from tilescope.engine.errors import LaunchError


@triton.jit
def rms_norm_rows(x_ptr, w_ptr, out_ptr, stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    inv = rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(out_ptr + row * stride + cols, x * inv * w, mask=mask)


def _rms_reference(x, w, eps):
    x64 = x.double()
    return x64 * torch.rsqrt((x64 * x64).mean(-1, keepdim=True) + eps) * w.double()


def test_libdevice_function_bound_by_import_is_cudas():
    x, w = torch.randn(37, 300), torch.randn(300)
    out = torch.empty_like(x)
    tilescope.trace(rms_norm_rows)[(37,)](x, w, out, x.stride(0), 300, 1e-6, BLOCK_SIZE=512)
    torch.testing.assert_close(out.double(), _rms_reference(x, w, 1e-6), rtol=1e-5, atol=1e-5)


def _warps(args):
    return 8 if args["BLOCK_SIZE"] >= 2048 else 4


@triton.heuristics({"BLOCK_SIZE": lambda args: triton.next_power_of_2(args["n_cols"]), "num_warps": _warps})
@triton.jit
def softmax_rows(x_ptr, out_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=mask)


def test_heuristic_setting_num_warps_and_launch_options_as_keywords():
    x = torch.randn(9, 2500)
    out = torch.empty_like(x)
    tilescope.trace(softmax_rows)[(9,)](x, out, x.stride(0), 2500)
    torch.testing.assert_close(out.double(), torch.softmax(x.double(), -1), rtol=1e-5, atol=1e-6)
    tilescope.trace(rms_norm_rows)[(9,)](x, x[0], out, x.stride(0), 2500, 1e-6, BLOCK_SIZE=4096,
                                         num_warps=16, num_stages=1)  # fmt: skip
    torch.testing.assert_close(out.double(), _rms_reference(x, x[0], 1e-6), rtol=1e-5, atol=1e-5)


def test_a_misspelt_keyword_is_refused_as_triton_does():
    x = torch.randn(4, 8)
    with pytest.raises(LaunchError, match=r"'num_warp'.*unrecognised.*num_warps"):
        tilescope.trace(rms_norm_rows)[(4,)](x, x[0], x, 8, 8, 1e-6, BLOCK_SIZE=8, num_warp=4)


@triton.autotune(
    configs=[triton.Config({"BLOCK": 64}, num_warps=2), triton.Config({"BLOCK": 256}, num_warps=8)], key=["n"]
)
@triton.jit
def scaled_copy(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


def _blocks(launches):
    class Blocks(tilescope.Client):
        def on_launch_start(self, launch):
            launches.append(launch.meta["BLOCK"])

    return Blocks()


def test_autotune_runs_one_config_and_sets_best_config():
    x = torch.randn(1000)
    out = torch.empty_like(x)
    seen: list[int] = []
    grid = lambda m: (triton.cdiv(1000, m["BLOCK"]),)  # noqa: E731
    tilescope.trace(scaled_copy, clients=[_blocks(seen)])[grid](x, out, 1000, 3.0)
    assert seen == [64]  # the kernel's first config: a CPU run needs one good config, not a sweep
    assert scaled_copy.best_config.kwargs == {"BLOCK": 64}
    assert scaled_copy.best_config.num_warps == 2
    torch.testing.assert_close(out, x * 3.0)


def test_autotune_all_and_a_named_config():
    x = torch.randn(1000)
    out = torch.empty_like(x)
    seen: list[int] = []
    grid = lambda m: (triton.cdiv(1000, m["BLOCK"]),)  # noqa: E731
    tilescope.trace(scaled_copy, clients=[_blocks(seen)], autotune="all")[grid](x, out, 1000, 2.0)
    tilescope.trace(scaled_copy, clients=[_blocks(seen)], config=1)[grid](x, out, 1000, 2.0)
    assert seen == [64, 256, 256]
    assert scaled_copy.best_config.kwargs == {"BLOCK": 256}
    with pytest.raises(LaunchError, match="autotune must be one of 'first', 'all'"):
        tilescope.trace(scaled_copy, autotune="best")


def _gpu_autotune_cache(folder, n, timings):
    """What Triton writes on a GPU with TRITON_CACHE_AUTOTUNING=1: <hash>/<kernel>.autotune.json."""
    entry = folder / f"{abs(hash((n, tuple(timings)))):x}" / "scaled_copy.autotune.json"
    entry.parent.mkdir(parents=True)
    configs = [({"kwargs": {"BLOCK": block}, "num_warps": warps, "num_stages": 3, "num_ctas": 1,
                 "maxnreg": None}, [ms, ms * 0.9, ms * 1.1]) for block, warps, ms in timings]  # fmt: skip
    entry.write_text(json.dumps({"key": [n, "torch.float32", "torch.float32"], "configs_timings": configs}))


def test_autotune_takes_the_config_a_gpu_run_cached(tmp_path, monkeypatch):
    _gpu_autotune_cache(tmp_path, 1000, [(64, 2, 0.031), (256, 8, 0.012)])  # this key: 256 won
    _gpu_autotune_cache(tmp_path, 4096, [(64, 2, 0.010), (256, 8, 0.020)])  # another key: 64 won
    _gpu_autotune_cache(tmp_path, 777, [(512, 4, 0.001)])  # a config the kernel no longer lists
    monkeypatch.setenv("TILESCOPE_AUTOTUNE_CACHE", str(tmp_path))
    seen: list[int] = []
    grid = lambda m: (triton.cdiv(m["n"], m["BLOCK"]),)  # noqa: E731
    for n in (1000, 4096, 777, 123):
        x = torch.randn(n)
        out = torch.empty_like(x)
        tilescope.trace(scaled_copy, clients=[_blocks(seen)])[grid](x, out, n, 2.0)
        torch.testing.assert_close(out, x * 2.0)
    assert seen == [256, 64, 64, 64]  # cached winners; a stale entry or no entry: the first config
    assert scaled_copy.best_config.kwargs == {"BLOCK": 64}
    with pytest.raises(LaunchError, match="give one of them"):
        tilescope.trace(scaled_copy, config=1, autotune="all")


@triton.jit
def _cast_to(x, dtype: tl.constexpr):
    return x.to(dtype)


@triton.jit
def cast_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, _cast_to(tl.load(x_ptr + offs, mask=mask), out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _to_dtype_by_value(x, dtype):
    return x.to(dtype.value)  # compiled Triton wraps a dtype argument in a constexpr


@triton.jit
def cast_copy_by_value(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = _to_dtype_by_value(tl.load(x_ptr + offs, mask=mask), tl.float16)
    tl.store(out_ptr + offs, y, mask=mask)


def test_dtype_passed_to_a_jit_helper_is_a_constexpr():
    x = torch.randn(300)
    out = torch.empty(300, dtype=torch.float16)
    tilescope.trace(cast_copy_by_value)[(3,)](x, out, 300, BLOCK=128)
    torch.testing.assert_close(out, x.half())
    out.zero_()
    tilescope.trace(cast_copy)[(3,)](x, out, 300, BLOCK=128)
    torch.testing.assert_close(out, x.half())


def test_a_launch_returns_a_compiled_kernel_handle_that_launches_again():
    x = torch.randn(5, 300)
    out = torch.empty_like(x)
    handle = tilescope.trace(rms_norm_rows)[(5,)](x, x[0], out, x.stride(0), 300, 1e-6, BLOCK_SIZE=512)
    y, w = torch.randn(5, 300), torch.randn(300)
    handle[(5,)](y, w, out, y.stride(0), 300, 1e-6, BLOCK_SIZE=512)  # libraries cache and reuse it
    torch.testing.assert_close(out.double(), _rms_reference(y, w, 1e-6), rtol=1e-5, atol=1e-5)


def _helper_not_jit(x):
    return tl.exp(x)


@triton.jit
def calls_plain_python(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, _helper_not_jit(tl.load(x_ptr + offs)))


def test_a_plain_python_function_calling_builtins_is_refused_as_the_compiler_does():
    x = torch.randn(16)
    with pytest.raises(Exception, match=r"_helper_not_jit.*@triton.jit"):
        tilescope.trace(calls_plain_python)[(1,)](x, torch.empty(16), BLOCK=16)
