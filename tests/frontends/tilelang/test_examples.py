"""TileLang's own GPU-style examples, unmodified, on the engine against float64 references and clean
under the sanitizer.

The examples are not part of this repository. Point ``$TILESCOPE_TILELANG_EXAMPLES`` at the
``examples/`` folder of a TileLang checkout (github.com/tile-ai/tilelang, MIT licence) whose version
matches the installed ``tilelang``, then::

    TILESCOPE_TILELANG_EXAMPLES=~/tilelang/examples python -m pytest -m tilelang_examples \
        tests/frontends/tilelang/test_examples.py

Each example file is loaded as its imports and definitions (its script part, which allocates CUDA
tensors and benchmarks, is not run); the test calls its kernel factory as the example's own
``main`` does (``@tilelang.jit`` factories through ``get_tir``) with small sizes.
"""

from __future__ import annotations

import ast
import os
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tilelang")

import torch  # noqa: E402

import tilescope  # noqa: E402
from tilescope.frontends import tilelang as engine_tilelang  # noqa: E402

pytestmark = pytest.mark.tilelang_examples

EXAMPLES_ENV = "TILESCOPE_TILELANG_EXAMPLES"


def load_definitions(path: Path) -> types.ModuleType:
    """The example's imports, functions and classes, compiled from its file (so TileLang's spans and
    tilescope's sites name the example's own lines)."""
    tree = ast.parse(path.read_text(), str(path))
    kept = [
        n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef))
    ]
    module = types.ModuleType(path.stem)
    module.__file__ = str(path)
    code = compile(ast.Module(kept, []), str(path), "exec", dont_inherit=True)  # not this file's __future__
    exec(code, module.__dict__)
    return module


@dataclass(frozen=True)
class Example:
    """An example file and how its kernel is built, fed and checked."""

    path: str
    build: Callable[[types.ModuleType], tuple]  # module -> (PrimFunc, out_idx)
    inputs: Callable[[torch.Generator], tuple]
    reference: Callable[[types.ModuleType, tuple], list]  # float64 outputs
    rtol: float
    atol: float


def _attention(q, k, v, causal):
    q, k, v = (t.double() for t in (q, k, v))
    s = torch.einsum("bqhd,bkhd->bhqk", q, k) / q.shape[-1] ** 0.5
    if causal:
        s = s.masked_fill(
            torch.ones(s.shape[-1], s.shape[-1], dtype=torch.bool).tril().logical_not(), -torch.inf
        )
    return [torch.einsum("bhqk,bkhd->bqhd", s.softmax(-1), v)]


def _layer_norm(x, g, b):
    x64 = x.double()
    mean, var = x64.mean(1), x64.var(1, unbiased=False)
    y = torch.nn.functional.layer_norm(x64, (x.shape[1],), g.double(), b.double(), eps=1e-5)
    return [y, mean, (var + 1e-5).rsqrt()]


def _layer_norm_backward(dy, x, g, mean, rstd, dgamma, dbeta):
    x64 = x.double().requires_grad_()
    g64 = g.double().requires_grad_()
    torch.nn.functional.layer_norm(x64, (x.shape[1],), g64, None, eps=1e-5).backward(dy.double())
    return [x64.grad]


def _rms(x):
    x64 = x.double()
    return [x64 * (x64.pow(2).mean(-1, keepdim=True).rsqrt() + 1e-12)]


def _per_token_cast(x):
    x64 = x.double().view(x.shape[0], -1, 128)
    scale = x64.abs().amax(2).clamp(min=1e-4) / 448.0
    q = (x64 / scale[..., None]).clamp(-448, 448).to(torch.float8_e4m3fn).double().view(x.shape)
    return [q, scale]


def _randn(gen, *shape, dtype=torch.float32):
    return torch.randn(*shape, generator=gen).to(dtype)


def _ln_backward_inputs(gen):
    x, g = _randn(gen, 64, 256, dtype=torch.bfloat16), _randn(gen, 256, dtype=torch.bfloat16)
    x64 = x.double()
    mean, rstd = x64.mean(1).float(), (x64.var(1, unbiased=False) + 1e-5).rsqrt().float()
    return _randn(gen, 64, 256, dtype=torch.bfloat16), x, g, mean, rstd, torch.zeros(256), torch.zeros(256)


_QKV = lambda gen: tuple(_randn(gen, 1, 128, 2, 64, dtype=torch.float16) for _ in range(3))  # noqa: E731

