"""The one build step pyproject.toml cannot declare stably: the C kernel of fp32 "ieee" dots.

engine/fma_chain.py loads it with ctypes (no Python C API, so no Python headers needed). It is
optional: without a C compiler the install goes on and the engine keeps its torch/NumPy path.
-ffp-contract=off: every multiply-add in it is an explicit fmaf, and nothing else may be fused.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tilescope.engine._fma_chain",
            sources=["src/tilescope/engine/_fma_chain.c"],
            extra_compile_args=["-O3", "-ffp-contract=off"],
            optional=True,
        )
    ]
)
