"""What the Pallas frontend does not run is a clear error naming the kernel, the primitive and the
user's line; which functions the frontend takes at all."""

from __future__ import annotations

import functools
import inspect

import numpy as np
import pytest

pytest.importorskip("jax")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402

import tilescope  # noqa: E402
from tests.frontends.pallas import kernels as pk  # noqa: E402
from tilescope.frontends import frontend_for  # noqa: E402


def sort_kernel(x_ref, o_ref):
    o_ref[...] = jnp.sort(x_ref[...])


def sort(x):
    return pl.pallas_call(sort_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=True)(x)


def test_an_unsupported_primitive_names_itself_the_kernel_and_the_line():
    x = jnp.asarray(np.random.default_rng(1).standard_normal(128).astype(np.float32))
    with pytest.raises(tilescope.KernelError) as caught:
        tilescope.trace(sort)(x)
    text = str(caught.value)
    line = inspect.getsourcelines(sort_kernel)[1] + 1
    assert "`sort`" in text and "sort_kernel" in text and f"test_rejected.py:{line}" in text


def test_functions_calling_pallas_call_go_to_the_pallas_frontend():
    assert frontend_for(pk.add_vectors)[0].name == "pallas"
    assert frontend_for(jax.jit(pk.matmul))[0].name == "pallas"
    assert frontend_for(lambda x, y: pk.add_vectors(x, y, block=512))[0].name == "pallas"  # two calls down
    assert frontend_for(functools.partial(pk.matmul, bm=16))[0].name == "pallas"

    def closing_over(module):
        return lambda x: module.softmax(x)

    assert frontend_for(closing_over(pk))[0].name == "pallas"  # a module in a closure cell

    def not_a_pallas_function(x_ptr):  # a plain function: Triton's, to be @triton.jit-ed
        return x_ptr

    assert frontend_for(not_a_pallas_function)[0].name == "triton"


def test_an_unsupported_dtype_names_the_kernel_and_the_argument():
    z = jnp.asarray(np.random.default_rng(2).standard_normal(256).astype(np.complex64))
    with pytest.raises(tilescope.LaunchError, match=r"add_vectors_kernel.*`x_ref` is complex64"):
        tilescope.trace(pk.add_vectors)(z, z)
