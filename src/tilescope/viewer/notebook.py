"""A trace's view inside a Jupyter notebook: ``tilescope.viewer.show(path)`` displays it inline.

The cell shows the self-contained page (:mod:`.html`) in a sandboxed ``<iframe srcdoc>``: scripts
run, but the frame has no origin of its own and its page may connect nowhere.
"""

from __future__ import annotations

import html
import os

from .html import render_html
from .model import TraceModel


class TraceView:
    """What a notebook cell displays for a trace (``_repr_html_``); also ``.html`` for the page itself."""

    def __init__(
        self,
        path: str | os.PathLike,
        reports: list | None = None,
        max_bytes: int = 8 << 20,
        height: int = 760,
    ):
        self.model = TraceModel(path, reports=reports)
        self.max_bytes = max_bytes
        self.height = height

    @property
    def html(self) -> str:
        """The self-contained page."""
        return render_html(self.model, self.max_bytes)

    def _repr_html_(self) -> str:
        return (
            f'<iframe srcdoc="{html.escape(self.html, quote=True)}" sandbox="allow-scripts" '
            f'style="width:100%;height:{self.height}px;border:1px solid #d9dee4" '
            f'title="tilescope view of {html.escape(str(self.model.path))}"></iframe>'
        )


def show(path: str | os.PathLike, reports: list | None = None, **options) -> TraceView:
    """A notebook display of the trace at ``path`` (``reports``: client reports to overlay, e.g.
    ``launcher.reports``)."""
    return TraceView(path, reports=reports, **options)
