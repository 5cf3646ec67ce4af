"""Record the Gluon conformance kernels' outputs on a GPU (the H200 golden run).

Run on the GPU machine from the repository root::

    python -m tests.frontends.gluon.golden OUT_DIR

It writes ``gluon_h200.npz`` (each case's output, float32) and ``gluon_h200.json`` (the Triton and
torch versions, the device, the Gluon names this Triton has, and any case that failed) into
``OUT_DIR``. ``test_golden.py`` compares the engine's outputs with the recorded ones.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import numpy as np
import torch
import triton


def main(out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    meta: dict = {"triton": triton.__version__, "torch": torch.__version__,
                  "device": torch.cuda.get_device_name(), "errors": {}}  # fmt: skip
    outputs: dict[str, np.ndarray] = {}
    try:
        from triton.experimental.gluon.language.nvidia.hopper import tma

        from tests.frontends.gluon.cases import SEED, cases

        meta["tma"] = sorted(n for n in dir(tma) if not n.startswith("_"))
        for name, launch, expected, rtol, atol in cases(torch.Generator().manual_seed(SEED), device="cuda"):
            try:
                got = launch(lambda kernel: kernel).float().cpu().numpy()
                torch.cuda.synchronize()
                outputs[name] = got
                err = np.abs(got.astype(np.float64) - expected)
                meta.setdefault("max_abs_error_vs_float64", {})[name] = float(err.max())
                ok = np.allclose(got, expected, rtol=rtol, atol=atol)
                meta.setdefault("within_cpu_tolerance", {})[name] = bool(ok)
            except Exception:  # noqa: BLE001 - record every case's failure and go on
                meta["errors"][name] = traceback.format_exc(limit=4)
    except Exception:  # noqa: BLE001 - an import failure on this Triton: record it
        meta["errors"]["import"] = traceback.format_exc()
    np.savez_compressed(out / "gluon_h200.npz", **outputs)
    (out / "gluon_h200.json").write_text(json.dumps(meta, indent=1))
    print(json.dumps({k: v for k, v in meta.items() if k != "tma"}, indent=1)[:6000])


if __name__ == "__main__":
    main(sys.argv[1])
