"""An on-disk cache of rewritten kernel code, so a fresh process skips parsing and rewriting.

Like Python's own ``__pycache__``: the compiled code object of a rewritten ``@triton.jit`` function
is stored with :mod:`marshal` under a key that folds in everything the code depends on: the
kernel's source text, its file and first line (line numbers are baked into the code), the rewriter's
own source (an edited tilescope never reuses stale code), tilescope's version and the interpreter's
bytecode magic. Entries are only ever read from the user's own cache directory, written atomically
(a half-written file is never read), and a file that does not load is ignored and replaced.

The directory is ``$TILESCOPE_CACHE_DIR`` if set (empty: no cache), else
``$XDG_CACHE_HOME/tilescope/rewrite`` (``~/.cache/tilescope/rewrite``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import marshal
import os
import tempfile
import types
from pathlib import Path

from ...methodcache import (
    CACHE_ENV as CACHE_ENV,  # one cache directory, shared with compiled dataclass methods
)
from ...methodcache import directory

#: the modules whose source decides the rewritten code (read, not imported: a hit imports neither)
_REWRITER = ("rewrite.py", "independent.py")


@functools.cache
def _salt() -> bytes:
    """What every key folds in besides the kernel: the rewriter's source (both modules of it),
    tilescope's version, Python's bytecode magic."""
    from ... import __version__

    here = Path(__file__).parent
    rewriter = [(here / name).read_bytes() for name in _REWRITER]
    return b"\0".join([*rewriter, __version__.encode(), importlib.util.MAGIC_NUMBER])


def key(source: str, filename: str, first_line: int) -> str:
    """The cache key of a kernel's rewritten code."""
    digest = hashlib.sha256(_salt())
    digest.update(f"\0{filename}\0{first_line}\0".encode())
    digest.update(source.encode())
    return digest.hexdigest()


def load(name: str) -> types.CodeType | None:
    """The code stored under key ``name``, or None (no cache, no entry, or an entry that does not load)."""
    folder = directory()
    if folder is None:
        return None
    try:
        data = (folder / name).read_bytes()
        code = marshal.loads(data)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) else None


def store(name: str, code: types.CodeType) -> None:
    """Keep ``code`` under key ``name`` (silently nothing when the directory cannot be written)."""
    folder = directory()
    if folder is None:
        return
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(marshal.dumps(code))
        os.replace(tmp, folder / name)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