EXAMPLES = {
    "gemm": Example(
        "gemm/example_gemm.py",
        lambda m: (m.matmul(256, 256, 256, 128, 128, 32, 3, 128, True), -1),
        lambda gen: (_randn(gen, 256, 256, dtype=torch.float16), _randn(gen, 256, 256, dtype=torch.float16)),
        lambda m, args: [args[0].double() @ args[1].double().T],
        2e-3, 3e-2,  # fp16 output
    ),
    "elementwise_add": Example(
        "elementwise/example_elementwise_add.py",
        lambda m: (m.elementwise_add(200, 300, 32, 32, "float32", "float32", 128), -1),
        lambda gen: (_randn(gen, 200, 300), _randn(gen, 200, 300)),
        lambda m, args: [args[0].double() + args[1].double()],
        1e-6, 1e-6,
    ),
    "rms_norm": Example(
        "norm/rms_norm.py",
        lambda m: (m.rms_norm.get_tir(64, 512, 4), -1),
        lambda gen: (_randn(gen, 64, 512),),
        lambda m, args: _rms(*args),
        1e-5, 1e-6,
    ),
    "rms_norm_splitk": Example(
        "norm/rms_norm.py",
        lambda m: (m.rms_norm_splitk(64, 512, 4, 128), -1),
        lambda gen: (_randn(gen, 64, 512),),
        lambda m, args: _rms(*args),
        1e-5, 1e-6,
    ),
    "layernorm": Example(
        "norm/layernorm.py",
        lambda m: (m._layernorm_fwd.get_tir(64, 256), [-3, -2, -1]),
        lambda gen: (_randn(gen, 64, 256, dtype=torch.bfloat16), _randn(gen, 256, dtype=torch.bfloat16),
                     _randn(gen, 256, dtype=torch.bfloat16)),  # fmt: skip
        lambda m, args: _layer_norm(*args),
        1e-2, 3e-2,  # bf16 output
    ),
    "layernorm_backward": Example(
        "norm/layernorm.py",
        lambda m: (m._layernorm_bwd.get_tir(64, 256), [-3]),
        _ln_backward_inputs,
        lambda m, args: _layer_norm_backward(*args),
        1e-2, 3e-2,  # bf16 output
    ),
    "online_softmax": Example(
        "online_softmax/online_softmax.py",
        lambda m: (m.softmax_kernel.get_tir(32, 1000), [1]),
        lambda gen: (_randn(gen, 32, 1000, dtype=torch.float16),),
        lambda m, args: [args[0].double().softmax(1)],
        1e-2, 1e-4,  # fp16 output
    ),
    "flash_attention": Example(
        "flash_attention/example_mha_fwd_bshd.py",
        lambda m: (m.flashattn.jit_impl.get_tir(1, 2, 128, 64, False, block_M=64, block_N=64), [3]),
        _QKV,
        lambda m, args: _attention(*args, False),
        2e-3, 2e-3,
    ),
    "flash_attention_causal": Example(
        "flash_attention/example_mha_fwd_bshd.py",
        lambda m: (m.flashattn.jit_impl.get_tir(1, 2, 128, 64, True, block_M=64, block_N=64), [3]),
        _QKV,
        lambda m, args: _attention(*args, True),
        2e-3, 2e-3,
    ),
    "per_token_cast_to_fp8": Example(
        "cast/example_per_token_cast_to_fp8.py",
        lambda m: (m.per_token_cast_to_fp8.get_tir(64, 256, 8), [1, 2]),
        lambda gen: (_randn(gen, 64, 256),),
        lambda m, args: _per_token_cast(*args),
        0.07, 1e-6,  # e4m3 keeps 3 mantissa bits: a rounding differs by at most one fp8 step
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def examples_dir() -> Path:
    found = os.environ.get(EXAMPLES_ENV)
    if not found:
        pytest.skip(f"set ${EXAMPLES_ENV} to TileLang's examples/ folder")
    return Path(found)


def _run(examples_dir: Path, name: str, clients: str | None = None):
    example = EXAMPLES[name]
    module = load_definitions(examples_dir / example.path)
    func, out_idx = example.build(module)
    inputs = example.inputs(torch.Generator().manual_seed(13))
    if clients is None:
        outs = engine_tilelang.compile(func, out_idx=out_idx)(*inputs)
        return example, module, inputs, outs if isinstance(outs, list) else [outs]
    launcher = tilescope.trace(func, clients=clients, out_idx=out_idx)
    launcher(*inputs)
    return launcher.reports[0]


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_matches_float64_reference(examples_dir, name):
    example, module, inputs, outs = _run(examples_dir, name)
    refs = example.reference(module, inputs)
    assert len(outs) >= len(refs)
    for out, ref in zip(outs, refs, strict=False):
        np.testing.assert_allclose(
            out.double().numpy(), ref.detach().numpy(), rtol=example.rtol, atol=example.atol
        )


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_is_clean_under_the_sanitizer(examples_dir, name):
    assert _run(examples_dir, name, clients="sanitizer").findings == []
