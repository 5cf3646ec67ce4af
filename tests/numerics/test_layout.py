"""The reduction layout the engine assumes is the one the GPU's compiler chose: checked against the
TTGIR the H200's Triton compiled for the goldens (in the manifest) and, ``-m slow``, against an
offline sm_90a compile with the installed Triton."""

from __future__ import annotations

import re

import pytest

from tilescope.blast import resources
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


_LAYOUTS = {
    n: rec["reduce_layout"] for n, rec in goldens.manifest()["cases"].items() if "reduce_layout" in rec
}
#: blocks read down their columns: the compiler's layout is not the row-major rule's
_COLUMNS = sorted(n for n in _LAYOUTS if n.startswith("sum2dcols_"))
_RECORDED = sorted(n for n in _LAYOUTS if n not in _COLUMNS)


def test_some_layouts_were_recorded():
    """Every reduction golden came with its compiled layout."""
    assert len(_RECORDED) >= 30


@pytest.mark.parametrize("name", _RECORDED)
def test_layout_matches_the_h200_compile(name):
    """Elements per thread, lanes and warps per dimension are those of the H200's TTGIR."""
    assert _modelled(name) == _parse(goldens.manifest()["cases"][name]["reduce_layout"])


def _offline(name: str) -> layout.Blocked:
    """The layout an sm_90a compile with the installed Triton gives the case's reduction."""
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
    (found,) = resources.reduce_layouts(compiled.asm["ttgir"])
    return layout.Blocked(
        *(tuple(found[k]) for k in ("size_per_thread", "threads_per_warp", "warps_per_cta"))
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", _RECORDED)
def test_layout_matches_an_offline_sm90_compile(name):
    """The installed Triton, compiling the same kernel for sm_90a on the CPU, picks the same layout."""
    assert _modelled(name) == _offline(name)


@pytest.mark.parametrize("name", _COLUMNS)
def test_offline_compile_gives_the_h200_layout_where_the_rule_does_not(name):
    """For blocks read down their columns the rule's layout is not the H200's, the offline compile's
    (what ``gpu_layouts="compiled"`` reads) is."""
    h200 = _parse(_LAYOUTS[name])
    assert _modelled(name) != h200
    assert _offline(name) == h200
