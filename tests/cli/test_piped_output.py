"""Diagnostics written to a pipe (a CI log, ``| tee``) keep each location on one line.

Editors and CI annotators find a finding by parsing ``path:line:col``; a console that hard-wraps at
80 columns when it is not a terminal splits a long path from its line number.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

KERNEL = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def scale_rows_of_a_feature_matrix_by_a_per_row_factor(x_ptr, factor_ptr, out_ptr, n_cols,
                                                          BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols <= n_cols)  # BUG: <= reads one past the row
        tl.store(out_ptr + row * n_cols + cols, x * tl.load(factor_ptr + row), mask=cols < n_cols)


    x = torch.randn(4, 100)
    out = torch.empty_like(x)
    scale_rows_of_a_feature_matrix_by_a_per_row_factor[(4,)](x, torch.rand(4) + 0.5, out, 100, BLOCK=128)
""")


def test_a_piped_diagnostic_keeps_path_line_and_column_on_one_line(tmp_path):
    folder = tmp_path / "src" / "feature_engineering_kernels" / "row_scaling_with_per_row_factors"
    folder.mkdir(parents=True)
    script = folder / "scale_rows_by_factor_kernel_with_a_deliberately_long_file_name.py"
    script.write_text(KERNEL)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR")}
    run = subprocess.run(
        [sys.executable, "-m", "tilescope.cli", "run", "-c", "sanitizer", str(script.relative_to(tmp_path))],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    location = f"{script.relative_to(tmp_path)}:12:9"
    assert len(location) > 80
    (line,) = [line for line in run.stderr.splitlines() if "-->" in line]
    assert location in line, run.stderr
    (headline,) = [line for line in run.stderr.splitlines() if line.startswith("error[")]
    assert headline.endswith("(fp32[4, 100])")  # the headline is not wrapped either
