"""Every tutorial runs as written and prints what its page shows (docs/tutorials/*.md)."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from tutorial_runner import normalise, run_page

TUTORIALS = sorted((Path(__file__).parents[2] / "docs" / "tutorials").glob("*.md"))


@pytest.mark.parametrize("path", [p for p in TUTORIALS if p.name != "index.md"], ids=lambda p: p.stem)
def test_tutorial_prints_what_its_page_shows(path):
    page = run_page(path)
    assert page.steps, f"{path.name} runs nothing"
    problems = []
    for step in page.mismatches():
        where = step.command or f"python block at line {step.block.start}"
        expected, actual = normalise(step.expected).splitlines(), normalise(step.actual).splitlines()
        diff = difflib.unified_diff(expected, actual, "page", "ran", lineterm="")
        problems.append(f"{path.name}: {where}:\n" + "\n".join(diff))
    fix = f"rewrite the page's outputs with: python tests/docs/tutorial_runner.py {path}"
    assert not problems, "\n\n".join(problems) + "\n\n" + fix
