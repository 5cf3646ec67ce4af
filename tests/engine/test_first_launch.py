"""A first launch imports only what it uses: Triton's host TensorDescriptor only once the user's code has."""

from __future__ import annotations

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
