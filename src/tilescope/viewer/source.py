"""The kernel's source for the page: the function's lines, and per line what the launch did there.

The source comes from the file the launch names, and only when it still matches the trace: every
line the trace's site table recorded must read the same in the file, and the file must be a
Python file whose named line starts the function (a decorator or ``def``). A relative name (a
script run as ``tilescope run ... script.py``) is looked up where it was run, and failing that
beside the trace directory (``--trace-dir`` is usually made there). Otherwise, or when the file is
gone, the page shows only the lines the trace itself recorded. So a trace never makes the viewer
show a file it did not come from.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

_LOOKAHEAD = 20  # lines from the launch's line to the ``def`` (decorators in between)


def kernel_source(file: str, line: int, sites: list[dict], near: Path | None = None) -> dict:
    """``{"file", "first_line", "lines", "verified"}``: the kernel function's lines, or the recorded ones.

    When no site is in the launch's file but sites name another one (a Helion kernel: the launch is
    the generated Triton function, its sites the user's lines), the source is the function of that
    file that holds those sites. ``near``: the folder a relative file name is also looked up in.
    """
    files = Counter(str(s.get("file", "")) for s in sites if int(s.get("line") or 0) > 0)
    if files and file not in files:
        file = files.most_common(1)[0][0]
        text = _read(file, near)
        line = _function_start(text, min(int(s["line"]) for s in sites if s.get("file") == file))
    else:
        text = _read(file, near)
    recorded = {
        int(s["line"]): str(s.get("source", ""))
        for s in sites
        if s.get("file") == file and int(s.get("line") or 0) > 0
    }
    lines = _function_lines(text, line) if file.endswith(".py") else None
    if lines is not None:
        first = line
        text = {first + i: t for i, t in enumerate(lines)}
        if all(text.get(n, "").strip() == src.strip() for n, src in recorded.items()):
            return {"file": file, "first_line": first, "lines": lines, "verified": True}
    if not recorded:
        return {"file": file, "first_line": max(1, line), "lines": [], "verified": False}
    first, last = min(recorded), max(recorded)
    return {
        "file": file,
        "first_line": first,
        "verified": False,
        "lines": [recorded.get(n, "") for n in range(first, last + 1)],
    }


def _read(file: str, near: Path | None) -> list[str]:
    """The lines of ``file`` (relative: from here, else from ``near``); none when it cannot be read."""
    path = Path(file)
    candidates = [path] if path.is_absolute() or near is None else [path, near / path]
    for candidate in candidates:
        try:
            return candidate.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
    return []


def _function_start(text: list[str], line: int) -> int:
    """The line of the first decorator (or the ``def``) of the function of ``text`` holding ``line``;
    0 when there is none."""
    if not 0 < line <= len(text):
        return 0
    indent = len(text[line - 1]) - len(text[line - 1].lstrip())
    for i in range(line - 2, -1, -1):
        stripped = text[i].lstrip()
        depth = len(text[i]) - len(stripped)
        if stripped.startswith(("def ", "async def ")) and depth < indent:
            while (
                i > 0
                and text[i - 1].lstrip().startswith("@")
                and len(text[i - 1]) - len(text[i - 1].lstrip()) == depth
            ):
                i -= 1
            return i + 1
        if stripped and depth < indent:
            indent = depth  # an enclosing block: the function is further out still
    return 0


def _function_lines(text: list[str], line: int) -> list[str] | None:
    """The lines of the function whose first line (a decorator or ``def``) is ``line``, or None."""
    if line < 1:
        return None
    start = line - 1
    if start >= len(text) or not text[start].lstrip().startswith(("@", "def ", "async def ")):
        return None
    head = next(
        (
            i
            for i in range(start, min(len(text), start + _LOOKAHEAD))
            if text[i].lstrip().startswith(("def ", "async def "))
        ),
        None,
    )
    if head is None:
        return None
    indent = len(text[head]) - len(text[head].lstrip())
    end = head + 1
    while end < len(text):
        stripped = text[end].strip()
        if stripped and len(text[end]) - len(text[end].lstrip()) <= indent and not stripped.startswith(")"):
            break
        end += 1
    while end > head + 1 and not text[end - 1].strip():
        end -= 1
    return text[start:end]
