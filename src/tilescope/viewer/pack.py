"""The binary container the page reads: a JSON header and aligned NumPy arrays, gzip-compressed.

Layout (little-endian): ``TSV1``, the header's length (uint32), the header (UTF-8 JSON:
``{"meta": ..., "arrays": {name: {"dtype", "shape", "offset"}}}``), then each array at an offset
that is a multiple of 8, so the page views it as a typed array without copying. The server sends
it with ``Content-Encoding: gzip``; the HTML file inlines it as base64 and the page inflates it
with the browser's own ``DecompressionStream``. Plain data only: nothing in it is ever executed or
unpickled.
"""

from __future__ import annotations

import base64
import gzip
import json
import struct

import numpy as np

MAGIC = b"TSV1"
DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "float32", "float64")


def pack(meta: dict, arrays: dict[str, np.ndarray]) -> bytes:
    """``meta`` and ``arrays`` as one uncompressed container (see the module docstring)."""
    layout, blobs, offset = {}, [], 0
    for name, array in arrays.items():
        a = np.ascontiguousarray(array)
        if a.dtype.name not in DTYPES:
            raise TypeError(f"array {name!r} has dtype {a.dtype}, not one the page reads")
        data = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        layout[name] = {"dtype": a.dtype.name, "shape": list(a.shape), "offset": offset}
        blobs.append(data + b"\0" * (-len(data) % 8))
        offset += len(blobs[-1])
    header = json.dumps({"meta": meta, "arrays": layout}, separators=(",", ":"), default=_plain).encode()
    header += b" " * (-(len(header) + 8) % 8)
    return MAGIC + struct.pack("<I", len(header)) + header + b"".join(blobs)


def compress(data: bytes, level: int = 6) -> bytes:
    """gzip of ``data`` at ``level`` (no timestamp, so the same trace gives the same bytes)."""
    return gzip.compress(data, compresslevel=level, mtime=0)


def unpack(data: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """The meta and arrays of a container (gzip-compressed or not); the inverse of :func:`pack`."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    if data[:4] != MAGIC:
        raise ValueError("not a tilescope viewer container")
    (length,) = struct.unpack("<I", data[4:8])
    header = json.loads(data[8 : 8 + length])
    start = 8 + length
    arrays = {}
    for name, spec in header["arrays"].items():
        dtype = np.dtype(spec["dtype"]).newbyteorder("<")
        count = int(np.prod(spec["shape"])) if spec["shape"] else 1
        arrays[name] = np.frombuffer(data, dtype=dtype, count=count, offset=start + spec["offset"]).reshape(
            spec["shape"]
        )
    return header["meta"], arrays


def to_base64(data: bytes) -> str:
    """ASCII for inlining a compressed container in an HTML file."""
    return base64.b64encode(data).decode("ascii")


def _plain(value):
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)
