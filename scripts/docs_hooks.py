"""MkDocs hooks for the docs site: the command-line reference is generated from tilescope's parsers,
and a guide page that ``mkdocs.yml``'s nav does not name yet is listed under Guides.

``docs/reference/cli.md`` holds the marker below; at build time it becomes one section per command
and sub-command with links to the pages that use it and its ``--help`` text, taken from the same
argparse parsers the ``tilescope`` command uses, so the page cannot drift from the code.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

MARKER = "<!-- cli-reference -->"
#: width of the rendered --help text (argparse wraps to $COLUMNS): the width of a code block
WIDTH = "88"
#: pages that show a command at work, as (title, link) (links are checked by mkdocs build --strict)
EXAMPLES = {
    "tilescope demo": [("Home", "../index.md")],
    "tilescope run": [("Run a Triton kernel on the CPU", "../tutorials/run-on-cpu.md"),
                      ("Find and fix an out-of-bounds bug", "../tutorials/sanitizer.md"),
                      ("Find a race between programs", "../tutorials/racecheck.md")],
    "tilescope show": [("See a kernel in the visualizer", "../tutorials/visualizer.md")],
    "tilescope view": [("See a kernel in the visualizer", "../tutorials/visualizer.md"),
                       ("The visualizer", "../visualizer.md")],
    "tilescope migrate": [("Migrate block pointers and verify", "../tutorials/migrate.md"),
                          ("Migrating to tensor descriptors", "../migrate.md")],
    "tilescope bench": [("Benchmark on a GPU", "../tutorials/bench.md"), ("GPU benchmarks", "../bench.md")],
    "tilescope blast-radius": [("Read a blast-radius report", "../tutorials/blast-radius.md"),
                               ("Blast radius", "../blast-radius.md")],
}


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:  # argparse keeps sub-parsers only on its private action list
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices.items())
    return []


def _sections(parser: argparse.ArgumentParser, depth: int) -> list[str]:
    out = []
    for _name, sub in _subcommands(parser):
        out += [f"{'#' * depth} `{sub.prog}`", ""]
        if sub.prog in EXAMPLES:
            out += ["Examples: " + ", ".join(f"[{title}]({link})" for title, link in EXAMPLES[sub.prog]), ""]
        out += ["```text", sub.format_help().rstrip(), "```", ""]
        out += _sections(sub, depth + 1)
    return out


def cli_reference() -> str:
    """Markdown for every ``tilescope`` command: its description and its help text."""
    from tilescope.cli import build_parser

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parser = build_parser()
        lines = ["```text", parser.format_help().rstrip(), "```", "", *_sections(parser, 2)]
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved
    return "\n".join(lines)


def _named(nav) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    items = nav.values() if isinstance(nav, dict) else nav
    return set().union(*(_named(item) for item in items)) if items else set()


def on_config(config):
    """MkDocs hook: add top-level ``docs/*.md`` pages missing from the nav to its Guides section."""
    named = _named(config["nav"])
    guides = next(item["Guides"] for item in config["nav"] if isinstance(item, dict) and "Guides" in item)
    for page in sorted(Path(config["docs_dir"]).glob("*.md")):
        if page.name not in named:
            headings = [line[2:] for line in page.read_text().splitlines() if line.startswith("# ")]
            guides.append({(headings[0] if headings else page.stem).replace("`", "").strip(): page.name})
    return config


def on_page_markdown(markdown: str, page, config, files) -> str:
    """MkDocs hook: expand the CLI marker."""
    return markdown.replace(MARKER, cli_reference()) if MARKER in markdown else markdown
