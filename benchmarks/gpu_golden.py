"""Record GPU golden outputs for every conformance case.

Runs each case of ``tests/conformance`` on CUDA with its fixed seed, saves inputs and outputs to
one compressed ``.npz`` per case (no pickle; bf16/fp8 as raw bits), checks each result against the
case's float64 reference, and writes ``manifest.json`` with the GPU, driver, versions, date and the
per-case verdicts. With ``--bundle`` the fixtures go into one ``golden.tar`` (the device tool brings
back at most 8 files); unpack it into ``tests/conformance/golden/``.

    cd repo && PYTHONPATH=src:tests python3 benchmarks/gpu_golden.py --out $OUT --bundle

``--device cpu`` with ``TRITON_INTERPRET=1`` runs the same path on Triton's interpreter, to test the
script without a GPU.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
from pathlib import Path


def _gpu_facts(device: str) -> dict:
    import torch

    if device == "cpu":
        return {"gpu": "none (cpu, Triton interpreter)", "driver": None}
    facts = {
        "gpu": torch.cuda.get_device_name(),
        "capability": list(torch.cuda.get_device_capability()),
        "cuda_runtime": torch.version.cuda,
    }
    try:
        facts["driver"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        facts["driver"] = f"unknown ({exc})"
    return facts


def record(out_dir: Path, device: str, names: list[str]) -> dict:
    """Run the cases, write one .npz each into `out_dir`, and return the manifest (also rewritten
    to `out_dir`/manifest.json after every case, so a run cut short keeps what it finished)."""
    import numpy as np
    import torch
    import triton
    from conformance.case import all_cases, case_seed, check_outputs, launch_inputs, save_golden

    cases = all_cases()
    manifest = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        **_gpu_facts(device),
        "triton": triton.__version__,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "interpreter": os.environ.get("TRITON_INTERPRET") == "1",
        "cases": {},
    }
    for name in names or list(cases):
        case = cases[name]
        rec: dict = {"tags": sorted(case.tags), "seed": case_seed(name)}
        manifest["cases"][name] = rec
        skip = case.skip_reason(triton.__version__)
        if skip:
            rec.update(status="skipped", message=skip)
            continue
        inputs = case.make_inputs(np.random.default_rng(case_seed(name)))
        start = time.perf_counter()
        try:
            outputs = launch_inputs(case, lambda kernel: kernel, inputs, device)
        except Exception as exc:  # noqa: BLE001 - one broken case must not lose the others
            # The whole chain: a CompilationError names the line, its __cause__ says why.
            rec.update(status="error", message="".join(traceback.format_exception(exc))[-4000:])
            print(f"{name:45s} ERROR {rec['message'][:200]}", flush=True)
            continue
        rec["seconds"] = round(time.perf_counter() - start, 3)
        try:
            check_outputs(case, inputs, outputs)
            rec.update(status="ok", matches_reference=True, message="")
        except AssertionError as exc:
            rec.update(status="ok", matches_reference=False, message=str(exc)[:2000])
        file = f"{name}.npz"
        save_golden(out_dir / file, case, inputs, outputs)
        rec["file"] = file
        print(f"{name:45s} {'matches' if rec['matches_reference'] else 'DIFFERS from'} reference", flush=True)
        _write_manifest(out_dir, manifest)
    return manifest


def _write_manifest(out_dir: Path, manifest: dict) -> None:
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Command line: record goldens into --out (optionally bundled into golden.tar)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="folder for the fixtures and manifest.json")
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu with TRITON_INTERPRET=1")
    parser.add_argument("--bundle", action="store_true", help="pack the .npz files into golden.tar")
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp()) if args.bundle else args.out
    manifest = record(work, args.device, args.cases)
    _write_manifest(work, manifest)
    if args.bundle:
        with tarfile.open(args.out / "golden.tar", "w") as tar:
            for path in sorted(work.iterdir()):
                tar.add(path, arcname=path.name)
        (args.out / "manifest.json").write_text((work / "manifest.json").read_text())
    size = sum(p.stat().st_size for p in work.glob("*.npz"))
    bad = [n for n, r in manifest["cases"].items() if r.get("status") == "error"]
    differ = [n for n, r in manifest["cases"].items() if r.get("matches_reference") is False]
    print(
        f"{len(manifest['cases'])} cases, {size / 2**20:.2f} MiB of fixtures; errors: {bad}; differ: {differ}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
