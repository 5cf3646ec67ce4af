"""The accuracy check: what passes, what fails, and that unwritten outputs never pass."""

from __future__ import annotations

import math

import pytest
import torch

from tilescope.bench.accuracy import poison, relative_error


def test_relative_error_of_floats() -> None:
    ref = torch.ones(100, dtype=torch.float64)
    assert relative_error(ref.float(), ref) == 0.0
    assert relative_error((ref * 1.01).float(), ref) == pytest.approx(0.01, rel=1e-5)


def test_nan_and_shape_mismatch_are_infinite() -> None:
    ref = torch.ones(4, dtype=torch.float64)
    out = torch.ones(4)
    out[2] = math.nan
    assert relative_error(out, ref) == math.inf
    assert relative_error(torch.ones(5), ref) == math.inf


def test_integer_outputs_count_mismatches_and_tuples_take_the_worst() -> None:
    idx = torch.tensor([1, 2, 3, 4], dtype=torch.int32)
    assert relative_error(torch.tensor([1, 2, 0, 4], dtype=torch.int32), idx.long()) == 0.25
    w = torch.ones(4)
    assert relative_error((w, torch.tensor([1, 2, 0, 4])), (w.double(), idx)) == 0.25


def test_poison_fills_only_outputs() -> None:
    inp = {"x": torch.zeros(3), "out": torch.zeros(3), "out_idx": torch.zeros(3, dtype=torch.int32)}
    poison(inp)
    assert bool(inp["x"].eq(0).all()) and bool(inp["out"].isnan().all()) and bool(inp["out_idx"].eq(-1).all())
    assert relative_error(inp["out"], torch.zeros(3, dtype=torch.float64)) == math.inf
