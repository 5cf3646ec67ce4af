"""A first launch imports only what it uses: Triton's host TensorDescriptor and ``tl.extra.libdevice``
only once the user's code has, the engine's atomics, descriptors, dot, reductions, libdevice sequences
and special-function tables only for a kernel that calls them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import torch
import triton
import triton.language as tl

import tilescope
from tilescope.frontends.triton import version


@triton.jit
def copy_tile(in_desc, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, in_desc.load([0]))


def test_a_host_tensor_descriptor_is_still_an_argument():
    from triton.tools.tensor_descriptor import TensorDescriptor

    assert version.descriptor_classes() == (TensorDescriptor,)
    x = torch.arange(16, dtype=torch.float32)
    out = torch.zeros(16)
    tilescope.trace(copy_tile)[(1,)](TensorDescriptor.from_tensor(x, [16]), out, BLOCK=16)
    np.testing.assert_array_equal(out.numpy(), x.numpy())


def _run(script: str, tmp_path, name: str = "plain.py", env: dict | None = None) -> str:
    (tmp_path / name).write_text(script)  # Triton reads a kernel's source from its file
    done = subprocess.run([sys.executable, str(tmp_path / name)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})}, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


#: modules a plain elementwise kernel's first launch has no use for
_NOT_FOR_A_PLAIN_KERNEL = (
    "triton.language.extra.libdevice",
    "tilescope.engine.atomics",
    "tilescope.engine.descriptors",
    "tilescope.engine.descriptor_rules",
    "tilescope.engine.dot",
    "tilescope.engine.reduce",
    "tilescope.engine.layout",
    "tilescope.engine.libdevice",
    "tilescope.engine.sfu",
    "tilescope.frontends.triton.libdevice",
    "tilescope.frontends.triton.tuned",
)


def test_a_plain_launch_imports_none_of_what_it_does_not_use(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        import torch, triton, triton.language as tl
        import tilescope

        @triton.jit
        def add_one(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)

        x = torch.zeros(8)
        tilescope.trace(add_one)[(1,)](x, BLOCK=8)
        assert x.tolist() == [1.0] * 8
        print([m for m in {_NOT_FOR_A_PLAIN_KERNEL + ("tilescope.frontends.triton.independent",)!r}
               if m in sys.modules])
    """)
    cache = {"TILESCOPE_CACHE_DIR": str(tmp_path / "cache")}
    # a cache miss rewrites the kernel (and analyses its loops); a later process reads the rewrite back
    assert _run(script, tmp_path, env=cache) == repr(["tilescope.frontends.triton.independent"])
    assert _run(script, tmp_path, env=cache) == "[]"


def test_tl_exp_does_not_load_the_special_function_unit_tables(tmp_path):
    # tl.exp in "gpu" numerics (the default model) needs only log2(e), not the SFU module (~0.7 ms)
    script = textwrap.dedent("""
        import math, sys
        import torch, triton, triton.language as tl
        import tilescope

        @triton.jit
        def exp(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.exp(tl.load(x_ptr + offs)))

        x = torch.ones(8)
        tilescope.trace(exp)[(1,)](x, BLOCK=8)
        assert torch.allclose(x, torch.full((8,), math.e)), x
        print([m for m in ("tilescope.engine.sfu", "tilescope.engine.libdevice") if m in sys.modules])
    """)
    assert _run(script, tmp_path) == "[]"


def test_fp32_sums_fmas_and_dots_do_not_import_numpy_random(tmp_path):
    # the first-use checks of the C kernels and of torch's FMA read stored inputs: drawing them would
    # import numpy.random (~5 ms of a first launch; torch, Triton and tilescope do not load it)
    script = textwrap.dedent("""
        import sys
        import torch, triton, triton.language as tl
        import tilescope

        @triton.jit
        def fused(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
            ones, halves = tl.full((1, 16), 1.0, tl.float32), tl.full((16, 16), 0.5, tl.float32)
            d = tl.dot(x[:, None] * ones, halves, input_precision="ieee")
            tl.store(out_ptr + offs, tl.sum(x * y, axis=0) + x * 0.3 + 1.0 + tl.sum(d, axis=1))

        x, y = torch.randn(16), torch.randn(16)
        out = torch.empty(16)
        tilescope.trace(fused)[(1,)](x, y, out, BLOCK=16)
        want = (x.double() * y.double()).sum() + x.double() * 0.3 + 1.0 + 128.0 * x.double()
        assert torch.allclose(out.double(), want, atol=1e-4), (out, want)
        from tilescope.engine import fma_chain, numerics, tree_sum
        assert numerics.hardware_fma() is not None and tree_sum._library() is not None
        assert fma_chain.compiled_chain() is not None
        print("numpy.random" in sys.modules)
    """)
    assert _run(script, tmp_path) == "False"


def test_libdevice_stubs_imported_after_a_first_launch_are_cudas(tmp_path):
    (tmp_path / "later.py").write_text(textwrap.dedent("""
        import triton
        import triton.language as tl
        from triton.language.extra import libdevice
        from triton.language.extra.libdevice import rsqrt

        @triton.jit
        def roots(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs)
            tl.store(x_ptr + offs, libdevice.sqrt(x) + rsqrt(x))
    """))
    script = textwrap.dedent("""
        import math
        import torch, triton, triton.language as tl
        import tilescope

        @triton.jit
        def add_one(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)

        x = torch.full((8,), 3.0)
        tilescope.trace(add_one)[(1,)](x, BLOCK=8)
        import later

        tilescope.trace(later.roots)[(1,)](x, BLOCK=8)
        assert torch.allclose(x, torch.full((8,), 2.0 + 0.5)), x
        print("ok")
    """)
    assert _run(script, tmp_path) == "ok"  # the script's folder is on sys.path: later.py imports


def test_a_plain_launch_does_not_import_the_descriptor_module(tmp_path):
    script = textwrap.dedent("""
        import sys
        import torch, triton, triton.language as tl
        import tilescope

        @triton.jit
        def add_one(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)

        x = torch.zeros(8)
        tilescope.trace(add_one)[(1,)](x, BLOCK=8)
        assert x.tolist() == [1.0] * 8
        print("triton.tools.tensor_descriptor" in sys.modules)
    """)
    (tmp_path / "plain.py").write_text(script)  # Triton reads a kernel's source from its file
    done = subprocess.run([sys.executable, str(tmp_path / "plain.py")], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "False", done.stderr[-2000:]


def test_builtin_targets_are_getmembers_builtins_in_its_order():
    # builtin_targets reads modules' __dict__s instead of inspect.getmembers: the same list, same order
    import inspect

    from triton.language import core

    def by_getmembers(owners):
        return [(id(owner), name, id(member)) for owner in owners
                for name, member in inspect.getmembers(owner) if core.is_builtin(member)]  # fmt: skip

    owners = version.triton_builtin_owners()
    found = [(id(owner), name, id(member)) for owner, name, member in version.builtin_targets(owners)]
    assert found == by_getmembers(owners)


def test_a_builtin_under_two_owners_has_one_guard_that_is_tritons_outside_a_launch():
    import pytest

    from tilescope.frontends.triton.runtime import RUNTIME

    RUNTIME._install_once()
    assert tl.load is tl.core.load  # one guard for both names, as Triton has one function for both
    assert id(tl.load) in RUNTIME._guards and tl.core.is_builtin(tl.load)
    with pytest.raises(ValueError, match="Did you forget to add @triton.jit"):
        tl.load(None)  # no launch runs: Triton's own builtin, which refuses a call outside @triton.jit
