"""Why an access went wrong, from the expression graphs the engine recorded with the fault.

Each note is plain data (label, text, file, line) so that JSON, SARIF and the terminal all show the
same thing: the source lines that computed the address (nearest first), whether the mask let the bad
coordinate through, and for int32 overflow the arithmetic on the address path.
"""

from __future__ import annotations

import linecache
from collections import deque
from dataclasses import asdict, dataclass

from ...ir import Node, Site, ViewInfo

_CHAIN_LINES = 3
_MAX_NODES = 4096  # loop-carried pointers make long chains; the nearest lines are enough
_INT_ARITHMETIC = ("add", "sub", "mul")


@dataclass(frozen=True)
class Note:
    """One ``= label: text   (line N)`` line under a diagnostic."""

    label: str
    text: str
    file: str = ""
    line: int = 0

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return asdict(self)


def _inside(site: Site, access: Site | None) -> bool:
    """True when ``site`` lies on the lines of the access expression itself."""
    if access is None or site.file != access.file:
        return False
    return access.line <= site.line <= max(access.line, access.end_line)


def _source(file: str, line: int) -> str:
    return linecache.getline(file, line).strip()


def source_lines(node: Node | None, access: Site | None, *, ops: tuple[str, ...] | None = None,
                 limit: int = _CHAIN_LINES, wrapped_only: bool = False) -> list[tuple[str, int, str]]:
    """Distinct (file, line, text) of the graph's sites, nearest first.

    Without ``ops``, the access's own lines are skipped (the diagnostic shows them already); with
    ``ops``, only nodes whose op is one of them count (e.g. integer arithmetic), wherever they are.
    """
    if node is None:
        return []
    found: dict[tuple[str, int], str] = {}
    seen: set[int] = set()
    queue = deque([node])
    while queue and len(found) < limit and len(seen) < _MAX_NODES:
        current = queue.popleft()
        if id(current) in seen:
            continue
        seen.add(id(current))
        queue.extend(current.inputs)
        site = current.site
        if site is None:
            continue
        if (current.op not in ops) if ops is not None else _inside(site, access):
            continue
        if wrapped_only and not current.wrapped:
            continue
        key = (site.file, site.line)
        if key not in found:
            text = _source(site.file, site.line)
            if text:
                found[key] = text
    return [(f, ln, t) for (f, ln), t in found.items()]


def out_of_bounds_dims(view: ViewInfo, element: tuple[int, ...]) -> list[int]:
    """Dimensions where ``element`` lies outside the view's shape."""
    if len(element) != len(view.shape):
        return []
    return [d for d, (i, n) in enumerate(zip(element, view.shape, strict=True)) if i < 0 or i >= n]


def address_notes(address: Node | None, access: Site | None, label: str = "address") -> list[Note]:
    """``address:`` (or ``label``) then ``from:`` notes for the lines that computed the value."""
    lines = source_lines(address, access)
    return [Note(label if i == 0 else "from", text, file, line)
            for i, (file, line, text) in enumerate(lines)]


def mask_note(mask: Node | None, access: Site | None, view: ViewInfo | None,
              element: tuple[int, ...] | None) -> Note | None:
    """Whether a mask was there and which out-of-bounds dimension it let through."""
    if mask is None:
        return Note("no mask", "every lane of the block is accessed")
    dims = out_of_bounds_dims(view, element) if view is not None and element is not None else []
    site = _own_site(mask, access)
    text = site.expression if site is not None else ""
    label = "mask does not cover " + ", ".join(f"dim {d}" for d in dims) if dims else "mask"
    return Note(label, text or "(computed outside the kernel's source)", site.file if site else "",
                site.line if site else 0)


def _own_site(node: Node, access: Site | None) -> Site | None:
    """The nearest site of the graph that is not the access call itself (which broadcasts the mask)."""
    seen: set[int] = set()
    queue = deque([node])
    while queue and len(seen) < _MAX_NODES:
        current = queue.popleft()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current.site is not None and current.site != access:
            return current.site
        queue.extend(current.inputs)
    return None


def overflow_notes(address: Node | None, access: Site | None) -> list[Note]:
    """The int32 arithmetic on the address path (where the wrap happened) and the usual fix."""
    lines = source_lines(address, access, ops=_INT_ARITHMETIC, wrapped_only=True)
    label = "wrapped here"
    if not lines:  # the wrap was recorded on a value the graph no longer reaches: show the candidates
        lines = source_lines(address, access, ops=_INT_ARITHMETIC)
        label = "int32 arithmetic"
    notes = [Note(label, text, file, line) for file, line, text in lines]
    notes.append(Note("help", "compute the offset in int64, e.g. `pid.to(tl.int64) * stride`"))
    return notes
