"""The engine against outputs recorded on an H200 (``record_h200.py``, Triton 3.6): bit for bit where
the GPU's result is deterministic and the engine models it, else within the bound that
``docs/numerics.md`` states for the operation (in ulps of the output's dtype, over the significant
elements: those at least 2**-8 of the output's largest magnitude, since a result that cancels to
near zero has no meaningful ulp count).
"""

from __future__ import annotations

import re

import pytest
import torch

import tilescope
from tilescope.engine.numerics import DEFAULT_SFU

from . import goldens, kernels
from .goldens import max_ulps

#: (case-name pattern, output pattern) -> ulp bound; first match wins; 0 means bit-identical (the
#: approximate instructions' bounds are the gpu_sfu="model" ones: see SFU_EXACT)
BOUNDS: list[tuple[str, str, int]] = [
    (r"^fma_|^sum|^dotsum_", ".*", 0),
    (r"^dot_|^dotacc_", ".*", 0),  # tensor-core model (tf32, fp16, bf16, fp8; fp16 acc), ieee FMA chain
    (r"^math_", r"^div_rn_", 0),
    (r"^math_(bf16|fp16)_", ".*", 1),  # fp32 results rounded to 8/11 bits: an fp32 ulp rarely shows
    (r"^math_fp32_", r"^(exp|exp2|div|fdiv)_", 2),  # ex2.approx, div.full: 2 ulp
    (r"^math_fp32_", r"^sigmoid_", 3),  # 1 / (1 + ex2.approx(-x * log2 e)) with div.full
    (r"^math_fp32_", r"^(sin|cos|log|log2)_", 0),  # libdevice's sequences, operation for operation
    (r"^math_fp32_", ".*", 1),  # sqrt/rsqrt.approx: 1 ulp
    # libdevice's sequences through ex2.approx (and rcp.approx: tanh) in the models' bounds
    (r"^libdevice_", r"^(erf|expf)_", 1),
    (r"^libdevice_", r"^tanh_", 2),
]
#: fp32 outputs the engine gives bit for bit in the default "gpu" numerics: libdevice's sequences
LIBDEVICE_EXACT = r"^(sin|cos|log|log2)_"
#: outputs of the special function unit's instructions (ex2, sqrt, rsqrt, div.full), which the
#: models give within a bound and the recorded tables bit for bit
SFU_EXACT = r"^(exp|exp2|div|fdiv|sigmoid|sqrt|rsqrt)_"


def bound(case: str, output: str, sfu: str = DEFAULT_SFU) -> int:
    """The ulp bound the contract states for ``output`` of ``case`` with ``gpu_sfu=sfu``."""
    if sfu == "tables" and re.search(r"^(math|libdevice)_", case):
        return 0
    for case_re, out_re, ulps in BOUNDS:
        if re.search(case_re, case) and re.search(out_re, output):
            return ulps
    raise LookupError(f"no numerics bound for {case}.{output}")


def run_engine(name: str, launch_as: str | None = None, **options) -> tuple[dict, dict]:
    """(engine outputs, GPU outputs) of golden ``name`` run on the engine with ``options``
    (``launch_as``: launched as that case, e.g. without its launch options)."""
    case = kernels.CASES[launch_as or name]
    inputs, gpu = goldens.load(name)
    tensors = {**inputs, **{k: v.clone().zero_() for k, v in gpu.items()}}
    case.launch(lambda k: tilescope.trace(k, **options), tensors)
    return {k: tensors[k] for k in case.outputs}, gpu


def differing(got, want) -> int:
    """How many elements differ in their bits (two NaNs are the same: the GPU's payload is its own)."""
    def bits(t):
        return t.contiguous().view({2: torch.int16, 4: torch.int32}[t.element_size()]).numpy()

    both_nan = (got.isnan() & want.isnan()).numpy()
    return int(((bits(got) != bits(want)) & ~both_nan).sum())


#: cases whose reduction layout only a compile tells (blocks read down their columns)
COMPILED_LAYOUT = r"^sum2dcols_"


@pytest.mark.parametrize("name", sorted(goldens.manifest()["cases"]))
def test_engine_reproduces_h200(name):
    """In "gpu" numerics (following the recording's Triton release; the reduction layouts of an
    offline compile where the coalescing rule cannot tell) every output is within its bound."""
    layouts = "compiled" if re.search(COMPILED_LAYOUT, name) else "model"
    got, gpu = run_engine(name, gpu_compiler=goldens.manifest()["triton"], gpu_layouts=layouts)
    for out in gpu:
        assert max_ulps(got[out], gpu[out]) <= bound(name, out), f"{name}.{out}"


