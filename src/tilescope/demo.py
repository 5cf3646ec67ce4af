"""``tilescope demo``: what tilescope is for, in one minute, on the CPU.

A fused softmax (``tilescope/examples/softmax.py``) with an off-by-one mask runs on the CPU engine
under the sanitizer and the tracer: the sanitizer names the line, the programs, the first bad
element and the expressions that built the address and the mask. The one-character fix follows,
checked against a float64 reference, then the trace of the buggy run and a self-contained picture
of it (``tilescope view``'s HTML), with the commands that open them.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import inspect
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

#: the fixed mask of the example kernel, and the bug the demo puts in its place
FIXED_MASK = "mask = cols < n_cols"
BUGGY_MASK = "mask = cols <= n_cols"


def register(subparsers: Any) -> None:
    """Add ``tilescope demo`` to the command line."""
    p = subparsers.add_parser(
        "demo",
        help="a kernel with a bug, the sanitizer's finding, the fix, a trace and its picture",
        description="Run a fused softmax with an off-by-one mask on the CPU engine under the sanitizer "
        "and the tracer, show the finding and the fix (checked against float64), and write the trace "
        "and a self-contained HTML view of it. No GPU needed.",
    )
    p.add_argument("--rows", type=int, default=64, help="rows of the input matrix (default: 64)")
    p.add_argument("--cols", type=int, default=1000, help="columns; not a power of two (default: 1000)")
    p.add_argument("--dir", metavar="DIR", help="where to write the kernel, trace and view (default: a new "
                   "temporary directory)")
    p.set_defaults(func=main)


@dataclass
class DemoResult:
    """What the demo found and wrote."""

    findings: str  # the sanitizer's report, as the terminal shows it
    errors: int  # error findings on the buggy kernel
    buggy_error: float  # max |softmax - float64 reference| of the buggy kernel
    fixed_findings: int  # findings on the fixed kernel (0 when the fix works)
    fixed_error: float  # max |softmax - float64 reference| of the fixed kernel
    diff: str  # the fix, as a unified diff
    trace: Path  # trace directory of the buggy run
    html: Path  # tilescope view's self-contained page of that trace


def _import_file(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_demo(directory: Path, rows: int = 64, cols: int = 1000) -> DemoResult:
    """Run the buggy and the fixed softmax on ``rows x cols`` random float32 under the sanitizer."""
    import torch

    from . import trace
    from .examples import softmax as example
    from .render import report_text
    from .viewer import TraceModel, write_html, write_reports

    fixed_source = inspect.getsource(example)
    buggy_path = directory / "softmax.py"
    buggy_path.write_text(fixed_source.replace(FIXED_MASK, BUGGY_MASK))
    buggy = _import_file(buggy_path)
    diff = "".join(difflib.unified_diff(buggy_path.read_text().splitlines(keepends=True),
                                        fixed_source.splitlines(keepends=True),
                                        "softmax.py (buggy)", "softmax.py (fixed)", n=1))

    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(0))
    reference = torch.softmax(x.double(), dim=1)
    trace_dir = directory / "trace"
    launcher = trace(buggy.softmax_kernel, clients=["sanitizer", "tracer"], trace_dir=trace_dir, force=True)
    buggy_out = example.softmax(x, kernel=launcher)
    sanitizer = next(r for r in launcher.reports if r.client == "sanitizer")
    write_reports(trace_dir, [sanitizer])
    html = write_html(TraceModel(trace_dir), directory / "view.html")

    fixed = trace(example.softmax_kernel, clients="sanitizer", compute_outputs=True)
    fixed_out = example.softmax(x, kernel=fixed)
    return DemoResult(
        findings=report_text(sanitizer),
        errors=len(sanitizer.errors),
        buggy_error=float((buggy_out.double() - reference).abs().max()),
        fixed_findings=sum(len(r.findings) for r in fixed.reports),
        fixed_error=float((fixed_out.double() - reference).abs().max()),
        diff=diff,
        trace=trace_dir,
        html=html,
    )


def main(args: argparse.Namespace) -> int:
    """Print the story; exit 0 when the bug was found and the fix is clean and correct, else 1."""
    directory = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="tilescope-demo-"))
    directory.mkdir(parents=True, exist_ok=True)
    print(f"tilescope demo: a fused softmax over {args.rows} x {args.cols} float32 on the CPU engine "
          "(no GPU)\n")
    print(f"1. The kernel has an off-by-one mask (`{BUGGY_MASK}`); the sanitizer, watching every lane:\n")
    result = run_demo(directory, args.rows, args.cols)
    print(result.findings)
    print(f"\n   Its output is wrong too: max |out - float64 softmax| = {result.buggy_error:.2g}. On a GPU")
    print("   the extra lane silently reads the next row, and past the end of the tensor in the last one.\n")
    print("2. The fix:\n")
    print(result.diff)
    # softmax's values lie in [0, 1]: exp, sum and divide in float32 stay within a few ulps of 1
    bound = 16 * float(np.finfo(np.float32).eps)
    ok = result.errors > 0 and result.fixed_findings == 0 and result.fixed_error <= bound
    verdict = "OK" if ok else "MISMATCH"
    print(f"   fixed kernel: {result.fixed_findings} findings, max |out - float64 softmax| = "
          f"{result.fixed_error:.2g} (bound {bound:.2g}) -> {verdict}\n")
    print(f"3. The buggy run's trace (every load and store, Parquet): {result.trace}")
    print(f"   and its picture, one self-contained HTML file:       {result.html}")
    print(f"   open them:  tilescope view {result.trace}    (or open {result.html} in a browser)\n")
    print("next: tilescope run -c sanitizer,tracer --trace-dir trace your_script.py   (tilescope run --help)")
    return 0 if ok else 1
