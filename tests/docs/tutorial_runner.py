"""Run a tutorial page (docs/tutorials/*.md) as a reader would, and check what it shows against what runs.

A page is executed top to bottom in a fresh working directory; only fences that start at the
beginning of a line take part (a fence indented under an admonition, such as output recorded on a
GPU, is shown and never run):

- ```` ```python title="name.py" ```` writes the file ``name.py`` (a kernel module the page imports);
  writing it again replaces it, and the next ``import`` sees the new text;
- ```` ```diff title="name.py" ```` edits that file: each hunk's context and ``-`` lines are replaced
  by its context and ``+`` lines (a fix, shown as the change it is);
- ```` ```python ```` runs in one namespace per page; what it prints must equal the ```` ```text ````
  block right after it (or be nothing, when none follows);
- ```` ```console ```` runs each ``$ command`` with bash (the ``tilescope`` of this interpreter on
  ``PATH``); the lines after a command, up to the next one, are its expected stdout and stderr.

Outputs are compared after :func:`normalise` (the working directory, timings, sizes). To rewrite a
page's outputs after a change: ``python tests/docs/tutorial_runner.py docs/tutorials/PAGE.md``.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from tilescope import frontends

FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*(?:title=\"(?P<title>[^\"]+)\")?\s*$")
#: terminal width for rich and argparse, so that wrapping does not depend on the machine
COLUMNS = "100"
#: what legitimately differs between runs, replaced on both sides before comparing
VOLATILE = [
    (re.compile(r"\b\d+(?:\.\d+)? ?(?:ms|s|µs|min)\b"), "<time>"),
    (re.compile(r"\b\d+(?:\.\d+)? ?(?:KiB|MiB|GiB)\b"), "<size>"),
]
#: a Python warning from a dependency (its text and path vary by version and install): not page output
WARNING = re.compile(r"^\S+:\d+: \w*Warning: .*\n(?:  .*\n)?", re.MULTILINE)
#: the checkout, whose path differs between machines: shown relative (``.venv/bin/python``)
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Block:
    """One top-level fenced block: its language, title, text and the line span of its body."""

    lang: str
    title: str | None
    body: list[str]
    start: int  # index of the first body line
    end: int  # index of the closing fence


@dataclass
class Step:
    """An executed block, the output it printed, and the expected output it is compared with."""

    block: Block
    expected: str
    actual: str
    expected_block: Block | None = None  # the ```text block holding ``expected`` (python steps)
    command: str = ""  # console steps: the command; the rest of the fields are its output
    first: int = 0  # console steps: first and last body lines holding this command and its output
    last: int = 0


@dataclass
class Page:
    """A tutorial page and the steps it ran."""

    path: Path
    lines: list[str]
    steps: list[Step] = field(default_factory=list)

    def mismatches(self) -> list[Step]:
        """Steps whose output differs from the page's (after normalising both)."""
        return [s for s in self.steps if normalise(s.expected) != normalise(s.actual)]


def blocks(lines: list[str]) -> list[Block]:
    """The page's top-level fenced blocks, in order."""
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        found.append(Block(m["lang"], m["title"], lines[i + 1 : j], i + 1, j))
        i = j + 1
    return found


def normalise(text: str) -> str:
    """``text`` with timings and sizes replaced and trailing blanks dropped."""
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def _follows(lines: list[str], a: Block, b: Block) -> bool:
    return all(not line.strip() for line in lines[a.end + 1 : b.start - 1])


def apply_diff(text: str, diff: list[str]) -> str:
    """``text`` with the hunks of a unified diff body applied (``@@`` lines separate hunks)."""
    hunks: list[list[str]] = [[]]
    for line in diff:
        if line.startswith("@@"):
            hunks.append([])
        elif not line.startswith(("---", "+++")):
            hunks[-1].append(line)
    for hunk in filter(None, hunks):
        old = "".join(line[1:] + "\n" for line in hunk if not line.startswith("+"))
        new = "".join(line[1:] + "\n" for line in hunk if not line.startswith("-"))
        if text.count(old) != 1:
            raise ValueError(f"diff hunk does not match the file exactly once:\n{old}")
        text = text.replace(old, new)
    return text


def _forget_modules(workdir: Path) -> None:
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(workdir)):
            del sys.modules[name]


