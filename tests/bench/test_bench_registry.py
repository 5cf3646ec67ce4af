"""Registration, selection and work scaling of benchmarks."""

from __future__ import annotations

import pytest

from tilescope.bench import registry


def _register(name: str, **kw):  # noqa: ANN202 - test helper
    defaults = dict(
        suite="test-registry",
        shapes=[{"M": 100, "N": 8}],
        small_shape={"M": 4, "N": 8},
        inputs=lambda s, d, seed: {},
        reference=lambda i: None,
        flops=lambda s: 1.0,
        bytes=lambda s: 1.0,
        compile_specs=lambda: [],
        scale_dim="M",
    )
    defaults.update(kw)
    return registry.register(name, **defaults)(lambda inp, launch: None)


def test_register_select_and_scale() -> None:
    _register("test_registry_a")
    _register("test_registry_b", scale_step=16)
    names = {b.name for b in registry.select("test-registry")}
    assert {"test_registry_a", "test_registry_b"} <= names
    assert [b.name for b in registry.select("test-registry", ["*_b"])] == ["test_registry_b"]
    a, b = registry.registered()["test_registry_a"], registry.registered()["test_registry_b"]
    assert a.scaled({"M": 100, "N": 8}, 1.03) == {"M": 103, "N": 8}
    assert b.scaled({"M": 100, "N": 8}, 1.03) == {"M": 96, "N": 8}  # a multiple of 16 nearest 103
    assert a.shape_label({"M": 1, "N": 2}) == "M=1,N=2"


def test_duplicate_name_is_refused() -> None:
    _register("test_registry_dup")
    with pytest.raises(ValueError, match="already registered"):
        _register("test_registry_dup")


def test_scale_dim_must_be_a_shape_entry() -> None:
    with pytest.raises(ValueError, match="scale_dim 'K' missing"):
        _register("test_registry_bad_dim", scale_dim="K")


def test_builtin_suite_is_complete() -> None:
    import tilescope.bench.suite  # noqa: F401 - registers

    names = {b.name for b in registry.select("default")}
    assert names == {
        "matmul_bf16",
        "matmul_fp8",
        "grouped_gemm_moe",
        "topk_routing",
        "swiglu",
        "rmsnorm",
        "softmax",
        "attention_fwd",
    }
    for bench in registry.select("default"):
        assert bench.baseline is not None, bench.name
        assert bench.compile_specs(), bench.name
        for shape in bench.shapes:
            assert bench.flops(shape) > 0 and bench.bytes(shape) > 0
