"""The Gluon conformance kernels against what an H200 computed (Triton 3.6; ``golden.py`` recorded it).

The H200 is the truth for numerics. The engine follows the recording's release (``gpu_compiler="3.6"``:
its within-thread order of a sum), takes the approximate instructions from the tables recorded on the
H200 (``gpu_sfu="tables"``) and adds each ``gl.sum`` in the order of the layout the kernel states
(the ``block_sum`` cases: layouts whose order differs from Triton's coalescing rule, in bf16, fp16 and
fp32; each differed from the H200 before the engine read the stated layout). Every case is
bit-identical: layer norm too, since ``sqrt.approx`` and ``div.full`` follow the tables recorded on the
H200 (it was 527 ulp off on elements near zero), and softmax (4 ulp off, then 1: its padding rows
divide NaN by NaN, which made the whole block's division fall back to the correctly rounded one
until ``div.full`` went element by element). The warp-specialised cases have no golden:
Triton 3.6's ``gl.warp_specialize`` takes another signature (the JSON file records the failure).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import tilescope
from tests.frontends.gluon.cases import SEED, cases

HERE = Path(__file__).parent
GOLDEN = np.load(HERE / "gluon_h200.npz")
META = json.loads((HERE / "gluon_h200.json").read_text())


def test_the_golden_run_is_an_h200_with_triton_3_6():
    assert META["device"] == "NVIDIA H200" and META["triton"].startswith("3.6")
    assert set(META["errors"]) >= {f"add_warp_specialized[{n}]" for n in (1, 2, 3)}


@pytest.mark.parametrize("name", sorted(GOLDEN.files))
def test_engine_gives_the_h200_bits(name):
    _, launch, _, _, _ = next(c for c in cases(torch.Generator().manual_seed(SEED)) if c[0] == name)
    options = {"gpu_compiler": META["triton"][:3], "gpu_sfu": "tables"}
    got = launch(lambda kernel: tilescope.trace(kernel, **options)).float().numpy()
    gpu = GOLDEN[name]
    assert got.shape == gpu.shape
    np.testing.assert_array_equal(got.view(np.int32), gpu.view(np.int32))
