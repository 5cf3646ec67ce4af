"""The sanitizer corpus checked against the brute-force oracle alone (no tilescope code involved).

Every buggy kernel must produce findings, all on its ``# BUG: <kind>`` lines with the marked kind and
exactly its expected kinds; every clean kernel must produce none. The oracle itself is checked too:
it computes the same outputs as PyTorch on the tutorial kernels, bad stores change no memory, and a
run leaves Triton as it found it.
"""

import inspect
import re

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sanitizer_corpus import KINDS, all_cases, bug_markers
from sanitizer_oracle import run_kernel, run_oracle
from triton.runtime.jit import JITFunction

CASES = all_cases()
BY_NAME = {c.name: c for c in CASES}


def test_corpus_size_and_shape():
    buggy = [c for c in CASES if c.buggy]
    clean = [c for c in CASES if not c.buggy]
    assert len(buggy) >= 32 and len(clean) >= 32, (len(buggy), len(clean))
    assert len(BY_NAME) == len(CASES), "case names must be unique"
    for case in CASES:
        assert isinstance(case.kernel, JITFunction), case.name
        assert set(case.expected_kinds) <= set(KINDS), case.name
        assert bool(case.expected_kinds) == case.buggy, case.name
        markers = bug_markers(case)
        assert {k for _, k in markers} <= set(KINDS), (case.name, markers)
        if case.buggy:
            assert set(case.expected_kinds) <= {k for _, k in markers}, (case.name, markers)
    themes = {c.theme for c in CASES}
    assert len(themes) >= 10


def test_inputs_are_random_and_never_all_zero():
    for case in CASES:
        args, _ = case.make_args(np.random.default_rng(0))
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        tensors += [a.base for a in args if hasattr(a, "block_shape")]
        assert tensors, case.name
        # inputs (not outputs the kernel fills) are random: at least one argument has varied non-zero data
        assert any(t.numel() > 1 and bool(t.ne(0).any()) and t.unique().numel() > 1 for t in tensors), (
            case.name
        )


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_oracle_agrees_with_markers(name):
    case = BY_NAME[name]
    findings = run_oracle(case)
    if not case.buggy:
        assert findings == [], findings
        return
    markers = set(bug_markers(case))
    assert findings, "a buggy kernel must produce findings"
    for f in findings:
        assert (f["line"], f["kind"]) in markers, (f, sorted(markers))
        assert f["program_ids"] and f["lanes"] > 0
    assert {f["kind"] for f in findings} == set(case.expected_kinds)
    lines, start = inspect.getsourcelines(case.kernel.fn)
    for f in findings:
        text = lines[f["line"] - start][f["column"] - 1 :]
        assert re.match(r"(tl\.)?[A-Za-z_][A-Za-z_0-9]*\.?[a-z_]*\(", text), (f, text)


def _run_case(name):
    case = BY_NAME[name]
    args, kwargs = case.make_args(np.random.default_rng(0))
    findings = run_kernel(case.kernel, case.grid, args, kwargs)
    return args, findings


def test_oracle_outputs_vector_add_and_softmax():
    args, findings = _run_case("tutorial_vector_add")
    assert findings == []
    torch.testing.assert_close(args[2], args[0] + args[1])
    args, findings = _run_case("tutorial_fused_softmax")
    torch.testing.assert_close(args[0], torch.softmax(args[1], dim=1))


def test_oracle_outputs_layernorm():
    args, _ = _run_case("tutorial_layernorm_fwd")
    x, y, w, b = args[:4]
    torch.testing.assert_close(
        y, torch.nn.functional.layer_norm(x, (x.shape[1],), w, b, eps=1e-5), atol=1e-5, rtol=1e-5
    )


def test_oracle_outputs_matmuls():
    args, _ = _run_case("tutorial_grouped_matmul")
    a, b, c = args[:3]
    torch.testing.assert_close(c.float(), a.float() @ b.float(), atol=2e-2, rtol=2e-2)
    args, _ = _run_case("tutorial_persistent_descriptor_matmul")
    a, b, c = (d.base for d in args[:3])
    torch.testing.assert_close(c.float(), a.float() @ b.float().T, atol=2e-2, rtol=2e-2)
    args, _ = _run_case("matmul_k_masked")
    torch.testing.assert_close(args[2], args[0] @ args[1], atol=1e-4, rtol=1e-4)


def test_oracle_outputs_flash_attention():
    for name, causal in (
        ("tutorial_flash_attention_fwd", False),
        ("tutorial_flash_attention_fwd_causal", True),
    ):
        args, _ = _run_case(name)
        q, k, v, scale, o = args[:5]
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
        torch.testing.assert_close(o, ref, atol=1e-4, rtol=1e-4)


def test_oracle_atomics_histogram_counts():
    args, findings = _run_case("histogram")
    x, hist = args[0], args[1]
    expected = torch.clamp((x * 16).to(torch.int32), max=15).bincount(minlength=16)
    assert torch.equal(hist.long(), expected)
    args, findings = _run_case("histogram_unclamped")
    assert int(args[1].sum()) == 299  # the one lane with x == 1.0 wrote nothing
    assert findings[0]["first_element"] == (16,) and findings[0]["lanes"] == 1


