"""Run the kernels of a module file on inputs from .npz files; write every array back to .npz.

Runs in a child process: under Triton 3.8 for the original kernels, under Triton 3.9 (or our engine)
for migrated ones. Needs only numpy, torch and triton, so it works in the oracle environment.

A kernel module follows the launch protocol (docs/migrate.md): ``cases()`` lists shape dicts,
``make_inputs(rng, **shape)`` gives numpy arrays, ``launch(kernels, arrays, **shape)`` launches with
torch tensors, ``reference(arrays, **shape)`` gives float64 expected outputs.

Usage: ``python -m tilescope.migrate.runner JOB.json``; the job lists
``{"module": path, "shape": {...}, "inputs": npz, "outputs": npz}`` entries and ``"engine"``
(``"interpreter"`` or ``"tilescope"``); a result JSON is written next to the job.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
import traceback
import types
from pathlib import Path
from typing import Any


def load_module(path: str | Path, name: str | None = None) -> types.ModuleType:
    """Import the Python file at ``path`` under a unique module name and return it."""
    path = Path(path).resolve()
    name = name or f"_tilescope_kernels_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def kernels_of(module: types.ModuleType, engine: str) -> types.SimpleNamespace:
    """Return the module's Triton kernels by name, wrapped by ``tilescope.trace`` when ``engine`` says so."""
    from triton.runtime.jit import KernelInterface

    found = {name: value for name, value in vars(module).items() if isinstance(value, KernelInterface)}
    if engine == "tilescope":
        import tilescope

        found = {name: tilescope.trace(fn) for name, fn in found.items()}
    return types.SimpleNamespace(**found)


def run_case(
    module: types.ModuleType,
    kernels: types.SimpleNamespace,
    shape: dict[str, Any],
    inputs: Path,
    outputs: Path,
) -> None:
    """Launch one case: arrays from ``inputs``, every array after the launch to ``outputs``."""
    import numpy as np
    import torch

    with np.load(inputs, allow_pickle=False) as data:
        arrays = {name: torch.from_numpy(np.ascontiguousarray(data[name])) for name in data.files}
    module.launch(kernels, arrays, **shape)
    np.savez(outputs, **{name: tensor.numpy() for name, tensor in arrays.items()})


def main(argv: list[str]) -> int:
    """Run the job file named in ``argv[0]``; return 0 even when cases fail (the results say how)."""
    job_path = Path(argv[0])
    job = json.loads(job_path.read_text())
    results = []
    modules: dict[str, tuple[types.ModuleType, types.SimpleNamespace]] = {}
    for entry in job["cases"]:
        start = time.perf_counter()
        try:
            if entry["module"] not in modules:
                module = load_module(entry["module"])
                modules[entry["module"]] = (module, kernels_of(module, job["engine"]))
            module, kernels = modules[entry["module"]]
            run_case(module, kernels, entry["shape"], Path(entry["inputs"]), Path(entry["outputs"]))
            results.append({"ok": True, "error": "", "seconds": time.perf_counter() - start})
        except Exception as exc:  # one broken case must not hide the others' results
            detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
            results.append(
                {
                    "ok": False,
                    "error": detail,
                    "trace": traceback.format_exc(limit=-6),
                    "seconds": time.perf_counter() - start,
                }
            )
    job_path.with_suffix(".result.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
