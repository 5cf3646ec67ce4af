"""Normalise each compiler stage so that only changes in the generated code remain.

What is removed or canonicalised, per stage, and why:

- all stages: empty lines, and runs of blanks (indentation and alignment are not code);
- TTIR/TTGIR (MLIR): source locations (``loc(...)`` and ``#locN = ...`` lines, which carry file
  paths and line numbers), SSA value and block names (renumbered in order of first use, since one
  inserted op renames every value after it), and the ``module attributes {...}`` line, which each
  Triton release extends for every kernel alike (the warp count and target it holds also shape the
  layouts in the body, where a real change shows);
- LLIR: debug metadata (``!dbg``, ``!N = ...``, ``#dbg_*`` records), module id and source file name,
  attribute group numbers, and local value names (renumbered per function);
- PTX: ``.loc``/``.file`` lines, debug sections and comments; virtual registers (``%r12``) renumbered
  per register class and labels renumbered;
- AMDGCN: comments, ``.loc``/``.file`` lines, debug sections, the ``.ident`` compiler version string,
  and local labels renumbered;
- SASS: addresses and encoding words (``/*0040*/``, ``/* 0x... */``) and the file header; branch
  labels renumbered.

Renumbering maps each distinct name to ``<prefix><n>`` in order of first appearance, so two texts
that differ only in naming normalise to the same text while a reordering still shows. Whether a
stage changed is decided on this text; its diffstat is counted on :func:`name_blind` text.
"""

from __future__ import annotations

import re
from collections.abc import Callable


def renumber(text: str, pattern: str, prefix: Callable[[re.Match[str]], str]) -> str:
    """Replace each distinct match of ``pattern`` with ``prefix(match) + n`` (n counts per prefix)."""
    names: dict[str, str] = {}
    counters: dict[str, int] = {}

    def sub(m: re.Match[str]) -> str:
        key = m.group(0)
        if key not in names:
            p = prefix(m)
            counters[p] = counters.get(p, 0) + 1
            names[key] = f"{p}{counters[p]}"
        return names[key]

    return re.sub(pattern, sub, text)


def _lines(text: str, drop: str | None = None) -> str:
    keep = []
    for line in text.splitlines():
        if not line.strip() or (drop and re.match(drop, line)):
            continue
        keep.append(" ".join(line.split()))
    return "\n".join(keep) + "\n"


def _mlir(text: str) -> str:
    text = re.sub(r"\s*loc\((?:[^()]|\([^()]*\))*\)", "", text)
    text = _lines(text, r"^#loc\d*\s*=")
    text = re.sub(r"^module attributes \{.*\} \{$", "module {", text, flags=re.MULTILINE)
    text = renumber(text, r"%[A-Za-z0-9_$.#-]+", lambda m: "%v")
    return renumber(text, r"\^bb\d+", lambda m: "^bb")


def _llir(text: str) -> str:
    text = re.sub(r",?\s*!dbg !\d+", "", text)
    text = renumber(text, r"#\d+\b", lambda m: "#")  # attribute groups
    text = _lines(text, r"^(!\d+ = |![A-Za-z.]+ = |; ModuleID|source_filename|\s*#dbg_)")
    out, body = [], []
    for line in text.splitlines():
        body.append(line)
        if line.startswith("}"):  # end of a function: locals are renumbered per function
            out.append(renumber("\n".join(body), r"%[A-Za-z0-9_.]+", lambda m: "%v"))
            body = []
    out.append("\n".join(body))
    return "\n".join(x for x in out if x) + "\n"


def _strip_sections(text: str, marker: str) -> str:
    out, depth = [], 0
    for line in text.splitlines():
        if depth == 0 and re.match(marker, line.strip()):
            depth = line.count("{") - line.count("}")
            continue
        if depth > 0:
            depth += line.count("{") - line.count("}")
            continue
        out.append(line)
    return "\n".join(out)


def _ptx(text: str) -> str:
    text = _strip_sections(text, r"\.section\s+\.debug")
    text = re.sub(r"//.*", "", text)
    text = _lines(text, r"^\s*\.(loc|file)\b")
    text = renumber(text, r"%(?P<cls>[a-z]+)\d+\b", lambda m: f"%{m.group('cls')}")
    return renumber(text, r"\$L__[A-Za-z0-9_]+", lambda m: "$L")


def _amdgcn(text: str) -> str:
    text = _strip_sections(text, r"\.section\s+\.debug")
    text = re.sub(r";.*", "", text)
    text = _lines(text, r"^\s*\.(loc|file|ident|cfi_\w+)\b")
    return renumber(text, r"\.L[A-Za-z_]*\d+(?:_\d+)*\b", lambda m: ".L")


def _sass(text: str) -> str:
    text = re.sub(r"/\*[0-9a-f]{4,}\*/", "", text)
    text = re.sub(r"/\* 0x[0-9a-f]+ \*/", "", text)
    text = _lines(
        text,
        r"^\s*(Fatbin|code for|\.{3,}|Function :|arch =|code version|host =|compile_size|"
        r"producer =|identifier =|\.headerflags)",
    )
    return renumber(text, r"\.L_x_\d+", lambda m: ".L_x_")


NORMALIZERS: dict[str, Callable[[str], str]] = {
    "ttir": _mlir,
    "ttgir": _mlir,
    "llir": _llir,
    "ptx": _ptx,
    "amdgcn": _amdgcn,
    "sass": _sass,
}

#: the order stages are reported in
STAGES = ("ttir", "ttgir", "llir", "ptx", "amdgcn", "sass")


def name_blind(text: str) -> str:
    """Normalised ``text`` with the numbers of renumbered names dropped (``%v12`` -> ``%v``).

    Renumbering in order of appearance makes one inserted value shift every later name; a line diff
    of the name-blind text counts that insertion as one line, which is what a diffstat should say.
    """
    return re.sub(r"(%[A-Za-z]+|\^bb|\$L|\.L_x_|\.L|#)\d+\b", r"\1", text)


def normalize(stage: str, text: str) -> str:
    """``text`` of compiler stage ``stage`` with the always-differing parts removed (see module doc)."""
    fn = NORMALIZERS.get(stage)
    return fn(text) if fn else _lines(text)
