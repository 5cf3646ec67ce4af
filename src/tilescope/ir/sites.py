"""Where things happen in the user's source: sites, and the expression graph that links them."""

from __future__ import annotations

import linecache
from dataclasses import dataclass


@dataclass(frozen=True)
class Site:
    """Where an operation is in the user's source: file, 1-based line and column, and the text."""

    file: str
    line: int
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    function: str = ""

    @property
    def source(self) -> str:
        """The source line, without its trailing newline."""
        return linecache.getline(self.file, self.line).rstrip("\n")

    @property
    def expression(self) -> str:
        """The source text of the expression this site spans (one line at most)."""
        text = self.source
        if not self.column:
            return text.strip()
        end = self.end_column if self.end_line == self.line and self.end_column else len(text) + 1
        return text[self.column - 1 : end - 1]

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Node:
    """One operation of the expression graph: what it was, where, and what it consumed.

    ``op`` is the engine's neutral op name (``add``, ``load``, ``program_id(0)``); kernel
    arguments are leaves named ``argument NAME`` with no site.
    """

    op: str
    site: Site | None
    inputs: tuple[Node, ...] = ()
    wrapped: bool = False  # this int32 operation wrapped around in at least one lane

    def sites(self, limit: int = 32) -> list[Site]:
        """Distinct source sites of this node and its ancestors, nearest first."""
        seen: dict[Site, None] = {}
        stack = [self]
        visited = set()
        while stack and len(seen) < limit:
            node = stack.pop(0)
            if id(node) in visited:
                continue
            visited.add(id(node))
            if node.site is not None:
                seen.setdefault(node.site, None)
            stack.extend(node.inputs)
        return list(seen)