def test_bad_store_changes_no_memory():
    """q's pointer lands in k and v (same storage): flagged as q, and k, v keep their bytes."""
    case = BY_NAME["qkv_bias_add_whole_width"]
    args, kwargs = case.make_args(np.random.default_rng(0))
    q, k, v = args[:3]
    k_before, v_before, q_before = k.clone(), v.clone(), q.clone()
    findings = run_kernel(case.kernel, case.grid, args, kwargs)
    assert {f["argument"] for f in findings} == {"q_ptr"}
    assert torch.equal(k, k_before) and torch.equal(v, v_before)
    torch.testing.assert_close(q, q_before + args[3][:40])
    store = next(f for f in findings if f["kind"] == "out-of-bounds store")
    assert store["lanes"] == 80 and store["first_element"] == (40,)


def test_loop_iteration_and_program_ids():
    _, findings = _run_case("row_sum_chunked_unmasked")
    (f,) = findings
    # 100 columns in chunks of 32: only the 4th chunk (iteration 3) of the last row leaves the tensor
    assert f["iteration"] == 3 and f["program_ids"] == [(4, 0, 0)]
    assert f["lanes"] == 28 and f["first_element"] == (5, 0)


def test_oracle_leaves_triton_as_it_was():
    load, call, interpret = tl.load, JITFunction.__call__, triton.knobs.runtime.interpret
    core_load = tl.core.load
    _run_case("tutorial_layernorm_fwd")
    _run_case("desc_block_last_dim_8_bytes")
    assert tl.load is load and tl.core.load is core_load
    assert JITFunction.__call__ is call and "__get__" not in JITFunction.__dict__
    assert triton.knobs.runtime.interpret == interpret
    assert not any(k.startswith("__tilescope") for k in vars(tl.standard))
    assert "interpreter_semantic" not in vars(inspect.getmodule(BY_NAME["add_masked"].kernel.fn))


# ---------------------------------------------------------------------------------------------
# The oracle against closed-form answers on generated shapes


@triton.jit
def _shifted_copy(x_ptr, y_ptr, limit, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs + shift, mask=offs < limit, other=0.0)
    tl.store(y_ptr + offs, v, mask=offs < limit)


@triton.jit
def _wrapping_index(x_ptr, base, mult, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    idx = (base + offs) * mult
    tl.load(x_ptr + idx % n, mask=offs < BLOCK * 2)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.integers(0, 40),
    n=st.integers(1, 70),
    y_len=st.integers(1, 70),
    limit=st.integers(0, 80),
    shift=st.integers(-20, 20),
    programs=st.integers(1, 5),
)
def test_oracle_flags_exactly_the_lanes_outside_the_view(start, n, y_len, limit, shift, programs):
    block = 16
    storage = torch.arange(1, 200, dtype=torch.float32)
    x = storage[start : start + n]  # a view: bytes around it exist but are not x's
    y = torch.zeros(y_len)
    findings = run_kernel(_shifted_copy, (programs,), [x, y, limit, shift], {"BLOCK": block})
    expected = []
    for kind, arg, bad in (
        ("out-of-bounds load", "x_ptr", lambda o: not 0 <= o + shift < n),
        ("out-of-bounds store", "y_ptr", lambda o: not 0 <= o < y_len),
    ):
        lanes = [
            (p, o)
            for p in range(programs)
            for o in range(p * block, p * block + block)
            if o < limit and bad(o)
        ]
        if lanes:
            first = lanes[0][1] + (shift if arg == "x_ptr" else 0)
            pids = sorted({(p, 0, 0) for p, _ in lanes})
            expected.append((kind, arg, len(lanes), (first,), pids))
    got = [(f["kind"], f["argument"], f["lanes"], f["first_element"], f["program_ids"]) for f in findings]
    assert sorted(got) == sorted(expected)
    good = [o for o in range(min(limit, programs * block)) if 0 <= o < y_len and 0 <= o + shift < n]
    for o in good:
        assert y[o] == storage[start + o + shift]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.integers(-(2**31), 2**31 - 64), mult=st.integers(-(2**20), 2**20), programs=st.integers(1, 3))
def test_oracle_int32_overflow_taint_is_exact(base, mult, programs):
    block, n = 32, 64
    x = torch.arange(1, n + 1, dtype=torch.float32)
    findings = run_kernel(_wrapping_index, (programs,), [x, base, mult, n], {"BLOCK": block})
    wrapped = []
    for p in range(programs):
        for o in range(p * block, p * block + block):
            if o >= 2 * block:
                continue
            s = base + o
            if not -(2**31) <= s < 2**31 or not -(2**31) <= s * mult < 2**31:
                wrapped.append((p, o))
    overflow = [f for f in findings if f["kind"] == "int32 overflow"]
    assert sum(f["lanes"] for f in overflow) == len(wrapped)
    if wrapped:
        assert overflow[0]["program_ids"] == sorted({(p, 0, 0) for p, _ in wrapped})
