"""GPU check for issue 5: every block-pointer corpus kernel in four forms, checked and timed on a GPU.

Forms: ``original`` (tl.make_block_ptr; needs a Triton that still has it, e.g. 3.6), ``compat_pointer``
and ``compat_descriptor`` (tilescope.compat, both lowerings) and ``migrated`` (``tilescope migrate``
output). Each form is checked on a ragged corpus case against the float64 reference, then timed
(``triton.testing.do_bench``, median) on the corpus's ``bench_case()`` and compared with the
original's outputs there.

Two steps, because the GPU machine has no libcst::

    python benchmarks/gpu_blockptr.py prepare build/blockptr_forms      # here: write the four forms
    PYTHONPATH=src python benchmarks/gpu_blockptr.py run build/blockptr_forms $OUT   # on the GPU
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import types
from pathlib import Path

FORMS = {
    "original": None,
    "compat_pointer": "compat-pointer",
    "compat_descriptor": "compat-descriptor",
    "migrated": "auto",
}
CORPUS = Path(__file__).resolve().parent.parent / "tests" / "blockptr_corpus"
SRC = Path(__file__).resolve().parent.parent / "src"


def prepare(out: Path) -> None:
    """Write ``out/<kernel>/<form>.py`` for every corpus file."""
    from tilescope.migrate.codemod import migrate_source

    for path in sorted(CORPUS.glob("*.py")):
        folder = out / path.stem
        folder.mkdir(parents=True, exist_ok=True)
        text = path.read_text()
        for form, mode in FORMS.items():
            (folder / f"{form}.py").write_text(
                text if mode is None else migrate_source(text, str(path), mode).migrated
            )
    print(f"wrote {len(list(out.iterdir()))} kernels x {len(FORMS)} forms under {out}")


def _import_compat_only() -> None:
    # tilescope/__init__ pulls in the CPU engine (Triton 3.9 internals); the GPU needs only compat
    package = types.ModuleType("tilescope")
    package.__path__ = [str(SRC / "tilescope")]
    sys.modules["tilescope"] = package


def run(forms: Path, out: Path, budget_s: float) -> None:
    """Check and time every prepared kernel; write ``out/gpu_blockptr.json`` after each kernel."""
    _import_compat_only()
    import numpy as np
    import torch
    import triton
    from triton.testing import do_bench

    from tilescope.migrate.runner import kernels_of, load_module
    from tilescope.migrate.verify import compare

    triton.set_allocator(lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    report = {
        "gpu": torch.cuda.get_device_name(),
        "triton": triton.__version__,
        "torch": torch.__version__,
        "date": time.strftime("%Y-%m-%d"),
        "kernels": {},
    }
    start = time.time()

    def to_gpu(arrays):
        return {k: torch.from_numpy(np.ascontiguousarray(v)).cuda() for k, v in arrays.items()}

    for folder in sorted(p for p in forms.iterdir() if p.is_dir()):
        if time.time() - start > budget_s:
            report["kernels"][folder.name] = {"skipped": "time budget spent"}
            continue
        entry: dict = {}
        modules = {form: load_module(folder / f"{form}.py", f"bp_{folder.name}_{form}") for form in FORMS}
        spec = modules["original"]
        check_shape = spec.cases()[1]
        check_in = spec.make_inputs(np.random.default_rng(1), **check_shape)
        wide = {k: v.astype(np.float64) if v.dtype.kind == "f" else v for k, v in check_in.items()}
        want = spec.reference(wide, **check_shape)
        bench_shape = spec.bench_case()
        bench_in = spec.make_inputs(np.random.default_rng(2), **bench_shape)
        baseline = None
        for form, module in modules.items():
            row: dict = {}
            try:
                kernels = kernels_of(module, "gpu")
                t = to_gpu(check_in)
                module.launch(kernels, t, **check_shape)
                torch.cuda.synchronize()
                bad = [
                    compare(
                        k,
                        t[k].cpu().numpy().astype(np.float64),
                        np.asarray(v, np.float64),
                        check_in[k].dtype.name,
                    )
                    for k, v in want.items()
                ]
                row["reference"] = (
                    "agree" if all(b[0] for b in bad) else "; ".join(b[2] for b in bad if not b[0])
                )
                t = to_gpu(bench_in)
                row["median_ms"] = do_bench(
                    lambda m=module, k=kernels, t=t, s=bench_shape: m.launch(k, t, **s), return_mode="median"
                )
                outs = {k: t[k].float().cpu().numpy() for k in want}
                if baseline is None:
                    baseline = outs
                else:
                    row["vs_original_max_abs"] = max(
                        float(np.nanmax(np.abs(outs[k] - baseline[k]))) for k in outs
                    )
            except Exception as exc:  # a form that fails to compile or run is a result, not a crash
                last = str(exc).strip().splitlines()[-1][:300] if str(exc).strip() else ""
                row["error"] = f"{type(exc).__name__}: {last}"
            entry[form] = row
            print(folder.name, form, row, flush=True)
        entry["bench_shape"] = bench_shape
        report["kernels"][folder.name] = entry
        (out / "gpu_blockptr.json").write_text(json.dumps(report, indent=1))


def main() -> int:
    """Command line: ``prepare FORMS`` or ``run FORMS OUT [--budget-s S]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("forms", type=Path)
    r = sub.add_parser("run")
    r.add_argument("forms", type=Path)
    r.add_argument("out", type=Path)
    r.add_argument("--budget-s", type=float, default=240.0, help="stop starting new kernels after this long")
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(args.forms)
    else:
        run(args.forms, args.out, args.budget_s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
