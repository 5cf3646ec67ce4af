"""Traces of real kernel runs (tracer + sanitizer) for the viewer's tests, built once per session."""

from __future__ import annotations

import pytest

from tilescope.viewer.examples import grouped_matmul_trace, out_of_bounds_trace, vector_add_trace


@pytest.fixture(scope="session")
def traces(tmp_path_factory):
    """``{"add": dir, "matmul": dir, "oob": dir}`` and the launchers that made them."""
    root = tmp_path_factory.mktemp("viewer-traces")
    made = {
        "add": vector_add_trace(root / "add", n=1000, block=128, values="all"),
        "matmul": grouped_matmul_trace(root / "matmul", values="sample"),
        "oob": out_of_bounds_trace(root / "oob"),
    }
    return {name: root / name for name in made} | {"launchers": made}
