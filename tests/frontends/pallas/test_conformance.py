"""Tutorial-style Pallas kernels on the engine: outputs equal JAX's own ``interpret=True`` outputs and a
float64 reference, and the sanitizer and race detector find nothing in them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

import tilescope  # noqa: E402
from tests.frontends.pallas import kernels as pk  # noqa: E402


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def _attention(q, k, v):
    return _softmax(q @ k.T / np.sqrt(q.shape[1])) @ v


def _first_above(x, threshold=1.5):
    above = x > threshold
    return np.where(above.any(axis=1), above.argmax(axis=1), -1)[:, None]


def _gather_rows(idx, x, rows=8):
    return np.concatenate([x[i * rows : (i + 1) * rows] for i in idx]) * 2.0


# name: (wrapper, inputs from an rng, float64 reference, tolerance against it); fp32 tolerances: a few
# ulps for elementwise kernels, and ~1e-5 relative for sums and dots of up to 128 terms of order 1
CASES = {
    "vector add (ragged tail block)": (
        pk.add_vectors,
        lambda r: (_f32(r, 1000), _f32(r, 1000)),
        lambda x, y: x + y,
        1e-6,
    ),
    "masked add on whole refs": (
        pk.masked_add,
        lambda r: (_f32(r, 1000), _f32(r, 1000)),
        lambda x, y: x + y,
        1e-6,
    ),
    "matmul with BlockSpecs": (
        pk.matmul,
        lambda r: (_f32(r, 64, 48), _f32(r, 48, 96)),
        lambda x, y: x @ y,
        1e-4,
    ),
    "blocked matmul accumulating over k": (
        pk.matmul_acc,
        lambda r: (_f32(r, 64, 96), _f32(r, 96, 64)),
        lambda x, y: x @ y,
        1e-4,
    ),
    "matmul with a VMEM scratch accumulator": (
        pk.matmul_scratch,
        lambda r: (_f32(r, 64, 96), _f32(r, 96, 64)),
        lambda x, y: x @ y,
        1e-4,
    ),
    "softmax": (pk.softmax, lambda r: (_f32(r, 30, 128),), _softmax, 1e-6),
    "layer norm": (
        pk.layer_norm,
        lambda r: (_f32(r, 16, 256), _f32(r, 256), _f32(r, 256)),
        _layer_norm,
        1e-5,
    ),
    "flash attention": (
        pk.flash_attention,
        lambda r: (_f32(r, 128, 64), _f32(r, 128, 64), _f32(r, 128, 64)),
        _attention,
        1e-5,
    ),
    "column sums over a sequential axis": (
        pk.column_sum,
        lambda r: (_f32(r, 64, 128),),
        lambda x: x.sum(axis=0, keepdims=True),
        1e-5,
    ),
    "scalar prefetch: gathered row blocks": (
        pk.gather_rows,
        lambda r: (r.permutation(4).astype(np.int32)[[0, 1, 1, 3]], _f32(r, 32, 16)),
        _gather_rows,
        0.0,
    ),
    "in place (input_output_aliases)": (
        pk.scale_in_place,
        lambda r: (_f32(r, 512),),
        lambda x: 3 * x + 1,
        1e-6,
    ),
    "while loop: first element above a threshold": (
        pk.first_above,
        lambda r: (_f32(r, 8, 32),),
        _first_above,
        0.0,
    ),
    "atomic column sums": (
        pk.atomic_column_sum,
        lambda r: (_f32(r, 128, 32),),
        lambda x: x.sum(axis=0),
        1e-5,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_kernel_equals_interpret_mode_and_float64(name):
    wrapper, make, reference, tol = CASES[name]
    args = make(np.random.default_rng(sum(map(ord, name))))
    assert all(np.any(np.asarray(a) != 0) for a in args)
    expected = np.asarray(wrapper(*map(jnp.asarray, args)))  # JAX's own interpreter
    checked = tilescope.trace(wrapper, clients="sanitizer,racecheck", compute_outputs=True)
    got = np.asarray(checked(*map(jnp.asarray, args)))
    assert [r.findings for r in checked.reports] == [[], []]
    assert got.dtype == expected.dtype and got.shape == expected.shape
    # the same operations in fp32; only the order of sums inside a dot or reduction may differ (XLA's
    # CPU dot blocks K by the machine's caches: up to 1e-5 over 128 terms of order 1, as above)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-5)
    want = reference(*(np.asarray(a, np.float64) if a.dtype.kind == "f" else a for a in args))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_elementwise_kernels_are_bit_identical_to_interpret_mode():
    rng = np.random.default_rng(5)
    x, y = jnp.asarray(_f32(rng, 1000)), jnp.asarray(_f32(rng, 1000))
    for wrapper in (pk.add_vectors, pk.masked_add):
        np.testing.assert_array_equal(np.asarray(tilescope.trace(wrapper)(x, y)), np.asarray(wrapper(x, y)))


def test_a_jitted_wrapper_runs_on_the_engine():
    import jax

    rng = np.random.default_rng(6)
    x, y = jnp.asarray(_f32(rng, 64, 32)), jnp.asarray(_f32(rng, 32, 64))
    fused = jax.jit(lambda a, b: pk.matmul(a, b) * 2.0 + 1.0)
    got = np.asarray(tilescope.trace(fused)(x, y))
    np.testing.assert_allclose(got, np.asarray(x, np.float64) @ np.asarray(y, np.float64) * 2 + 1, rtol=1e-4,
                               atol=1e-4)  # fmt: skip


def test_assorted_primitives_equal_interpret_mode():
    rng = np.random.default_rng(7)
    x = jnp.asarray(_f32(rng, 32, 32))
    n = jnp.asarray(rng.integers(-1000, 1000, (32, 32)).astype(np.int32))
    expected = [np.asarray(a) for a in pk.assorted(x, n)]
    checked = tilescope.trace(pk.assorted, clients="sanitizer,racecheck", compute_outputs=True)
    got = [np.asarray(a) for a in checked(x, n)]
    assert [r.findings for r in checked.reports] == [[], []]
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6, atol=2e-6)
    np.testing.assert_array_equal(got[1], expected[1])  # integer arithmetic is exact


def test_a_second_call_with_new_shapes_is_traced_again():
    rng = np.random.default_rng(8)
    launcher = tilescope.trace(pk.softmax)
    for rows in (16, 40):
        x = _f32(rng, rows, 64)
        np.testing.assert_allclose(
            np.asarray(launcher(jnp.asarray(x))), _softmax(x.astype(np.float64)), atol=1e-6
        )


def test_a_bfloat16_matmul_accumulates_in_float32_as_interpret_mode_does():
    rng = np.random.default_rng(9)
    x = jnp.asarray(_f32(rng, 64, 48), jnp.bfloat16)
    y = jnp.asarray(_f32(rng, 48, 64), jnp.bfloat16)
    expected = np.asarray(pk.matmul(x, y), np.float64)
    got = np.asarray(tilescope.trace(pk.matmul)(x, y))
    assert got.dtype == jnp.bfloat16
    # both accumulate the exact bf16 products in fp32, then round once to bf16 (8 bits: 2^-8 relative)
    np.testing.assert_allclose(np.asarray(got, np.float64), expected, rtol=2**-8, atol=1e-2)
    reference = np.asarray(x, np.float64) @ np.asarray(y, np.float64)
    np.testing.assert_allclose(np.asarray(got, np.float64), reference, rtol=2**-7, atol=2e-2)


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 700), block=st.sampled_from([32, 64, 128]), seed=st.integers(0, 2**16))
def test_batched_equals_serial_equals_interpret_on_ragged_sizes(n, block, seed):
    rng = np.random.default_rng(seed)
    x, y = jnp.asarray(_f32(rng, n) + 0.5), jnp.asarray(_f32(rng, n) - 0.5)
    expected = np.asarray(pk.masked_add(x, y, block))
    for mode in ("batched", "serial"):
        checked = tilescope.trace(pk.masked_add, clients="sanitizer", compute_outputs=True, mode=mode)
        np.testing.assert_array_equal(np.asarray(checked(x, y, block)), expected)
        assert checked.reports[0].findings == []


def test_compare_and_swap_lets_exactly_one_program_claim_the_slot():
    x = jnp.asarray(_f32(np.random.default_rng(10), 16))
    assert int(pk.claim(x)) == 0  # interpret mode runs the grid in order
    for mode in ("batched", "concurrent"):
        checked = tilescope.trace(pk.claim, clients="racecheck", mode=mode, compute_outputs=True)
        winner = int(checked(x))
        assert 0 <= winner < 16  # whichever program's atomic came first; atomics never race
        assert checked.reports[0].findings == []
    assert int(tilescope.trace(pk.claim, mode="batched")(x)) == 0  # programs of a batch in order
