"""pyarrow, and Arrow arrays from NumPy, set up so that tracing adds as little resident memory as possible.

``pyarrow.array`` is avoided: its first call imports pandas (about 50 MiB of resident memory), which
a tracer that promises bounded memory cannot afford. When this module is the first to import
pyarrow, Arrow's default allocator becomes the C allocator (``ARROW_DEFAULT_MEMORY_POOL=system``,
unless the variable is set): mimalloc, the usual default, keeps about 16 MiB resident once the
Parquet writer has used it, and the writer always allocates from the default pool. The tracer
package imports this module before anything else.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

import numpy as np


def _import_pyarrow() -> ModuleType:
    if "pyarrow" in sys.modules or "ARROW_DEFAULT_MEMORY_POOL" in os.environ:
        return importlib.import_module("pyarrow")
    os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "system"
    try:  # Arrow reads the variable once, while pyarrow loads; child processes need not inherit it
        return importlib.import_module("pyarrow")
    finally:
        del os.environ["ARROW_DEFAULT_MEMORY_POOL"]


pa = _import_pyarrow()



def numeric(data: np.ndarray, ty: pa.DataType, owned: bool = False) -> pa.Array:
    """A primitive Arrow array holding a copy of ``data`` converted to ``ty``; ``owned``: ``data`` is
    a fresh array nothing else holds or changes, so a contiguous one of the type is used as it is."""
    flat = np.array(data, dtype=ty.to_pandas_dtype(), copy=None if owned else True).reshape(-1)
    return pa.Array.from_buffers(ty, len(flat), [None, pa.py_buffer(flat)])


def booleans(data: np.ndarray) -> pa.Array:
    """A boolean Arrow array (bit-packed) of ``data``."""
    flat = np.asarray(data, dtype=bool).reshape(-1)
    bits = pa.py_buffer(np.packbits(flat, bitorder="little"))
    return pa.Array.from_buffers(pa.bool_(), len(flat), [None, bits])


def lists(lengths: np.ndarray, values: pa.Array, ty: pa.DataType,
          valid: np.ndarray | None = None) -> pa.Array:
    """A list array of ``ty`` whose rows take ``lengths`` items of ``values`` in turn; rows where
    ``valid`` is False are null (and take no items)."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    mask = None if valid is None else booleans(~np.asarray(valid, dtype=bool))
    return pa.ListArray.from_arrays(numeric(offsets, pa.int32()), values, type=ty, mask=mask)
