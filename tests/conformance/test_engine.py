"""Every conformance case on our engine, against its float64 reference.

Each case launches through ``tilescope.trace`` on fresh (seeded) random inputs; outputs must match
the reference within the case's dtype-justified tolerance and hold no leftover poison.
``CONFORMANCE_SEED=<int>`` draws other inputs.
"""

from __future__ import annotations

import pytest
import triton

import tilescope
from conformance.case import all_cases, check_outputs, run_case


def _params():
    for name, case in all_cases().items():
        marks = [pytest.mark.slow] if "slow" in case.tags else []
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", list(_params()))
def test_case_matches_reference_on_engine(name):
    """The engine reproduces the case's float64 reference within tolerance, writing every output."""
    case = all_cases()[name]
    reason = case.skip_reason(triton.__version__)
    if reason:
        pytest.skip(reason)
    inputs, outputs = run_case(case, tilescope.trace)
    check_outputs(case, inputs, outputs)


def test_registry_has_the_promised_breadth():
    """At least 45 cases, and no case feeds a kernel an all-zero float input (which hides
    multiply-by-zero and wrong-operand bugs)."""
    import numpy as np

    from conformance.case import case_seed

    cases = all_cases()
    assert len(cases) >= 45
    for name, case in cases.items():
        inputs = case.make_inputs(np.random.default_rng(case_seed(name)))
        for key, value in inputs.items():
            if isinstance(value, np.ndarray) and key not in case.outputs and value.dtype.kind == "f":
                assert np.any(value.astype(np.float64) != 0), f"{name}.{key} is all zero"
