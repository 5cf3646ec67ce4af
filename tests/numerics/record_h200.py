"""Record the numerics goldens on a GPU: every case of ``kernels.py``, its inputs and outputs.

Self-contained (NumPy, torch, Triton): runs on the H200 through the ``device`` tool, writing to
``$OUT`` one ``goldens.tar`` of ``<case>.npz`` files (arrays as raw bits: ``in.<arg>`` and
``out.<arg>``, ``__meta__`` a JSON string with each array's torch dtype) plus ``manifest.json``
(GPU, driver, versions, date) and ``asm.tar`` (TTGIR and PTX of every compiled case, for reading
which layouts and instructions the compiler chose). Unpack ``goldens.tar`` into
``tests/numerics/golden/``. ``--check`` reruns the committed goldens (determinism, and the
fp-fusion knob under ``TRITON_DEFAULT_FP_FUSION=0``).

    python tests/numerics/record_h200.py --out $OUT
    python tests/numerics/record_h200.py --out $OUT --check
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import traceback
import zlib
from pathlib import Path

import numpy as np
import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernels  # noqa: E402

_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def bits(t: torch.Tensor) -> np.ndarray:
    """The tensor's raw bits as an unsigned NumPy array of the same width."""
    t = t.detach().cpu().contiguous()
    raw = t.view(_BITS[t.element_size()]).numpy()
    return raw.view(np.dtype(f"uint{8 * t.element_size()}"))


def save(path: Path, case: kernels.Case, inputs: dict, outputs: dict) -> None:
    """One case's inputs and outputs as raw bits, with their dtypes in ``__meta__``."""
    arrays, meta = {}, {"case": case.name, "dtypes": {}}
    for role, values in (("in", inputs), ("out", outputs)):
        for name, t in values.items():
            arrays[f"{role}.{name}"] = bits(t)
            meta["dtypes"][f"{role}.{name}"] = str(t.dtype).removeprefix("torch.")
    arrays["__meta__"] = np.array(json.dumps(meta, sort_keys=True))
    np.savez_compressed(path, **arrays)


def reduce_layout(ttgir: str) -> str | None:
    """The blocked layout of the first ``tt.reduce``'s operand in a TTGIR text (None: no reduce)."""
    m = re.search(r'"tt.reduce"\(%\w+\).*?\}\) : \(tensor<[^,]+, #(\w+)>\)', ttgir, re.S)
    if m is None:
        return None
    found = re.search(rf"^#{m.group(1)} = #ttg.blocked<\{{(.*?)\}}>", ttgir, re.M)
    return found.group(1) if found else None


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def check(out: Path) -> dict:
    """Rerun every committed golden on its recorded inputs, twice: is the GPU's result the recorded
    one, bit for bit, and the same on a repeat (deterministic)? Also records ``fma_fp32_default``
    compiled under ``TRITON_DEFAULT_FP_FUSION=0`` as the golden ``fma_fp32_knob_off``."""
    import goldens

    report = {}
    for name in goldens.manifest()["cases"]:
        case = kernels.CASES[name]
        inputs, recorded = goldens.load(name)
        runs = []
        for _ in range(2):
            tensors = {
                **{k: v.cuda() for k, v in inputs.items()},
                **{k: torch.zeros_like(v).cuda() for k, v in recorded.items()},
            }
            case.launch(lambda k: k, tensors)
            torch.cuda.synchronize()
            runs.append({k: bits(tensors[k]) for k in recorded})
        report[name] = {
            "matches_golden": all(np.array_equal(runs[0][k], bits(v)) for k, v in recorded.items()),
            "repeat_identical": all(np.array_equal(runs[0][k], runs[1][k]) for k in recorded),
        }
        print(name, report[name], flush=True)
    env = {**os.environ, "TRITON_DEFAULT_FP_FUSION": "0", "TRITON_CACHE_DIR": str(out / "cache-knob")}
    subprocess.run([sys.executable, __file__, "--knob-off", str(out)], env=env, check=True)
    return report


def _knob_off(out: Path) -> None:
    """``fma_fp32_default`` on its recorded inputs, compiled with this process's fp-fusion knob."""
    import goldens

    case = kernels.CASES["fma_fp32_default"]
    inputs, recorded = goldens.load("fma_fp32_default")
    tensors = {
        **{k: v.cuda() for k, v in inputs.items()},
        **{k: torch.zeros_like(v).cuda() for k, v in recorded.items()},
    }
    case.launch(lambda k: k, tensors)
    torch.cuda.synchronize()
    knob = kernels.Case("fma_fp32_knob_off", case.kernel, case.make_inputs, case.grid, case.outputs)
    save(out / "fma_fp32_knob_off.npz", knob, inputs, {k: tensors[k] for k in case.outputs})


def main(argv: list[str] | None = None) -> int:
    """Command line: record every case (or the named ones) into --out; or --check the committed ones."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--check", action="store_true", help="rerun the committed goldens (check.json)")
    parser.add_argument("--knob-off", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args(argv)
    if args.knob_off:
        _knob_off(args.knob_off)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    if args.check:
        (args.out / "check.json").write_text(json.dumps(check(args.out), indent=1, sort_keys=True) + "\n")
        return 0
    driver = subprocess.run(
        ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True
    ).stdout.strip()
    manifest = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(),
        "capability": list(torch.cuda.get_device_capability()),
        "driver": driver,
        "triton": triton.__version__,
        "torch": torch.__version__,
        "cases": {},
    }
    work = args.out / "work"
    work.mkdir(exist_ok=True)
    asm = tarfile.open(args.out / "asm.tar", "w")
    for name in args.cases or list(kernels.CASES):
        case = kernels.CASES[name]
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        inputs = case.make_inputs(rng)
        tensors = {k: v.cuda() for k, v in inputs.items()}
        try:
            compiled = case.launch(lambda k: k, tensors)
            torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - one broken case must not lose the others
            manifest["cases"][name] = {
                "status": "error",
                "message": "".join(traceback.format_exception(exc))[-3000:],
            }
            print(f"{name:50s} ERROR {exc}", flush=True)
            continue
        outputs = {k: tensors[k] for k in case.outputs}
        save(work / f"{name}.npz", case, {k: v for k, v in inputs.items() if k not in case.outputs}, outputs)
        for stage in ("ttgir", "llir", "ptx"):
            text = compiled.asm.get(stage)
            if isinstance(text, str):
                _add(asm, f"{name}.{stage}", text.encode())
        manifest["cases"][name] = {
            "status": "ok",
            "file": f"{name}.npz",
            "item": case.item,
            "options": case.options,
        }
        layout = reduce_layout(compiled.asm.get("ttgir") or "")
        if layout:  # the layout the reduction's order follows, as the GPU's compiler chose it
            manifest["cases"][name]["reduce_layout"] = layout
        print(f"{name:50s} ok", flush=True)
    asm.close()
    with tarfile.open(args.out / "goldens.tar", "w") as tar:
        for path in sorted(work.glob("*.npz")):
            tar.add(path, arcname=path.name)
        _add(tar, "manifest.json", (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode())
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    for path in work.glob("*.npz"):
        path.unlink()
    work.rmdir()
    bad = [n for n, r in manifest["cases"].items() if r["status"] != "ok"]
    print(f"{len(manifest['cases'])} cases recorded; errors: {bad}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
