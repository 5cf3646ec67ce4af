"""The expression graph's site lists: ``Node.sites`` stops early but lists what a full walk lists."""

from __future__ import annotations

from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from tilescope.ir import Node, Site


def _full_walk(node: Node, limit: int = 32) -> list[Site]:
    """The breadth-first walk over the whole graph that ``Node.sites`` shortens."""
    seen: dict[Site, None] = {}
    queue, visited = deque([node]), set()
    while queue and len(seen) < limit:
        n = queue.popleft()
        if id(n) in visited:
            continue
        visited.add(id(n))
        if n.site is not None:
            seen.setdefault(n.site, None)
        queue.extend(n.inputs)
    return list(seen)


@st.composite
def graphs(draw) -> list[Node]:
    """A random DAG of shared nodes over a few sites, built leaves first; a site may come as several
    equal objects (one per source position is the engine's habit, not a rule)."""
    sites = [Site("k.py", line) for line in range(1, draw(st.integers(1, 40)) + 1)]
    sites += [Site("k.py", s.line) for s in sites[: draw(st.integers(0, len(sites)))]]
    nodes: list[Node] = []
    for _ in range(draw(st.integers(1, 60))):
        site = draw(st.none() | st.sampled_from(sites))
        inputs = tuple(draw(st.lists(st.sampled_from(nodes), max_size=3))) if nodes else ()
        nodes.append(Node("op", site, inputs))
    return nodes


@settings(max_examples=200, deadline=None)
@given(graphs(), st.integers(1, 40))
def test_sites_match_full_walk(nodes, limit):
    for node in reversed(nodes):  # the roots first, so later calls reuse the worked-out site sets
        assert node.sites(limit) == _full_walk(node, limit)
        assert node.site_set() == frozenset(_full_walk(node, 10**6))


def test_deep_loop_graph():
    """A graph as deep as a long loop makes it (no recursion), walked only as far as its sites."""
    a, b = Site("k.py", 1), Site("k.py", 2)
    node = Node("const", None)
    for _ in range(5000):
        node = Node("add", a, (Node("mul", b, (node,)), node))
    assert node.sites() == [a, b]
    assert node == Node("add", a, node.inputs)  # the kept site set is no field
