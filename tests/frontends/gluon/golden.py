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
        meta["bugs"] = bugs()
    except Exception:  # noqa: BLE001 - an import failure on this Triton: record it
        meta["errors"]["import"] = traceback.format_exc()
    np.savez_compressed(out / "gluon_h200.npz", **outputs)
    (out / "gluon_h200.json").write_text(json.dumps(meta, indent=1))
    print(json.dumps({k: v for k, v in meta.items() if k != "tma"}, indent=1)[:6000])


def bugs() -> dict[str, str]:
    """What the GPU does with each kernel of ``buggy.py``: Triton's compile error, or what it computed."""
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    from tests.frontends.gluon import buggy

    def desc(t, block):
        layout = gl.NVMMASharedLayout.get_default_for(block, gl.float32)
        return TensorDescriptor(t, t.shape, t.stride(), block, layout)

    cuda = torch.device("cuda")
    x, y = torch.randn(1000, device=cuda), torch.empty(1000, device=cuda)
    rows = torch.randn(64, 256, device=cuda)
    row_sums = torch.empty(64, device=cuda)
    m, m_out = torch.randn(256, device=cuda), torch.zeros(256, device=cuda)
    a, b, c = (
        torch.randn(64, 128, device=cuda),
        torch.randn(64, 128, device=cuda),
        torch.empty(64, 128, device=cuda),
    )
    runs = {
        "scale_mask_off_by_one": lambda: buggy.scale_mask_off_by_one[(2,)](x, y, 1000, 2.0, 512),
        "row_sum_ring_overrun": lambda: buggy.row_sum_ring_overrun[(1,)](
            desc(rows, [64, 64]), row_sums, 256, 64, 64, 2
        ),
        "memcpy_without_wait": lambda: buggy.memcpy_without_wait[(4,)](desc(m, [64]), desc(m_out, [64]), 64),
        "bias_add_layout_mismatch": lambda: buggy.bias_add_layout_mismatch[(2,)](
            torch.randn(32, 64, device=cuda),
            torch.randn(64, device=cuda),
            torch.empty(32, 64, device=cuda),
            64,
            16,
        ),
        "copy_two_warp_layout": lambda: buggy.copy_two_warp_layout[(2,)](
            x[: 1024 - 24].clone(), y.clone(), 512
        ),
        "add_too_much_shared": lambda: buggy.add_too_much_shared[(1,)](
            *(desc(t, [64, 128]) for t in (a, b, c)), 64, 128, 4
        ),
    }
    seen = {}
    for name, run in runs.items():
        try:
            run()
            torch.cuda.synchronize()
            seen[name] = "ran"
        except Exception as exc:  # noqa: BLE001 - the compile error is what is recorded
            seen[name] = f"{type(exc).__name__}: {str(exc)[:600]}"
    seen["memcpy_without_wait copied"] = str(bool(torch.equal(m, m_out)))
    rows_ref = rows.sum(1)
    seen["row_sum_ring_overrun max error"] = str(float((row_sums - rows_ref).abs().max()))
    return seen


if __name__ == "__main__":
    main(sys.argv[1])
