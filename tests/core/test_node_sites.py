"""Node.sites: the distinct sites of an expression graph, nearest first, on deep and shared graphs."""

from __future__ import annotations

import random

from tilescope.ir import Node, Site


def _walk(node: Node, limit: int = 32) -> list[Site]:
    """The breadth-first walk over every ancestor, without stopping early (the specification)."""
    seen: dict[Site, None] = {}
    queue, visited = [node], set()
    while queue and len(seen) < limit:
        n = queue.pop(0)
        if id(n) in visited:
            continue
        visited.add(id(n))
        if n.site is not None:
            seen.setdefault(n.site, None)
        queue.extend(n.inputs)
    return list(seen)


def _graph(seed: int, size: int, lines: int) -> list[Node]:
    rng = random.Random(seed)
    nodes = [Node(f"argument a{i}", None) for i in range(3)]
    for _ in range(size):
        inputs = tuple(rng.sample(nodes[-20:], k=min(len(nodes), rng.randint(1, 3))))
        site = None if rng.random() < 0.2 else Site("k.py", rng.randint(1, lines))
        nodes.append(Node("add", site, inputs))
    return nodes


def test_sites_equal_the_full_walk_on_random_graphs():
    for seed in range(20):
        nodes = _graph(seed, 300, lines=40 if seed % 2 else 8)
        for node in nodes[::7]:
            assert node.sites() == _walk(node)
            assert node.sites(limit=5) == _walk(node, limit=5)


def test_a_graph_thousands_deep_needs_no_recursion():
    node = Node("argument x", None)
    for i in range(20000):
        node = Node("add", Site("k.py", 1 + i % 3), (node,))
    assert node.sites() == [Site("k.py", 1 + i % 3) for i in (19999, 19998, 19997)]
    assert node.ancestry == {Site("k.py", line) for line in (1, 2, 3)}
