"""Compile one registered kernel signature for a GPU target on a machine with no GPU.

Triton's ``triton.compile(ASTSource(...), target=GPUTarget(...))`` runs the whole pipeline
(TTIR, TTGIR, LLIR, PTX/AMDGCN, cubin/hsaco) without a driver when the target is given explicitly;
this works in Triton 3.6 to 3.9. This module imports only the standard library and Triton, because
it runs inside the environment under test.
"""

from __future__ import annotations

import re
from typing import Any

#: target names accepted on the command line
TARGET_RE = re.compile(r"^(sm_(?P<sm>\d+)a?|(?P<gfx>gfx[0-9a-f]+))$")


def parse_target(name: str) -> Any:
    """``sm_90a`` -> GPUTarget('cuda', 90, 32); ``gfx942`` -> GPUTarget('hip', 'gfx942', 64)."""
    from triton.backends.compiler import GPUTarget

    m = TARGET_RE.match(name)
    if not m:
        raise ValueError(f"unknown target {name!r}: expected sm_XX[a] or gfxNNN")
    if m.group("sm"):
        return GPUTarget("cuda", int(m.group("sm")), 32)
    return GPUTarget("hip", m.group("gfx"), 64)


def compile_spec(spec: Any, target_name: str, extra_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Compile ``spec`` (a CompileSpec) for ``target_name``; returns the text stages and metadata.

    The result holds ``stages`` (name -> text: ttir, ttgir, llir, ptx or amdgcn), ``binary``
    (cubin or hsaco bytes, or None) and ``metadata`` (shared memory, warps, stages, ...).
    """
    import triton
    from triton.compiler import ASTSource

    target = parse_target(target_name)
    arg_names = list(spec.kernel.arg_names)
    attrs = {(arg_names.index(n),): [["tt.divisibility", 16]] for n in spec.divisible}
    src = ASTSource(spec.kernel, dict(spec.signature), dict(spec.constexprs), attrs)
    options = {**dict(spec.options), **(extra_options or {})}
    kernel = triton.compile(src, target=target, options=options)
    stages = {k: v for k, v in kernel.asm.items() if isinstance(v, str) and k != "source"}
    binary = next(
        (v for k, v in kernel.asm.items() if k in ("cubin", "hsaco") and isinstance(v, bytes)), None
    )
    meta = kernel.metadata
    wanted = ("shared", "num_warps", "num_stages", "num_ctas", "tmem_size", "global_scratch_size", "name")
    metadata = {k: getattr(meta, k) for k in wanted if hasattr(meta, k)}
    return {"stages": stages, "binary": binary, "metadata": metadata, "triton": triton.__version__}
