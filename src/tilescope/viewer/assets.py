"""The page's files, shipped as package data in ``viewer/static`` (no network, no build step at run time).

``vendor.js`` is built from npm packages pinned in ``frontend/package-lock.json`` by
``frontend/build.mjs`` and committed; ``static/VENDORED.md`` lists versions and licences.
"""

from __future__ import annotations

import functools
from importlib import resources

#: file name -> content type; nothing else under /static/ is served
ASSETS = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    "vendor.js": "text/javascript; charset=utf-8",
    "LICENSES.txt": "text/plain; charset=utf-8",
}


@functools.cache
def asset_bytes(name: str) -> bytes:
    """The bytes of one shipped page file (``name`` must be a key of :data:`ASSETS`)."""
    if name not in ASSETS:
        raise KeyError(name)
    return (resources.files("tilescope.viewer") / "static" / name).read_bytes()


def asset_text(name: str) -> str:
    """One shipped page file as text."""
    return asset_bytes(name).decode("utf-8")


@functools.cache
def page_template() -> str:
    """``index.html`` with its ``<!--TILESCOPE-HEAD-->`` placeholder for styles, scripts and data."""
    return (resources.files("tilescope.viewer") / "static" / "index.html").read_text(encoding="utf-8")
