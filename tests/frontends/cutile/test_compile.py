"""The frontend and cuTile's own CPU compiler agree on which kernels compile.

Every conformance kernel compiles under cuTile for its arguments; kernels cuTile rejects are
rejected at launch with cuTile's message at the offending line. Without that gate the engine
would run three of them (it is more permissive than cuTile: any tile shape, mma on mixed
operands, tile shapes from runtime values), which is why the gate is on by default.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cuda.tile")

import ml_dtypes  # noqa: E402

import tilescope  # noqa: E402
from tests.frontends.cutile import kernels as ck  # noqa: E402
from tests.frontends.cutile import rejected as rj  # noqa: E402
from tests.frontends.cutile import test_conformance as conformance  # noqa: E402
from tests.frontends.markers import bug_line  # noqa: E402
from tilescope.engine import host  # noqa: E402
from tilescope.engine.errors import KernelError  # noqa: E402
from tilescope.frontends.cutile import compiler, language  # noqa: E402


def ones(*shape, dtype=np.float32):
    return np.ones(shape, dtype)


REJECTED = {
    "tile shape not a power of two": (ck.vector_add, (10,), (ones(1000), ones(1000), ones(1000), 100)),
    "bf16 + fp16": (rj.mixed_half_precisions, (4,),
                    (ones(1000, dtype=ml_dtypes.bfloat16), ones(1000, dtype=np.float16), ones(1000), 256)),
    "mma of fp16 and fp32": (rj.mma_mixed_operands, (1,), (ones(32, 32, dtype=np.float16), ones(32, 32),
                                                            ones(32, 32), 32)),
    "1-D index of a 2-D array": (rj.wrong_index_rank, (1,), (ones(32, 32), ones(32, 32), 32)),
    "tile shape from a runtime scalar": (rj.dynamic_tile_shape, (1,), (ones(64), ones(64), 64)),
}  # fmt: skip
#: what the engine alone (check_compile=False) would run although cuTile rejects it
ENGINE_ALONE_RUNS = {
    "tile shape not a power of two", "mma of fp16 and fp32", "tile shape from a runtime scalar",
}  # fmt: skip


def dtype_of(a):
    return language.cutile_dtype(host.element_type(a))


@pytest.mark.parametrize("case", conformance.CASES, ids=conformance.IDS)
def test_every_conformance_kernel_compiles_under_cutile(case):
    kernel, grid, args, *_ = case(np.random.default_rng(0))
    compiler.check(kernel, args, dtype_of)


@pytest.mark.parametrize("name", list(REJECTED))
def test_a_kernel_cutile_rejects_is_rejected_with_its_message(name):
    kernel, grid, args = REJECTED[name]
    with pytest.raises(KernelError, match="cuTile does not compile this kernel") as caught:
        tilescope.trace(kernel)[grid](*args)
    site = caught.value.site
    if kernel is ck.vector_add:  # a clean kernel launched with a tile of 100: its first load is refused
        assert site.source.strip().startswith("a_tile = ct.load(")
    else:
        assert site.line == bug_line(kernel._pyfunc, "compile")


@pytest.mark.parametrize("name", list(REJECTED))
def test_without_the_gate_the_engine_is_more_permissive(name):
    kernel, grid, args = REJECTED[name]
    try:
        tilescope.trace(kernel, check_compile=False)[grid](*args)
        ran = True
    except KernelError:
        ran = False
    assert ran == (name in ENGINE_ALONE_RUNS)
