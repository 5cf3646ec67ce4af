"""``NAME=VALUE`` command-line arguments (option sets, environment variables) as a dictionary."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


def parse_assignments(items: Iterable[str], flag: str, json_values: bool = False) -> dict[str, Any]:
    """``["a=1", "b=x"]`` -> ``{"a": "1", "b": "x"}`` (values decoded as JSON where they are JSON and
    ``json_values`` is set); a malformed item raises ValueError naming ``flag``."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{flag} expects NAME=VALUE, got {item!r}")
        if json_values:
            try:
                out[key] = json.loads(value)
            except json.JSONDecodeError:
                out[key] = value
        else:
            out[key] = value
    return out
