"""The corpus checked by Triton's own interpreter: every case against its float64 reference.

Each case runs under ``TRITON_INTERPRET=1`` in a subprocess (the variable must be set before
``import triton``), so the suite's kernels, inputs and references are known to agree independently
of our engine. Where the interpreter itself is wrong, the case is an expected failure with the
reason: that list is the evidence for what our engine fixes.

Run directly for a quick look:
``PYTHONPATH=tests python tests/conformance/test_interpreter_oracle.py [names]``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import pytest

from conformance.case import all_cases, check_outputs, run_case

# Cases Triton 3.9's interpreter computes wrongly (strict: a fixed interpreter fails the test, so
# the list stays true). Each reason names what the interpreter does.
_BF16_STORE = (
    "fp32 -> bf16 conversion truncates (rounds toward zero) instead of rounding to nearest even, "
    "so bf16 outputs are off by up to one bf16 ulp"
)
EXPECTED_FAILURES: dict[str, str] = {
    "lowp_arith": "bf16 add/sub/mul are computed on the raw 16-bit patterns (1.0 + 1.0 gives 1.7e38)",
    "matmul_bf16": "tl.dot on bf16 operands multiplies the raw 16-bit patterns (results ~1e10 off)",
    "matmul_tf32": "input_precision='tf32' is ignored: the dot is computed in full fp32 (ieee)",
    "swiglu": _BF16_STORE,
    "rmsnorm_fwd": _BF16_STORE,
    "cast_fp32_to_fp16_bf16": _BF16_STORE + "; fp32 -> fp16 with rtz gives NaN instead of 65504 on overflow",
    "cast_to_fp8_saturating": (
        "fp32/fp16/bf16 -> fp8 conversions are wrong: no saturation (NaN/inf instead of 448/57344) and "
        "wrong rounding (e.g. 500 -> 256 in e4m3)"
    ),
    "cast_fp8_upcast": "fp8e5m2 -> fp16 flushes or shifts subnormal values (e.g. 1.5e-5 -> 0)",
    "cast_float_int_saturate": (
        "out-of-range fp32 -> int32 follows NumPy (INT_MIN) instead of the GPU's saturating cvt.rzi "
        "(NaN -> 0)"
    ),
    "libdevice_functions": (
        "tl.extra libdevice functions are stubs the interpreter cannot run (they return None)"
    ),
    "autotune_reset_to_zero": (
        "@triton.autotune benchmarks through the active GPU driver: RuntimeError '0 active drivers' on a CPU"
    ),
}

_HERE = Path(__file__).resolve().parent
_TIMEOUT_S = 3600


def _identity(kernel):
    return kernel


def main(names: list[str]) -> int:
    """Run the named cases (all when empty) in this process; print one JSON line per case."""
    import triton

    cases = all_cases()
    for name in names or list(cases):
        case = cases[name]
        start = time.perf_counter()
        skip = case.skip_reason(triton.__version__)
        if skip:
            status, message = "skip", skip
        else:
            try:
                inputs, outputs = run_case(case, _identity)
                check_outputs(case, inputs, outputs)
                status, message = "pass", ""
            except AssertionError as exc:
                status, message = "fail", str(exc)[:3000]
            except Exception as exc:  # noqa: BLE001 - report any kernel error as data
                status, message = "error", "".join(traceback.format_exception_only(exc))[-3000:]
        seconds = time.perf_counter() - start
        print(
            json.dumps({"name": name, "status": status, "message": message, "seconds": seconds}), flush=True
        )
    return 0


def run_interpreted(names: list[str]) -> dict[str, dict]:
    """Results by case name from subprocesses under TRITON_INTERPRET=1; a crash costs one case."""
    env = dict(
        os.environ,
        TRITON_INTERPRET="1",
        PYTHONPATH=os.pathsep.join([str(_HERE.parent), *filter(None, [os.environ.get("PYTHONPATH")])]),
    )
    results: dict[str, dict] = {}
    todo = list(names)
    while todo:
        proc = subprocess.run(
            [sys.executable, str(Path(__file__)), *todo],
            env=env,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
        )
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                rec = json.loads(line)
                results[rec["name"]] = rec
        todo = [n for n in todo if n not in results]
        if todo:  # the process died inside todo[0]
            results[todo[0]] = {
                "name": todo[0],
                "status": "crash",
                "message": f"exit {proc.returncode}: {proc.stderr[-2000:]}",
                "seconds": 0.0,
            }
            todo = todo[1:]
    return results


_RESULTS: dict[str, dict] = {}


def _result(name: str) -> dict:
    if not _RESULTS:
        _RESULTS.update(run_interpreted(list(all_cases())))
    return _RESULTS[name]


def _params():
    for name in all_cases():
        marks = [pytest.mark.slow]
        if name in EXPECTED_FAILURES:
            marks.append(pytest.mark.xfail(reason=EXPECTED_FAILURES[name], strict=True))
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", list(_params()))
def test_case_matches_reference_under_interpreter(name):
    """Triton's interpreter reproduces the case's float64 reference within its tolerance."""
    rec = _result(name)
    if rec["status"] == "skip":
        pytest.skip(rec["message"])
    assert rec["status"] == "pass", f"{rec['status']}: {rec['message']}"


def test_expected_failures_name_real_cases():
    """Every expected-failure entry names a registered case."""
    assert set(EXPECTED_FAILURES) <= set(all_cases())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
