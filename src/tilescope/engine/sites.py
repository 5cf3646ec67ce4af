"""Source sites of the user's code that is running an op, from Python frames.

Every frontend whose kernels are Python functions (Triton's ``@triton.jit``, cuTile, NKI) runs
user code in frames the engine can look at: the frontend registers the code objects of the
functions it runs, and an op's site is the innermost registered user frame at that moment.
"""

from __future__ import annotations

import linecache
import sys
import threading
from collections.abc import Callable
from types import CodeType

from ..ir import Site

#: generated source -> the source it was generated from: ``provider(filename)`` returns ``{generated line:
#: (file, line)}`` for a file it knows (a DSL compiling to another one, e.g. Helion to Triton), else None
LineMap = dict[int, tuple[str, int]]
LINE_MAPS: list[Callable[[str], LineMap | None]] = []


def add_line_map(provider: Callable[[str], LineMap | None]) -> None:
    """Make sites in generated code point at the lines ``provider`` maps them to (once per provider)."""
    if provider not in LINE_MAPS:
        LINE_MAPS.append(provider)


def code_objects(code: CodeType) -> set[CodeType]:
    """A code object and every code object nested in it (inner functions, lambdas, comprehensions)."""
    found = {code}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            found |= code_objects(const)
    return found


class SiteFinder:
    """Maps the user's kernel frame that is executing an op to a source site.

    Two sets of code objects: every function a frontend runs as kernel code (kernels, user
    helpers, the DSL's own library helpers such as Triton's ``tl.max``), and the *user's* ones,
    which is where sites point. A frontend notes the innermost user frame on every call into its
    language layer (cheap: one frame up), so ``find`` rarely walks the stack; ops inside library
    helpers report the user's line that called the helper.
    """

    def __init__(self):
        # keyed by id: hashing a code object hashes its whole body, far too slow for every op
        self._codes: dict[int, CodeType] = {}
        self._user: dict[int, CodeType] = {}
        self._local = threading.local()
        self._positions: dict[CodeType, list] = {}
        self._cache: dict[tuple[int, int], Site] = {}
        self._line_maps: dict[str, LineMap | None] = {}

    def add(self, codes: set[CodeType], user: bool) -> None:
        """Register the code objects of a kernel-code function (``user``: not the DSL's own library)."""
        self._codes.update((id(c), c) for c in codes)
        if user:
            self._user.update((id(c), c) for c in codes)

    def is_kernel(self, code: CodeType) -> bool:
        """True for the code of any kernel-code function (kernels and helpers, the DSL's included)."""
        return id(code) in self._codes

    def is_user(self, code: CodeType) -> bool:
        """True for the code of the user's kernels and helpers."""
        return id(code) in self._user

    def note(self, frame) -> None:
        """Remember ``frame`` as the current user frame when it is one (called on every op entry)."""
        if id(frame.f_code) in self._user:
            self._local.frame = frame

    def forget(self) -> None:
        """Drop the remembered frame (end of a launch)."""
        self._local.frame = None

    def find(self) -> Site | None:
        """Site of the user's code that is executing now (None outside kernel code)."""
        frame = getattr(self._local, "frame", None)
        if frame is None:
            frame = sys._getframe(2)
            user = self._user
            while frame is not None and id(frame.f_code) not in user:
                frame = frame.f_back
            if frame is None:
                return None
        key = (id(frame.f_code), frame.f_lasti)
        site = self._cache.get(key)
        if site is None:
            site = self._site(frame.f_code, frame.f_lasti, frame.f_lineno)
            self._cache[key] = site
        return site

    def frame_site(self, frame) -> Site:
        """Site of a given kernel frame (used for exceptions)."""
        return self._site(frame.f_code, frame.f_lasti, frame.f_lineno)

    def _line_map(self, filename: str) -> LineMap:
        found = self._line_maps.get(filename)
        if filename not in self._line_maps:
            for provider in LINE_MAPS:
                found = provider(filename)
                if found:
                    break
            self._line_maps[filename] = found
        return found or {}

    def _site(self, code: CodeType, lasti: int, lineno: int) -> Site:
        positions = self._positions.get(code)
        if positions is None and hasattr(code, "co_positions"):
            positions = list(code.co_positions())
            self._positions[code] = positions
        line, end_line, col, end_col = lineno, lineno, None, None
        if positions and 0 <= lasti // 2 < len(positions):
            line, end_line, col, end_col = positions[lasti // 2]
            line = line or lineno
        mapped = self._line_map(code.co_filename).get(line)
        if mapped is not None:  # generated code: the user's line it came from
            return _mapped_site(*mapped, code.co_name)
        return Site(
            code.co_filename,
            line,
            (col or 0) + 1 if col is not None else 0,
            end_line or line,
            (end_col or 0) + 1 if end_col is not None else 0,
            code.co_name,
        )


def _mapped_site(filename: str, line: int, function: str) -> Site:
    """The site of a user line that generated code came from: its statement's text, from its first
    non-blank column to its end (columns of the generated code do not carry over; 0 when the file
    cannot be read)."""
    text = linecache.getline(filename, line).rstrip()
    if not text.strip():
        return Site(filename, line, 0, line, 0, function)
    return Site(filename, line, len(text) - len(text.lstrip()) + 1, line, len(text) + 1, function)
