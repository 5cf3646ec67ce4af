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
        """Distinct source sites of this node and its ancestors, nearest first (breadth first).

        A long walk stops once it has seen every site the graph holds (:meth:`site_set`): a loop's
        graph grows by one iteration's nodes each time round, but its sites are all near the top."""
        # Level by level: a level is its parents' inputs in order, less the nodes already met (the
        # order a queue gives). Site objects are interned per source position, so a site is looked
        # up by identity first and hashed (its dataclass hash is Python code) only when new.
        wanted = limit
        seen: dict[Site, None] = {}
        met: set[int] = set()  # ids of the site objects already looked at
        visited = {id(self)}
        bounded = False
        level = [self]
        while level:
            for node in level:
                site = node.site
                if site is not None and id(site) not in met:
                    met.add(id(site))
                    seen[site] = None
            if len(seen) >= wanted:
                break
            if not bounded and len(visited) >= _SHORT_WALK:  # a long walk: bound it by the sites there are
                bounded, wanted = True, min(limit, len(self.site_set()))
                if len(seen) >= wanted:
                    break
            below = []
            for node in level:
                for parent in node.inputs:
                    if id(parent) not in visited:
                        visited.add(id(parent))
                        below.append(parent)
            level = below
        return list(seen)[:limit]

    def site_set(self) -> frozenset[Site]:
        """Every site of this node and its ancestors; worked out once per node (kept on the node,
        outside its fields: equality and hashing ignore it)."""
        found = self.__dict__.get(_SITE_SET)
        if found is not None:
            return found
        stack: list[tuple[Node, bool]] = [(self, False)]
        while stack:  # post-order without recursion: graphs of long loops are deep
            node, ready = stack.pop()
            if _SITE_SET in node.__dict__:
                continue
            if not ready:
                stack.append((node, True))
                stack.extend((i, False) for i in node.inputs if _SITE_SET not in i.__dict__)
                continue
            own = frozenset() if node.site is None else frozenset((node.site,))
            node.__dict__[_SITE_SET] = own.union(*(i.__dict__[_SITE_SET] for i in node.inputs))
        return self.__dict__[_SITE_SET]


_SITE_SET = "_site_set"
#: nodes a walk visits before it works out the graph's site set (short walks never need it)
_SHORT_WALK = 64
