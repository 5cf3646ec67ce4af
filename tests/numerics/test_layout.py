"""The reduction layout the engine assumes is the one the GPU's compiler chose: checked against the
TTGIR the H200's Triton compiled for the goldens (in the manifest) and, ``-m slow``, against an
offline sm_90a compile with the installed Triton."""

from __future__ import annotations

import re

import pytest

from tilescope.engine import layout

from . import goldens, kernels

_BITS = {"float32": 32, "bfloat16": 16, "float16": 16}


def _parse(text: str) -> layout.Blocked:
    """A TTGIR ``#ttg.blocked<{...}>`` body as a Blocked layout."""
    field = {
        k: tuple(int(v) for v in vals.split(",")) for k, vals in re.findall(r"(\w+) = \[([\d, ]+)\]", text)
    }
    return layout.Blocked(field["sizePerThread"], field["threadsPerWarp"], field["warpsPerCTA"])


def _modelled(name: str) -> layout.Blocked:
    case = kernels.CASES[name]
    inputs, _ = goldens.load(name)
    c = case.constexprs
    shape = (c["R"], c["C"]) if "R" in c else (c["BLOCK"],)
    return layout.coalesced(
        shape, _BITS[str(inputs["x_ptr"].dtype).removeprefix("torch.")], case.options["num_warps"]
    )


_RECORDED = sorted(n for n, rec in goldens.manifest()["cases"].items() if "reduce_layout" in rec)


def test_some_layouts_were_recorded():
    """Every reduction golden came with its compiled layout."""
    assert len(_RECORDED) >= 30


@pytest.mark.parametrize("name", _RECORDED)
def test_layout_matches_the_h200_compile(name):
    """Elements per thread, lanes and warps per dimension are those of the H200's TTGIR."""
    assert _modelled(name) == _parse(goldens.manifest()["cases"][name]["reduce_layout"])


@pytest.mark.slow
@pytest.mark.parametrize("name", _RECORDED)
def test_layout_matches_an_offline_sm90_compile(name):
    """The installed Triton, compiling the same kernel for sm_90a on the CPU, picks the same layout."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    case = kernels.CASES[name]
    inputs, outputs = goldens.load(name)
    ptr = {"float32": "*fp32", "bfloat16": "*bf16", "float16": "*fp16"}
    tensors = {**inputs, **outputs}
    names = case.kernel.arg_names
    sig = {
        n: ptr[str(tensors[n].dtype).removeprefix("torch.")] if n in tensors else "constexpr" for n in names
    }
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in names if n in tensors}
    src = ASTSource(case.kernel, sig, dict(case.constexprs), attrs)
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(case.options))
    from .record_h200 import reduce_layout

    assert _modelled(name) == _parse(reduce_layout(compiled.asm["ttgir"]))