@pytest.mark.parametrize(
    "name", sorted(n for n in goldens.manifest()["cases"] if n.startswith(("math_", "libdevice_")))
)
def test_the_recorded_sfu_tables_give_the_h200_bits(name):
    """With ``gpu_sfu="tables"`` the approximate instructions (and fp32 ``/``) and the libdevice
    functions, those calling the special function unit in their sequences too (erf, tanh,
    libdevice's exp), are bit-identical to the H200 on every element, specials, subnormals and huge
    arguments included (the ``_edge`` cases)."""
    got, gpu = run_engine(name, gpu_compiler=goldens.manifest()["triton"], gpu_sfu="tables")
    for out in gpu:
        assert differing(got[out], gpu[out]) == 0, f"{name}.{out}"


@pytest.mark.parametrize("name", sorted(n for n in goldens.manifest()["cases"] if n.startswith("math_fp32")))
def test_libdevice_functions_give_the_h200_bits(name):
    """fp32 sin, cos, log and log2 are libdevice sequences on the GPU; the default numerics run
    them operation for operation: every element bit-identical, Payne-Hanek reductions of arguments
    up to 3e38, subnormals, zeros, infinities and NaN included."""
    got, gpu = run_engine(name, gpu_compiler=goldens.manifest()["triton"])
    for out in (o for o in gpu if re.search(LIBDEVICE_EXACT, o)):
        assert differing(got[out], gpu[out]) == 0, f"{name}.{out}"


def test_the_sfu_model_keeps_its_bound():
    """With ``gpu_sfu="model"`` the approximate instructions are within 1 to 3 ulp of the H200 (the
    default test above runs the default mode, the tables test the other)."""
    for name in (n for n in goldens.manifest()["cases"] if n.startswith(("math_", "libdevice_"))):
        got, gpu = run_engine(name, gpu_compiler=goldens.manifest()["triton"], gpu_sfu="model")
        for out in gpu:
            assert max_ulps(got[out], gpu[out]) <= bound(name, out, "model"), f"{name}.{out}"


def test_the_sfu_model_is_not_the_h200_bits():
    """The model's exp and fp32 ``/`` miss some of the H200's bits (the tables' exactness is not an
    accident of the inputs)."""
    got, gpu = run_engine("math_fp32_wide", gpu_compiler=goldens.manifest()["triton"], gpu_sfu="model")
    assert any(max_ulps(got[out], gpu[out]) > 0 for out in gpu if re.search(SFU_EXACT, out))


@pytest.mark.parametrize(
    "name", sorted(n for n in goldens.manifest()["cases"] if re.search(COMPILED_LAYOUT, n))
)
def test_the_coalescing_rule_misses_column_reads(name):
    """A block read down its columns gets a column-major layout from the compiler; the row-major
    rule adds in another order and misses the H200's bits, so the compiled layout is what matters."""
    got, gpu = run_engine(name, gpu_compiler=goldens.manifest()["triton"])
    assert any(max_ulps(got[out], gpu[out]) > 0 for out in gpu)


_REDUCTIONS = sorted(n for n, rec in goldens.manifest()["cases"].items() if "reduce_layout" in rec)


@pytest.mark.slow
@pytest.mark.parametrize("name", _REDUCTIONS)
def test_compiled_and_modelled_layouts_agree_on_the_goldens(name):
    """With the reductions' layouts read from an offline sm_90a compile, every reduction golden is
    still bit-exact (the compile and the coalescing rule agree where the rule applies)."""
    got, gpu = run_engine(name, gpu_compiler=goldens.manifest()["triton"], gpu_layouts="compiled")
    assert all(max_ulps(got[out], gpu[out]) == 0 for out in gpu)


@pytest.mark.parametrize(
    "name",
    ["fma_fp32_default", "fma_bf16_default", "sum1d_bf16_b1024_w4", "sum2d_fp16_32x256_axis0_w4",
     "dot_fp32_tf32_fp32_k32_b64x64x32_w4", "dotsum_fp32_b1024_w4_fused"],
)  # fmt: skip
def test_ideal_numerics_are_not_the_gpu_bits(name):
    """The "ideal" mode rounds each operation as written, which the H200 does not: the goldens tell
    the modes apart (so the "gpu" mode's agreement is not an accident of the inputs)."""
    got, gpu = run_engine(name, numerics="ideal")
    assert any(max_ulps(got[out], gpu[out]) > 0 for out in gpu)


