"""The one build step pyproject.toml cannot declare stably: the engine's C kernels, the FMA chain of
fp32 "ieee" dots (engine/_fma_chain.c), the special function unit's tables (engine/_sfu.c) and the
reduction tree of fp32 sums (engine/_tree_sum.c).

engine/clib.py loads them with ctypes (no Python C API, so no Python headers needed). They are
optional: without a C compiler the install goes on and the engine keeps its torch/NumPy paths.
-ffp-contract=off: every multiply-add in them is explicit, and nothing else may be fused;
-fno-math-errno: sqrt of a negative gives NaN without a libm call.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            f"tilescope.engine.{name}",
            sources=[f"src/tilescope/engine/{name}.c"],
            extra_compile_args=["-O3", "-ffp-contract=off", "-fno-math-errno"],
            optional=True,
        )
        for name in ("_fma_chain", "_sfu", "_tree_sum")
    ]
)
