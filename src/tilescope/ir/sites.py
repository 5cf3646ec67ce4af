"""Where things happen in the user's source: sites, and the expression graph that links them."""

from __future__ import annotations

import linecache
from collections import deque
from dataclasses import dataclass
from functools import cached_property


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
        wanted = min(limit, len(self.ancestry))  # the walk stops once no new site can turn up
        seen: dict[Site, None] = {}
        queue = deque([self])
        visited = set()
        while queue and len(seen) < wanted:
            node = queue.popleft()
            if id(node) in visited:
                continue
            visited.add(id(node))
            if node.site is not None:
                seen.setdefault(node.site, None)
            queue.extend(node.inputs)
        return list(seen)

    @cached_property
    def ancestry(self) -> frozenset[Site]:
        """Every source site of this node and its ancestors (computed once per node, ancestors first,
        without recursion: a loop's graph can be thousands of nodes deep)."""
        stack: list[tuple[Node, bool]] = [(self, False)]
        while stack:
            node, inputs_done = stack.pop()
            if "ancestry" in node.__dict__:
                continue
            if inputs_done:
                node.__dict__["ancestry"] = _joined(node)
                continue
            stack.append((node, True))
            stack.extend((i, False) for i in node.inputs if "ancestry" not in i.__dict__)
        return self.__dict__["ancestry"]


def _joined(node: Node) -> frozenset[Site]:
    """``node``'s site with its inputs' ancestry; an input's own set when that holds them all (most
    nodes), so a long graph shares a few sets instead of holding one per node."""
    parts = [i.__dict__["ancestry"] for i in node.inputs]
    own = frozenset() if node.site is None else frozenset([node.site])
    widest = max(parts, key=len, default=own)
    if own <= widest and all(p <= widest for p in parts):
        return widest
    return own.union(*parts)
