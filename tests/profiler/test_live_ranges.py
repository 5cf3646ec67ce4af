"""Live ranges of the large tiles, from the offline compile's TTGIR, at the source lines that hold them."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import profile
from kernels import matmul_kernel, row_softmax_kernel

from tilescope.blast.liveness import elements_per_thread
from tilescope.render import report_text


def _lines(function) -> range:
    import inspect

    source, first = inspect.getsourcelines(function.fn)
    return range(first, first + len(source))


def _line_of(function, text: str) -> int:
    import inspect

    source, first = inspect.getsourcelines(function.fn)
    return first + next(i for i, line in enumerate(source) if text in line)


def test_matmul_accumulator_and_pointer_tiles_live_across_the_k_loop(rng):
    m = n = 256
    k = 128
    block_m = block_n = 64
    a = torch.from_numpy(rng.standard_normal((m, k)).astype(np.float16))
    b = torch.from_numpy(rng.standard_normal((k, n)).astype(np.float16))
    c = torch.empty((m, n))
    launch, report = profile(matmul_kernel, ((m // block_m) * (n // block_n),), a, b, c, m, n, k, *a.stride(),
                             *b.stride(), *c.stride(), BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=32,
                             GROUP_SIZE_M=2, num_warps=4, num_stages=1)  # fmt: skip
    np.testing.assert_allclose(c.numpy(), a.double().numpy() @ b.double().numpy(), rtol=2e-3, atol=2e-3)
    live = launch["resources"]["live_tiles"]
    threads = 4 * 32
    tiles: dict = {}
    for tile in live["live"]:  # largest first: the named tiles, not their index vectors
        tiles.setdefault(tile["name"], tile)
    # By hand: the 64 x 64 fp32 accumulator over 128 threads is 32 values each; the tutorial advances
    # 64 x 32 and 32 x 64 pointer tiles every iteration (loop-carried, 8 bytes each): 16 pointers,
    # 32 registers per thread each. All three are live at the peak, inside the K loop.
    assert tiles["acc"]["shape"] == [64, 64] and tiles["acc"]["dtype"] == "f32"
    assert tiles["acc"]["registers"] == 64 * 64 * 4 // threads // 4 == 32
    assert (
        tiles["a_ptrs"]["shape"] == [64, 32] and tiles["a_ptrs"]["registers"] == 64 * 32 * 8 // threads // 4
    )
    assert (
        tiles["b_ptrs"]["shape"] == [32, 64] and tiles["b_ptrs"]["registers"] == 32 * 64 * 8 // threads // 4
    )
    loop = _line_of(matmul_kernel, "for k in range")
    store = _line_of(matmul_kernel, "tl.store(c_ptrs")
    assert loop < live["line"] < store  # the peak is in the loop body
    assert live["peak_registers"] >= 32 + 32 + 32
    assert all(t["line"] in _lines(matmul_kernel) for t in live["live"])
    # each iteration's accumulator lives until the dot that makes the next one; the pointers until
    # they are advanced
    assert tiles["acc"]["last_use_line"] == _line_of(matmul_kernel, "acc = tl.dot")
    assert tiles["a_ptrs"]["last_use_line"] == _line_of(matmul_kernel, "a_ptrs += ")
    assert "live tiles: at line" in report_text(report, width=200)


@pytest.mark.parametrize("num_warps", [1, 8])
def test_the_tile_that_spills_is_live_at_the_peak(rng, num_warps):
    rows = cols = 128
    x = torch.from_numpy(rng.standard_normal((rows * 2, cols)).astype(np.float32))
    out = torch.empty_like(x)
    launch, report = profile(row_softmax_kernel, (2,), x, out, x.stride(0), ROWS=rows, COLS=cols,
                             num_warps=num_warps)  # fmt: skip
    e = np.exp(x.double().numpy() - x.double().numpy().max(axis=1, keepdims=True))
    np.testing.assert_allclose(out.numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    res = launch["resources"]
    live = res["live_tiles"]
    x_tile = live["live"][0]
    # the loaded 128 x 128 fp32 block is the largest tile: 16384 values over 32 * num_warps threads
    assert x_tile["name"] == "x" and x_tile["shape"] == [rows, cols] and x_tile["dtype"] == "f32"
    assert x_tile["registers"] == rows * cols // (32 * num_warps)
    assert x_tile["line"] == _line_of(row_softmax_kernel, "x = tl.load")
    assert live["line"] in (
        _line_of(row_softmax_kernel, "x = tl.load"),
        _line_of(row_softmax_kernel, "e = tl.exp"),
    )
    spills = [f for f in report.findings if f.kind == "register spills"]
    if num_warps == 1:  # 512 live values per thread, more than 255 registers: ptxas spills
        assert live["peak_registers"] > 255 and res["spill_bytes"] > 0
        (finding,) = spills
        (note,) = [n for n in finding.details["notes"] if n["label"] == "live"]
        assert note["line"] == live["line"] and "x (128x128 f32, 512 regs/thread)" in note["text"]
    else:  # 64 values per thread fit
        assert live["peak_registers"] < 255 and res["spill_bytes"] == 0 and not spills


LAYOUTS = {
    "blocked": "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
    "order = [1, 0]}>",
    "mma": "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], "
    "instrShape = [16, 128, 16]}>",
}


@pytest.mark.parametrize(
    ("shape", "layout", "elements"),
    [
        ((64, 32), "#blocked", 16),  # tile 16 x 32: 4 repetitions along rows of 1 x 4 per thread
        ((8, 32), "#blocked", 4),  # a block smaller than the layout's tile: copies are one value
        ((64,), "#ttg.slice<{dim = 1, parent = #blocked}>", 4),  # rows of the 2-D layout
        ((128, 128), "#mma", 128),  # wgmma m64n128 per warp group: 2 repetitions of 64 per thread
        ((64, 256), "#mma", 128),
    ],
)
def test_elements_per_thread_of_a_layout(shape, layout, elements):
    assert elements_per_thread(shape, layout, LAYOUTS, 128, 32) == elements