def _console(block: Block, workdir: Path, env: dict[str, str]) -> list[Step]:
    steps, i, body = [], 0, block.body
    while i < len(body):
        if not body[i].startswith("$ "):
            i += 1
            continue
        first, command = i, body[i][2:]
        while command.endswith("\\") and i + 1 < len(body):
            i += 1
            command = command[:-1] + " " + body[i].strip()
        j = i + 1
        while j < len(body) and not body[j].startswith("$ "):
            j += 1
        run = subprocess.run(["bash", "-c", command], cwd=workdir, env=env, capture_output=True, text=True,
                             timeout=300)
        actual = _relative(run.stdout + run.stderr, workdir)
        steps.append(Step(block, "\n".join(body[i + 1 : j]), actual, command=command, first=first, last=j))
        i = j
    return steps


def _relative(text: str, workdir: Path) -> str:
    text = WARNING.sub("", text).replace(str(workdir) + "/", "").replace(str(workdir), ".")
    return text.replace(str(ROOT) + "/", "")


def _python(block: Block, k: int, shown: Block | None, workdir: Path, namespace: dict) -> Step:
    script = workdir / f"_step{k}.py"  # on disk, so that @triton.jit can read its source
    script.write_text("\n".join(block.body) + "\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(script.read_text(), str(script), "exec"), namespace)
        except Exception:  # shown as the step's output: the page's next steps still run
            print(traceback.format_exc(limit=-1))
    expected = "\n".join(shown.body) if shown else ""
    return Step(block, expected, _relative(out.getvalue(), workdir), shown)


def run_page(path: str | os.PathLike) -> Page:
    """Execute the page's blocks in a fresh directory; the steps hold expected and actual outputs."""
    page = Page(Path(path), Path(path).read_text().splitlines())
    found = blocks(page.lines)
    path_var = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "COLUMNS": COLUMNS, "PATH": path_var}
    saved_env = os.environ.get("COLUMNS")
    registered = dict(frontends.REGISTERED)  # a page may register a frontend: it is the page's alone
    with tempfile.TemporaryDirectory(prefix="tutorial-") as tmp:
        workdir = Path(tmp).resolve()
        namespace: dict = {"__name__": "__main__"}
        old_cwd = os.getcwd()
        os.chdir(workdir)
        sys.path.insert(0, str(workdir))
        os.environ["COLUMNS"] = COLUMNS
        try:
            for k, block in enumerate(found):
                if block.lang == "python" and block.title:
                    (workdir / block.title).write_text("\n".join(block.body) + "\n")
                    _forget_modules(workdir)
                elif block.lang == "diff" and block.title:
                    target = workdir / block.title
                    target.write_text(apply_diff(target.read_text(), block.body))
                    _forget_modules(workdir)
                elif block.lang == "python":
                    nxt = found[k + 1] if k + 1 < len(found) else None
                    shown = nxt if nxt and nxt.lang == "text" and _follows(page.lines, block, nxt) else None
                    page.steps.append(_python(block, k, shown, workdir, namespace))
                elif block.lang == "console":
                    page.steps.extend(_console(block, workdir, env))
        finally:
            os.chdir(old_cwd)
            sys.path.remove(str(workdir))
            _forget_modules(workdir)
            frontends.REGISTERED.clear()
            frontends.REGISTERED.update(registered)
            if saved_env is None:
                os.environ.pop("COLUMNS", None)
            else:
                os.environ["COLUMNS"] = saved_env
    return page


def updated(page: Page) -> str:
    """The page's text with every step's expected output replaced by what it printed."""
    lines = list(page.lines)
    edits: list[tuple[int, int, list[str]]] = []  # (start, end, replacement) over ``lines``
    for step in page.steps:
        out = step.actual.rstrip("\n").splitlines()
        if step.command:
            body_start = step.block.start
            head = step.block.body[step.first : step.last]
            n_cmd = next(i for i, line in enumerate(head) if not line.endswith("\\")) + 1
            edits.append((body_start + step.first + n_cmd, body_start + step.last, out))
        elif step.expected_block:
            edits.append((step.expected_block.start, step.expected_block.end, out))
        elif out:
            edits.append((step.block.end + 1, step.block.end + 1, ["", "```text", *out, "```"]))
    for start, end, replacement in sorted(edits, reverse=True):
        lines[start:end] = replacement
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    for name in sys.argv[1:]:
        result = run_page(name)
        Path(name).write_text(updated(result))
        print(f"{name}: {len(result.steps)} steps, {len(result.mismatches())} outputs rewritten")