def test_fp_fusion_follows_the_launch_option_and_the_knob(monkeypatch):
    """enable_fp_fusion=False on the launch turns contraction off; so does TRITON_DEFAULT_FP_FUSION=0
    when the launch does not say."""
    import triton

    plain, unfused_gpu = run_engine("fma_fp32_unfused", launch_as="fma_fp32_default")
    assert any(max_ulps(plain[o], unfused_gpu[o]) > 0 for o in unfused_gpu)  # fusion is on by default
    monkeypatch.setattr(triton.knobs.language, "default_fp_fusion", False)
    off, _ = run_engine("fma_fp32_unfused", launch_as="fma_fp32_default")
    assert all(max_ulps(off[o], unfused_gpu[o]) == 0 for o in unfused_gpu)
    fused, fused_gpu = run_engine("fma_fp32_fused")  # the launch option wins over the knob
    assert all(max_ulps(fused[o], fused_gpu[o]) == 0 for o in fused_gpu)


def test_the_fp_fusion_knob_matches_the_h200_compiled_with_it(monkeypatch):
    """fma_fp32_default's inputs, compiled on the H200 with TRITON_DEFAULT_FP_FUSION=0: the engine
    with the knob off gives those bits, with it on (the default) others."""
    import triton

    case = kernels.CASES["fma_fp32_default"]
    inputs, gpu = goldens.load("fma_fp32_knob_off")

    def run() -> dict:
        tensors = {**inputs, **{k: v.clone().zero_() for k, v in gpu.items()}}
        case.launch(tilescope.trace, tensors)
        return tensors

    on = run()
    assert any(max_ulps(on[o], gpu[o]) > 0 for o in gpu)
    monkeypatch.setattr(triton.knobs.language, "default_fp_fusion", False)
    off = run()
    assert all(max_ulps(off[o], gpu[o]) == 0 for o in gpu)


def test_goldens_are_deterministic_on_the_h200():
    """Rerun twice on the H200 (record_h200.py --check), every golden gave its recorded bits again:
    bit-identity is the contract for each case whose bound is 0."""
    cases = goldens.manifest()["cases"]
    assert all(rec["rerun"]["matches_golden"] and rec["rerun"]["repeat_identical"] for rec in cases.values())


def test_manifest_names_the_gpu_and_fixtures_stay_small():
    """The fixtures say where they came from, and stay a few MB."""
    m = goldens.manifest()
    assert "H200" in m["gpu"] and m["triton"] and m["driver"] and m["date"]
    assert all(rec["status"] == "ok" for rec in m["cases"].values())
    size = sum(p.stat().st_size for p in goldens.GOLDEN.glob("*.npz"))
    assert size < 7 * 2**20, size  # 6.1 MiB with math_fp32_edge


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"numerics": "fast"}, "numerics must be one of 'gpu', 'ideal'"),
        ({"gpu_compiler": "new"}, "gpu_compiler"),
        ({"gpu_layouts": "ttgir"}, "gpu_layouts must be one of 'model', 'compiled'"),
    ],
)
def test_bad_numerics_options_are_refused(options, message):
    """A mistyped mode or compiler release is an error naming the option, before anything runs."""
    from tilescope.engine.errors import LaunchError

    with pytest.raises(LaunchError, match=message):
        tilescope.trace(kernels.fma_kernel, **options)


@pytest.mark.parametrize("fallback", ["torch", "numpy"])
@pytest.mark.parametrize(
    "name", ["dot_fp32_ieee_fp32_k64_b128x64x16_w8", "dotacc_fp32_ieee_k64_b32x32x32_w4", "fma_fp32_default",
             "dotsum_fp32_b1024_w4_fused"],
)  # fmt: skip
def test_the_fallback_fmas_give_the_same_bits(name, fallback, monkeypatch):
    """Without the C kernel of ieee dots (no compiler at install, or it disagreed with NumPy here)
    torch's fused multiply-add reproduces the same goldens, and so does NumPy without torch (not
    installed, or not rounding once on this CPU)."""
    from tilescope.engine import fma_chain, numerics

    monkeypatch.setattr(fma_chain, "compiled_chain", lambda: None)
    if fallback == "numpy":
        monkeypatch.setattr(numerics, "hardware_fma", lambda: None)
    elif numerics.hardware_fma() is None:
        pytest.skip("no torch whose addcmul rounds once here")
    got, gpu = run_engine(name, gpu_compiler=goldens.manifest()["triton"])
    assert all(max_ulps(got[out], gpu[out]) == 0 for out in gpu)
