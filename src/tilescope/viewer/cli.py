"""``tilescope view TRACE``: open a trace in the browser, or write it as one self-contained HTML file."""

from __future__ import annotations

import argparse
import ipaddress
import sys
import webbrowser
from typing import Any

from ..clients.tracer import TraceError


def register(subparsers: Any) -> None:
    """Add ``tilescope view`` to the command line."""
    p = subparsers.add_parser(
        "view",
        help="show a trace in the browser: which program touched which element, with findings",
        description="Serve a trace on 127.0.0.1 (a free port, behind a random token in the printed URL) and "
        "open the browser; or write one self-contained HTML file with --html. Findings are read "
        "from TRACE/reports/*.json (tilescope run writes them).",
    )
    p.add_argument("trace", help="trace directory (tilescope run -c tracer,sanitizer --trace-dir DIR)")
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML file instead of serving")
    p.add_argument(
        "--max-size",
        type=float,
        default=16,
        metavar="MIB",
        help="--html: size limit of the file in MiB; maps are downsampled to fit (default: 16)",
    )
    p.add_argument(
        "--host",
        default=None,
        metavar="ADDRESS",
        help="address to listen on (default: 127.0.0.1; anything else only when named here)",
    )
    p.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="print the URL but do not open a browser")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Serve or write the trace; 2 when it cannot be read or the address is refused."""
    from .model import TraceModel

    try:
        model = TraceModel(args.trace)
    except TraceError as exc:
        print(f"tilescope view: error: {exc}", file=sys.stderr)
        return 2
    if args.html:
        from .html import write_html

        try:
            path = write_html(model, args.html, int(args.max_size * 2**20))
        except OSError as exc:
            print(f"tilescope view: error: cannot write {args.html}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(
            f"tilescope view: wrote {path} ({path.stat().st_size / 2**20:.1f} MiB, "
            f"limit {args.max_size:g} MiB)"
        )
        return 0
    from .server import LOOPBACK, ViewServer

    host = args.host or LOOPBACK
    try:
        server = ViewServer(model, host=host, port=args.port)
    except OSError as exc:
        print(
            f"tilescope view: error: cannot listen on {host}:{args.port}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return 2
    if not _is_loopback(host):
        print(
            f"tilescope view: warning: listening on {host}, reachable from other machines; anyone with the "
            "URL's token can read this trace",
            file=sys.stderr,
        )
    print(f"tilescope view: serving {model.path} at {server.url}  (Ctrl-C to stop)", flush=True)
    if not args.no_browser:
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    return 0


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
