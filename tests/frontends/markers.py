"""The line a test kernel marks as faulty with a ``# BUG <tag>`` comment."""

from __future__ import annotations

import inspect


def bug_line(fn, tag: str) -> int:
    """The line of Python function ``fn`` marked ``# BUG <tag>``."""
    lines, first = inspect.getsourcelines(fn)
    for offset, text in enumerate(lines):
        if text.rstrip().endswith(f"# BUG {tag}"):
            return first + offset
    raise AssertionError(f"no '# BUG {tag}' line in {fn.__name__}")
