"""TVM's TIR as TileLang bundles it (``import tilelang`` puts its own TVM on the import path)."""

import tilelang  # noqa: F401  (first: makes TileLang's bundled ``tvm`` importable)
from tvm import tirx

__all__ = ["tirx"]
