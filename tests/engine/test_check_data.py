"""The stored first-use checks of the C kernels are what the NumPy paths give now, and the checks
reject a kernel whose bits differ."""

from __future__ import annotations

import numpy as np
import pytest

from tests.engine.make_check_data import CHECKS
from tilescope.engine import clib, fma_chain, sfu, tree_sum
from tilescope.engine import numerics as nx


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


def test_a_tree_sum_off_by_one_ulp_somewhere_fails_its_check(monkeypatch):
    """One row's sum of one case a unit in the last place off: the C tree is not used."""

    def off(lib, x, bits):
        out = tree_sum.numpy_fold(x, bits)
        if out.size:
            out.view(np.uint32)[out.size // 2] ^= 1
        return out

    monkeypatch.setattr(tree_sum, "_compiled_fold", off)
    assert not tree_sum._agrees(None)
    monkeypatch.setattr(tree_sum, "_compiled_fold", lambda lib, x, bits: tree_sum.numpy_fold(x, bits))
    assert tree_sum._agrees(None)


def test_an_addcmul_that_rounds_twice_fails_the_hardware_fma_check(monkeypatch):
    """torch whose addcmul rounds the product first: the engine keeps its NumPy FMA."""
    torch = pytest.importorskip("torch")
    nx.hardware_fma.cache_clear()
    try:
        assert nx.hardware_fma() is torch  # (this machine's torch rounds once)
        nx.hardware_fma.cache_clear()
        monkeypatch.setattr(torch, "addcmul", lambda c, a, b: c + a * b)
        assert nx.hardware_fma() is None
    finally:
        monkeypatch.undo()
        nx.hardware_fma.cache_clear()
