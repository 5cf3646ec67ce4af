"""A habit of flash-linear-attention: a Triton builtin bound to a module name at import (``fla.ops.utils.op``
has ``gather = tl.gather``), before tilescope patched Triton, then called by that name in kernels.

The name held Triton's unpatched builtin, which refuses to run outside the compiler ("Did you forget to add
@triton.jit?"), so fla's chunk_dplr_delta_rule and chunk_rwkv7 failed. The library is imported first in a
fresh process here, as a user's script imports it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl

    gather = tl.gather  # bound at import, as fla.ops.utils.op does

    @triton.jit
    def rows_by_index(x_ptr, idx_ptr, out_ptr, N: tl.constexpr, D: tl.constexpr):
        rows, cols = tl.arange(0, N), tl.arange(0, D)
        block = tl.load(x_ptr + rows[:, None] * D + cols[None, :])
        index = tl.load(idx_ptr + rows[:, None] * D + cols[None, :])
        tl.store(out_ptr + rows[:, None] * D + cols[None, :], gather(block, index, axis=0))

    import tilescope

    x = torch.randn(16, 8)
    index = torch.randint(0, 16, (16, 8), dtype=torch.int32)
    out = torch.empty_like(x)
    tilescope.trace(rows_by_index)[(1,)](x, index, out, N=16, D=8)
    torch.testing.assert_close(out.double(), torch.gather(x.double(), 0, index.long()), rtol=0, atol=0)
    print("gathered")
""")


def test_builtin_bound_to_a_name_before_tilescope_patched_triton(tmp_path):
    script = tmp_path / "library_kernel.py"
    script.write_text(SCRIPT)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "gathered" in run.stdout
