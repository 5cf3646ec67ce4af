"""Findings as a SARIF 2.1.0 log, so CI systems (GitHub code scanning, GitLab, Azure) annotate lines.

Every client that reports source lines writes its log here, with its own rules (finding kind ->
one-sentence help). One run, one rule per finding kind, one result per finding with its physical
location (file, line, column, the source line as snippet), the kernel as logical location, the
notes' lines (address chains, the other side of a race) as related locations and the finding's
details as properties.
"""

from __future__ import annotations

import hashlib
import json
import linecache
import os
from pathlib import Path

from .base import Finding

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
VERSION = "2.1.0"
_LEVELS = {"error": "error", "warning": "warning", "note": "note"}


def rule_id(kind: str) -> str:
    """``out-of-bounds-load`` for ``out-of-bounds load``."""
    return kind.replace(" ", "-")


def _uri(path: str, root: Path) -> tuple[str, str | None]:
    """(uri, uriBaseId): relative to ``root`` when the file lies under it, else an absolute file URI."""
    p = Path(path).resolve()
    try:
        return p.relative_to(root).as_posix(), "SRCROOT"
    except ValueError:
        return p.as_uri(), None


def _location(file: str, line: int, column: int, root: Path, message: str | None = None) -> dict:
    uri, base = _uri(file, root)
    artifact = {"uri": uri, **({"uriBaseId": base} if base else {})}
    region: dict = {"startLine": max(line, 1)}
    if column:
        region["startColumn"] = column
    text = linecache.getline(file, line).rstrip("\n")
    if text:
        region["snippet"] = {"text": text}
    loc: dict = {"physicalLocation": {"artifactLocation": artifact, "region": region}}
    if message:
        loc["message"] = {"text": message}
    return loc


def _fingerprint(f: Finding) -> str:
    source = linecache.getline(f.file, f.line).strip()
    key = "\0".join([f.kind, f.kernel, str(f.details.get("argument")), source])
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _result(f: Finding, root: Path, rules: list[str]) -> dict:
    loc = _location(f.file, f.line, f.column, root)
    loc["logicalLocations"] = [{"name": f.kernel, "kind": "function"}]
    related = []
    for i, note in enumerate(f.details.get("notes", [])):
        if note.get("file") and note.get("line"):
            rel = _location(note["file"], note["line"], 0, root, f"{note['label']}: {note['text']}")
            rel["id"] = i
            related.append(rel)
    result = {
        "ruleId": rule_id(f.kind),
        "ruleIndex": rules.index(rule_id(f.kind)),
        "level": _LEVELS.get(f.severity, "error"),
        "message": {"text": f.message},
        "locations": [loc],
        "partialFingerprints": {"tilescopeFinding/v1": _fingerprint(f)},
        "properties": json.loads(json.dumps(f.details, default=str)),
    }
    if related:
        result["relatedLocations"] = related
    return result


def to_sarif(findings: list[Finding], tool: str, tool_version: str, rules_help: dict[str, str],
             root: str | os.PathLike | None = None,
             levels: dict[str, str] | None = None) -> dict:  # fmt: skip
    """A SARIF 2.1.0 log (as a dict) of ``tool``'s findings; ``rules_help``: finding kind -> help text;
    ``levels``: finding kind -> its rule's default level where not "error"; paths relative to ``root``
    (default: cwd)."""
    base = Path(root or os.getcwd()).resolve()
    rules = [rule_id(k) for k in rules_help]
    return {
        "$schema": SCHEMA,
        "version": VERSION,
        "runs": [{
            "tool": {"driver": {
                "name": tool,
                "version": tool_version,
                "rules": [{"id": rule_id(k), "name": rule_id(k).title().replace("-", ""),
                           "shortDescription": {"text": k},
                           "fullDescription": {"text": text},
                           "defaultConfiguration": {"level": (levels or {}).get(k, "error")}}
                          for k, text in rules_help.items()],
            }},
            "originalUriBaseIds": {"SRCROOT": {"uri": base.as_uri() + "/"}},
            "results": [_result(f, base, rules) for f in findings],
        }],
    }
