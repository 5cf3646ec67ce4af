"""``tilescope view``: see which program touched which element of every tensor, offline, in a browser.

- :class:`TraceModel` opens a trace (and the client reports beside it) for viewing;
- :class:`ViewServer` serves it on 127.0.0.1 behind a random token (``tilescope view TRACE``);
- :func:`write_html` writes one self-contained file (``tilescope view TRACE --html out.html``);
- :func:`show` displays it in a Jupyter notebook;
- :func:`write_reports` stores client reports beside a trace so the view shows their findings.

Everything the page shows is computed here, from the trace's Parquet files, with NumPy; the page
only draws. See ``docs/visualizer.md``.
"""

from .findings import write_reports
from .html import render_html, write_html
from .model import Limits, TraceModel
from .notebook import TraceView, show
from .server import ViewServer

__all__ = [
    "TraceModel",
    "Limits",
    "ViewServer",
    "write_html",
    "render_html",
    "show",
    "TraceView",
    "write_reports",
]
