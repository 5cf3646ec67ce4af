"""Our engine against outputs recorded on a real GPU (``benchmarks/gpu_golden.py``, H200).

The numerics contract: cases tagged ``exact`` (integer ops, casts, rand/randint, add/mul/fma,
div_rn/sqrt_rn, data movement, order-free atomics) must match the GPU bit for bit; every other case
within twice its reference tolerance (both the GPU and the engine may sit at the far edge of the
band around the float64 reference: transcendental approximations, accumulation order, fp8 and fp16
accumulators).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tilescope
from conformance.case import all_cases, check_outputs, compare, golden_tolerance, launch_inputs, load_golden

GOLDEN = Path(__file__).resolve().parent / "golden"
_MANIFEST = GOLDEN / "manifest.json"


def _manifest() -> dict:
    return json.loads(_MANIFEST.read_text()) if _MANIFEST.exists() else {"cases": {}}


def _recorded() -> list:
    cases = all_cases()
    return [
        pytest.param(name, id=name)
        for name, rec in sorted(_manifest()["cases"].items())
        if rec.get("file") and name in cases
    ]


@pytest.mark.parametrize("name", _recorded())
def test_engine_matches_gpu_golden(name):
    """The engine, fed the recorded inputs, reproduces the GPU's outputs within the contract."""
    case = all_cases()[name]
    inputs, gpu, _ = load_golden(GOLDEN / _manifest()["cases"][name]["file"])
    outputs = launch_inputs(case, tilescope.trace, inputs)
    for out in case.outputs:
        compare(f"{name}.{out}", outputs[out], gpu[out], golden_tolerance(case, out), what="GPU golden")


@pytest.mark.parametrize("name", _recorded())
def test_golden_agrees_with_manifest_verdict(name):
    """Re-judging the stored GPU outputs against today's reference gives the manifest's verdict,
    so neither a reference nor a fixture can drift unnoticed."""
    rec = _manifest()["cases"][name]
    case = all_cases()[name]
    inputs, gpu, meta = load_golden(GOLDEN / rec["file"])
    assert meta["case"] == name
    try:
        check_outputs(case, inputs, gpu)
        verdict = True
    except AssertionError:
        verdict = False
    assert verdict == rec["matches_reference"], rec.get("message", "")


def test_manifest_names_the_gpu_and_versions():
    """The fixtures say where they came from: GPU, driver, Triton, torch and date."""
    assert _MANIFEST.exists(), "no GPU goldens: run benchmarks/gpu_golden.py on the device"
    m = _manifest()
    for key in ("gpu", "driver", "triton", "torch", "date"):
        assert m.get(key), key
    assert not m["interpreter"]
    size = sum(p.stat().st_size for p in GOLDEN.glob("*.npz"))
    assert size < 8 * 2**20, f"fixtures take {size} bytes"
