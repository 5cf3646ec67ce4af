"""Options are checked where they are given: a typo, a bad value or a conflict is an error at once.

Each public entry point that takes tilescope's options (``tilescope.trace`` on a kernel, as a
decorator below ``@triton.jit``, ``Session.intercept`` and ``tilescope.intercepting``) refuses an
unknown option (suggesting the one meant), an invalid value and a conflicting combination, naming
the option and what it may be, before any kernel runs.
"""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

import tilescope
from tilescope.engine.errors import LaunchError


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def axpy(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = alpha * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def scale(x_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * alpha, mask=offs < n)


BAD = [
    ({"moed": "serial"}, r"unknown option 'moed'.*; options are auto.*; did you mean 'mode' for 'moed'\?$"),
    ({"mode": "serail"}, r"mode must be one of 'batched', 'serial', 'concurrent'; got 'serail'"),
    ({"batch_size": 0}, r"batch_size must be a positive int; got 0"),
    ({"batch_size": 64, "mode": "serial"}, r"batch_size=64 conflicts with mode='serial'"),
    ({"bounds": "strict"}, r"bounds must be one of 'warn', 'view', 'storage'; got 'strict'"),
    ({"seed": 1.5}, r"seed must be an int; got 1.5"),
    ({"compute_outputs": "yes"}, r"compute_outputs must be True, False or None"),
    ({"autotune": "best"}, r"autotune must be one of 'first', 'all'; got 'best'"),
    ({"autotune": "all", "config": 1}, r"config= names one autotune config, autotune='all' runs every one"),
    ({"config": "fast"}, r"config must be an index into the kernel's autotune configs or a triton.Config"),
    ({"debug": "on"}, r"debug must be True or False; got 'on'"),
    ({"progress": 10}, r"progress must be a callable"),
    ({"clients": "sanitiser"}, r"unknown tilescope client 'sanitiser'; .*; did you mean 'sanitizer'\?"),
    ({"clients": "sanitizer", "fail_fast": "yes"}, r"sanitizer option fail_fast must be True or False"),
    ({"clients": "sanitizer", "fail_fst": True}, r"unknown option 'fail_fst'.*; did you mean 'fail_fast'"),
    ({"clients": "tracer", "values": "some"}, r"tracer values must be one of off, sample, all; got 'some'"),
    ({"clients": "tracer", "values": "all", "compute_outputs": False},
     r"compute_outputs=False conflicts with the tracer client, which records values"),
]  # fmt: skip


@pytest.mark.parametrize("options, message", BAD, ids=[str(o) for o, _ in BAD])
def test_tilescope_trace_refuses(options, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the tracer's default trace folder
    with pytest.raises(LaunchError, match=rf"^tilescope.trace: {message}"):
        tilescope.trace(axpy, **options)


@pytest.mark.parametrize("options, message", BAD, ids=[str(o) for o, _ in BAD])
def test_an_interception_refuses_before_any_kernel_runs(options, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    options = dict(options)
    clients = options.pop("clients", None)
    with pytest.raises(LaunchError, match=rf"^tilescope interception: {message}"):
        tilescope.Session().intercept(clients, **options)
    with pytest.raises(LaunchError, match=message):
        with tilescope.intercepting(clients, **options):
            pytest.fail("the body must not run")


def test_the_decorator_below_jit_refuses_at_decoration():
    with pytest.raises(LaunchError, match=r"unknown option 'batchsize'.*; did you mean 'batch_size' for"):

        @triton.jit
        @tilescope.trace(batchsize=64)
        def never(x_ptr):
            pass


def test_config_is_checked_against_the_kernel():
    with pytest.raises(LaunchError, match=r"kernel `scale` .*config= picks one of an autotuned kernel's"):
        tilescope.trace(scale, config=0)
    with pytest.raises(LaunchError, match=r"kernel `axpy` .*config=2, but it has 2 autotune configs \(0 to"):
        tilescope.trace(axpy, config=2)


def test_valid_options_run():
    x, y = torch.randn(1000), torch.randn(1000)
    expected = 2.0 * x.double() + y.double()
    grid = lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)  # noqa: E731
    tilescope.trace(axpy, mode="serial", bounds="view", config=1, debug=False)[grid](x, y, 1000, 2.0)
    torch.testing.assert_close(y.double(), expected)
