"""One-line descriptions of exceptions, for tables and per-kernel failure reports."""

from __future__ import annotations

MAX_CHARS = 300


def describe(exc: BaseException) -> str:
    """``Type: message`` on one line; for a multi-line message (a Triton compile error with the source
    excerpt) the first line and the last, which carries the actual error."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip() and set(ln.strip()) != {"^"}]
    if not lines:
        text = ""
    elif len(lines) == 1:
        text = lines[0]
    else:
        text = f"{lines[0]} … {lines[-1]}"
    return f"{type(exc).__name__}: {text}".replace("|", "/")[:MAX_CHARS]
