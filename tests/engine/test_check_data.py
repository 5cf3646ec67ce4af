"""The stored first-use checks of the C kernels are what the NumPy paths give now, and the checks
reject a kernel whose bits differ."""

from __future__ import annotations

import numpy as np
import pytest

from tests.engine.make_check_data import CHECKS
from tilescope.engine import clib, fma_chain, sfu


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_the_stored_check_is_the_numpy_paths_bits(name):
    """Inputs and expected bits as stored equal a fresh run (else: tests/engine/make_check_data.py)."""
    stored, fresh = clib.check_data(name), CHECKS[name]()
    assert sorted(stored) == sorted(fresh)
    for key, value in fresh.items():
        same = clib.same_bits if value.dtype == np.float32 else np.array_equal
        assert stored[key].dtype == value.dtype and same(stored[key], value), key


def test_a_chain_off_by_one_ulp_somewhere_fails_its_check(monkeypatch):
    """One output of one case a unit in the last place off: the C chain is not used."""

    def off(lib, a, b, acc):
        out = fma_chain.numpy_chain(a, b, acc)
        if out.size:
            out.view(np.uint32).flat[out.size // 2] ^= 1
        return out

    monkeypatch.setattr(fma_chain, "_compiled_chain", off)
    assert not fma_chain._agrees(None)


@pytest.mark.parametrize("op", sorted(sfu._NUMPY))
def test_an_instruction_off_by_one_ulp_fails_only_its_own_check(op, monkeypatch):
    """An instruction's C kernel one ulp off on one input: its check fails, the others' pass."""

    def compiled(lib, name, x):
        out = sfu._NUMPY[name](x)
        if name == op:
            out.view(np.uint32)[len(out) // 3] ^= 1
        return out

    monkeypatch.setattr(sfu, "_compiled", compiled)
    assert not sfu._agrees(None, (op,))
    assert sfu._agrees(None, tuple(n for n in sfu._NUMPY if n != op))
