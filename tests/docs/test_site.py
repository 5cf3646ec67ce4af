"""The docs site builds with warnings as errors, and its command-line page lists every command and option.

``mkdocs build --strict`` fails on a broken link or anchor, a page missing from the nav, or an
API reference (``::: name``) that no longer resolves; the build takes about ten seconds, which is
why it stays in the default suite: CI must fail on a broken docs page.
"""

from __future__ import annotations

import argparse
import html
import os
import subprocess
import sys
from pathlib import Path

from tilescope.cli import build_parser

ROOT = Path(__file__).parents[2]


def _options(parser: argparse.ArgumentParser, prog: str = "tilescope"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, f"{prog} {name}")
        else:
            for flag in action.option_strings:
                yield prog, flag


def test_site_builds_strictly_with_every_command_and_option(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")]
    build = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    site = tmp_path / "site"
    cli_page = html.unescape((site / "reference" / "cli" / "index.html").read_text())
    missing = [f"{prog} {flag}" for prog, flag in _options(build_parser()) if flag not in cli_page]
    assert not missing, f"options not on the CLI page: {missing}"
    for prog in {prog for prog, _ in _options(build_parser())}:
        assert f"<code>{prog}</code>" in cli_page, prog
    api_page = (site / "reference" / "api" / "index.html").read_text()
    assert 'id="tilescope.trace"' in api_page and "Run a tile-language kernel on the CPU engine" in api_page
    for tutorial in (ROOT / "docs" / "tutorials").glob("*.md"):
        assert (site / "tutorials" / tutorial.stem / "index.html").exists() or tutorial.stem == "index"
