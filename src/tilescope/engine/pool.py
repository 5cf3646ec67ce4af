"""Buffers a launch can reuse: NumPy's data allocator, for the length of a launch, keeps freed
large buffers (4 MiB and more, ``engine/_pool.c``) and hands them to the next array of about their size.

A launch's temporaries are whole blocks of every program (16 MiB for one float32 op of a
4096×1024 softmax). Freed, glibc returns such buffers to the system, and the next op, or the next
launch, faults fresh zeroed pages in again: on the benchmark machine that cost more than the
arithmetic. Kept buffers are already mapped. The pool keeps at most :data:`LIMIT` bytes (oldest
dropped first); arrays made under it are freed through it whenever they die, and everything else
(the user's arrays, arrays made outside a launch) is NumPy's default allocator as before. Values
are untouched: only where their memory comes from changes.

The allocator is NumPy's public NEP 49 interface (``PyDataMem_SetHandler``, which sets the
handler of the current context only); without the built library the engine runs as before.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator
from functools import cache

import numpy as np

from . import clib

#: bytes of freed buffers the pool keeps for reuse (as many as the store's undo snapshots keep)
LIMIT = 256 << 20

_API_SET_HANDLER = 304  # PyDataMem_SetHandler's slot in NumPy's C API table (NumPy >= 1.22)


@cache
def _handler() -> tuple[ctypes.CDLL, object, ctypes._CFuncPtr] | None:
    """(the library, its handler capsule, NumPy's PyDataMem_SetHandler), or None without the library."""
    path = clib.built("tilescope.engine._pool")
    if path is None:
        return None
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    lib.tilescope_pool_kept.argtypes, lib.tilescope_pool_kept.restype = [], ctypes.c_size_t
    lib.tilescope_pool_limit.argtypes, lib.tilescope_pool_limit.restype = [ctypes.c_size_t], None
    lib.tilescope_pool_limit(LIMIT)
    api = ctypes.pythonapi
    api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    api.PyCapsule_New.restype = ctypes.py_object
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    capsule = api.PyCapsule_New(ctypes.addressof(ctypes.c_char.in_dll(lib, "tilescope_pool_handler")),
                                b"mem_handler", None)  # fmt: skip
    table = api.PyCapsule_GetPointer(np._core._multiarray_umath._ARRAY_API, None)
    slot = ctypes.cast(table, ctypes.POINTER(ctypes.c_void_p))[_API_SET_HANDLER]
    set_handler = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)(slot)
    return lib, capsule, set_handler


@contextlib.contextmanager
def reusing() -> Iterator[None]:
    """Arrays made inside the block take kept buffers where one fits (no-op without the library)."""
    handler = _handler()
    if handler is None:
        yield
        return
    _, capsule, set_handler = handler
    previous = set_handler(capsule)
    try:
        yield
    finally:
        set_handler(previous)


def kept_bytes() -> int:
    """Bytes of freed buffers the pool keeps now (0 without the library)."""
    handler = _handler()
    return 0 if handler is None else int(handler[0].tilescope_pool_kept())


def release() -> None:
    """Free every kept buffer now (the pool keeps up to :data:`LIMIT` again afterwards)."""
    handler = _handler()
    if handler is not None:
        handler[0].tilescope_pool_limit(0)
        handler[0].tilescope_pool_limit(LIMIT)
