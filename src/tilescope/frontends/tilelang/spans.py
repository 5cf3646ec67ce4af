"""Sites from TileLang's statement spans: the user's TileLang line of the statement being interpreted.

TileLang's frontend stamps every statement of the PrimFunc it builds with the file and line of the
user's source it came from (``tilelang.ir.get_stmt_span``; on by default, ``TILELANG_ENABLE_IR_SPAN``).
The interpreter runs a kernel's statements, not its Python frames, so instead of looking at frames
the site finder answers with the span of the statement running now.
"""

from __future__ import annotations

import linecache
import threading
from typing import Any

from tilelang.ir import get_stmt_span

from ...engine.sites import SiteFinder
from ...ir import Site


class SpanSites(SiteFinder):
    """A :class:`SiteFinder` whose current site is the running statement's span (set by the interpreter)."""

    def __init__(self, function: str):
        super().__init__()
        self.function = function
        self._now = threading.local()
        self._by_stmt: dict[int, Site | None] = {}

    def enter(self, stmt: Any) -> Site | None:
        """Make ``stmt``'s span the current site (a statement without one keeps its parent's); the
        site it replaced, for :meth:`leave`."""
        before = getattr(self._now, "site", None)
        key = stmt.__chandle__()
        if key not in self._by_stmt:
            self._by_stmt[key] = self._site(stmt)
        site = self._by_stmt[key]
        if site is not None:
            self._now.site = site
        return before

    def leave(self, before: Site | None) -> None:
        """Restore the site :meth:`enter` replaced."""
        self._now.site = before

    def find(self) -> Site | None:
        """The site of the statement running now."""
        return getattr(self._now, "site", None)

    def forget(self) -> None:
        """No statement runs (end of a launch)."""
        self._now.site = None

    def _site(self, stmt: Any) -> Site | None:
        span = get_stmt_span(stmt)
        if span is None:
            return None
        file, line = span.source_name.name, int(span.line)
        text = linecache.getline(file, line)
        stripped = text.strip()
        col = len(text) - len(text.lstrip()) + 1 if stripped else 0
        end = col + len(stripped) if stripped else 0
        return Site(file, line, col, line, end, self.function)
