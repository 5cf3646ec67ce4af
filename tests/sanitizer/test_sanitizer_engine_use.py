"""What a sanitizer run does to the user's data and how much work it asks of the engine."""

import numpy as np
import pytest
import torch
from sanitizer_kernels import bump, checked_ids, copy_tail, matmul_rows_unmasked, uses_inline_asm

import tilescope
from tilescope.engine import dot as engine_dot


def test_sanitizer_only_matmul_computes_no_dot(monkeypatch):
    calls = []
    real = engine_dot.product
    monkeypatch.setattr(engine_dot, "product", lambda *a, **k: calls.append(1) or real(*a, **k))
    M, N, K = 70, 48, 64
    args = (np.ones((M, K), np.float32), np.ones((K, N), np.float32), np.zeros((M, N), np.float32), M, N, K)
    launcher = tilescope.trace(matmul_rows_unmasked, clients="sanitizer")
    assert launcher.compute_outputs is False
    launcher[(2, 2)](*args, BM=64, BN=32, BK=32)
    assert calls == [] and not args[2].any()  # no products, no stores
    assert len(launcher.reports[0].findings) == 1
    tilescope.trace(matmul_rows_unmasked, clients="sanitizer", compute_outputs=True)[(2, 2)](
        *args, BM=64, BN=32, BK=32)
    assert len(calls) == 2  # with real outputs: one batched product per k-step for all four programs
    assert args[2][:64].min() == K


def test_values_feeding_a_mask_or_address_are_computed():
    ids = np.array([1, 2, 50, 3, 99, 0, 0, 0], np.int64)
    launcher = tilescope.trace(checked_ids, clients="sanitizer")
    launcher[(2,)](ids, 8, 10, BLOCK=4)
    (f,) = launcher.reports[0].findings
    assert f.kind == "device assert" and f.program_ids == [(0, 0, 0), (1, 0, 0)]


def test_out_of_bounds_store_changes_no_memory():
    # x is the middle of a larger buffer: the lanes past its end land on real, live bytes (under
    # bounds="view" they are out of bounds; by default they would be a warning and write them, as a GPU)
    storage = np.full(96, -7.0, np.float32)
    x, y = storage[:32], storage[32:64]
    src = np.arange(40, dtype=np.float32)
    launcher = tilescope.trace(copy_tail, clients="sanitizer", compute_outputs=True, bounds="view")
    launcher[(2,)](src[:32], x, 32, BLOCK=32)
    np.testing.assert_array_equal(x, src[:32] + 1.0)  # in-bounds lanes behave as on a GPU
    np.testing.assert_array_equal(y, -7.0)  # the neighbour behind x is untouched
    np.testing.assert_array_equal(storage[64:], -7.0)
    kinds = sorted(f.kind for f in launcher.reports[0].findings)
    assert kinds == ["out-of-bounds load", "out-of-bounds store"]


def test_unsupported_op_names_the_op_and_line():
    with pytest.raises(tilescope.UnsupportedOpError) as info:
        tilescope.trace(uses_inline_asm, clients="sanitizer")[(1,)](np.zeros(4, np.float32), BLOCK=4)
    assert "tl.inline_asm_elementwise" in str(info.value)
    assert info.value.site.line == uses_inline_asm.fn.__code__.co_firstlineno + 4


def test_tensor_resized_or_freed_between_launches():
    launcher = tilescope.trace(bump, clients="sanitizer", compute_outputs=True, bounds="view")
    x = torch.zeros(64)
    launcher[(2,)](x, 64, BLOCK=32)
    x.resize_(16)  # the storage may move or stay (then past the view is inside it); n still claims 64
    launcher[(2,)](x, 64, BLOCK=32)
    store, load = launcher.reports[0].findings  # same line: the store's call starts first
    assert (store.kind, load.kind) == ("out-of-bounds store", "out-of-bounds load")
    assert store.program_ids == load.program_ids == [(0, 0, 0), (1, 0, 0)]
    assert load.details["first_element"] == (16,)
    assert load.message == ("16 of 32 lanes read past the end of `x_ptr` (fp32[16]); "
                            "48 lanes in 2 programs in all")
    del x  # freed: a new tensor at possibly the same address is registered afresh
    y = torch.zeros(64)
    launcher[(2,)](y, 64, BLOCK=32)
    assert torch.all(y == 1)
    assert launcher.reports[0].findings[1].details["lanes"] == 48  # nothing new


@pytest.mark.slow
def test_huge_grid_progress_and_bounded_memory():
    import tracemalloc

    n = 1 << 20
    x = np.zeros(n - 3, np.float32)
    seen = []
    tracemalloc.start()
    launcher = tilescope.trace(copy_tail, clients="sanitizer",
                               progress=lambda done, total: seen.append((done, total)))
    launcher[(n,)](x, x, n - 3, BLOCK=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert seen[-1] == (n, n) and len(seen) == n // 4096
    assert peak < 256 * 2**20
    (load, store) = launcher.reports[0].findings
    assert load.program_ids == [(n - 3, 0, 0)]
