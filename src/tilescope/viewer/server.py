"""The local server behind ``tilescope view``: the page, its assets and a JSON/binary API over one trace.

Safety, in the order a request meets it:

- it listens on 127.0.0.1 unless the caller names another address;
- the ``Host`` header must name the address it listens on (a page elsewhere cannot reach it by
  rebinding a DNS name to 127.0.0.1);
- every request must carry the random access token, as ``?token=`` or the cookie the first
  page load sets; without it the answer is 403 and nothing else;
- paths are matched against a fixed set of routes; ``/files/...`` serves files inside the trace
  directory only (no ``..`` segment, no absolute path, and the resolved path must stay inside);
  ``/static/...`` serves only the files the package ships;
- only GET and HEAD; every answer says ``no-store``, ``nosniff`` and a content security policy
  that allows no origin but this one. Data is JSON or the viewer's own container; nothing a client
  sends is ever evaluated or unpickled.
"""

from __future__ import annotations

import hmac
import json
import re
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ..clients.tracer import TraceError
from .assets import ASSETS, asset_bytes, page_template
from .model import Limits, TraceModel

LOOPBACK = "127.0.0.1"
_LAUNCH = re.compile(r"^/api/launch/(\d+)$")
_VALUES = re.compile(r"^/api/launch/(\d+)/values/(\d+)$")
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class ViewServer:
    """Serves one trace on ``host:port`` (port 0: a free one) behind a random token."""

    def __init__(
        self,
        model: TraceModel,
        host: str = LOOPBACK,
        port: int = 0,
        token: str | None = None,
        limits: Limits | None = None,
    ):
        self.model = model
        self.token = token or secrets.token_urlsafe(24)
        self.limits = limits or Limits()
        self.httpd = ThreadingHTTPServer((host, port), _handler(self))
        self.httpd.daemon_threads = True
        self.host = host
        self.port = int(self.httpd.server_address[1])
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address, token included."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/?token={self.token}"

    @property
    def allowed_hosts(self) -> set[str]:
        """``Host`` header values accepted (this address and port, and localhost for loopback)."""
        names = {self.host, f"[{self.host}]"}
        if self.host in (LOOPBACK, "::1", "localhost"):
            names |= {LOOPBACK, "localhost", "[::1]"}
        return {f"{n}:{self.port}" for n in names}

    def start(self) -> ViewServer:
        """Serve in a background thread; returns self."""
        self._warm()
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="tilescope-view", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted."""
        self._warm()
        self.httpd.serve_forever()

    def _warm(self) -> None:
        # aggregate the first launches while the user looks at the launch list
        threading.Thread(target=self.model.warm, args=(self.limits,), name="tilescope-view-warm",
                         daemon=True).start()

    def close(self) -> None:
        """Stop serving and release the port."""
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ViewServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _handler(server: ViewServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        view = server

    return Handler


class _Handler(BaseHTTPRequestHandler):
    view: ViewServer
    server_version = "tilescope-view"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # quiet: the terminal shows the URL, not a request log

    def do_HEAD(self) -> None:
        """Answer as GET would, without the body."""
        self._dispatch(body=False)

    def do_GET(self) -> None:
        """Check host, token and path, then route (module docstring)."""
        self._dispatch(body=True)

    def _method_not_allowed(self) -> None:
        self._send(405, b"method not allowed\n", "text/plain; charset=utf-8", extra={"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _method_not_allowed

    # -- checks -----------------------------------------------------------------------------------

    def _dispatch(self, body: bool) -> None:
        self._body = body
        if self.headers.get("Host", "") not in self.view.allowed_hosts:
            return self._send(403, b"forbidden: unexpected Host header\n", "text/plain; charset=utf-8")
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        given = (query.get("token") or [""])[0] or self._cookie_token()
        if not hmac.compare_digest(given.encode(), self.view.token.encode()):
            return self._send(
                403, b"forbidden: this viewer needs the token from its URL\n", "text/plain; charset=utf-8"
            )
        self._set_cookie = bool((query.get("token") or [""])[0])
        raw = parts.path
        path = unquote(raw)
        if "\\" in path or "\0" in path or any(seg in ("..", ".") for seg in path.split("/")):
            return self._send(400, b"bad path\n", "text/plain; charset=utf-8")
        try:
            self._route(path)
        except TraceError as exc:
            self._json(500, {"error": str(exc)})
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _cookie_token(self) -> str:
        cookie = self.headers.get("Cookie", "")
        name = f"tilescope-{self.view.port}="
        for item in cookie.split(";"):
            item = item.strip()
            if item.startswith(name):
                return item[len(name) :]
        return ""

    # -- routes ------------------------------------------------------------------------------------

    def _route(self, path: str) -> None:
        model = self.view.model
        if path in ("/", "/index.html"):
            return self._send(200, _served_page(self.view.token), "text/html; charset=utf-8")
        if path.startswith("/static/"):
            name = path[len("/static/") :]
            if name not in ASSETS:
                return self._send(404, b"not found\n", "text/plain; charset=utf-8")
            return self._send(200, asset_bytes(name), ASSETS[name])
        if path == "/api/index":
            return self._json(200, model.index())
        match = _LAUNCH.match(path)
        if match:
            number = int(match.group(1))
            if number not in model.launch_files:
                return self._json(404, {"error": f"no launch {number} in this trace"})
            return self._container(model.launch_bytes(number, self.view.limits))
        match = _VALUES.match(path)
        if match:
            number, program = int(match.group(1)), int(match.group(2))
            if number not in model.launch_files:
                return self._json(404, {"error": f"no launch {number} in this trace"})
            return self._container(model.values_bytes(number, program))
        if path.startswith("/files/"):
            return self._file(path[len("/files/") :])
        return self._send(404, b"not found\n", "text/plain; charset=utf-8")

    def _file(self, relative: str) -> None:
        root = self.view.model.path.resolve()
        if not relative or relative.startswith("/"):
            return self._send(400, b"bad path\n", "text/plain; charset=utf-8")
        target = (root / relative).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            return self._send(404, b"not found\n", "text/plain; charset=utf-8")
        kind = "application/json" if target.suffix == ".json" else "application/octet-stream"
        self._send(200, target.read_bytes(), kind)

    # -- answers -------------------------------------------------------------------------------------

    def _container(self, gz: bytes) -> None:
        if "gzip" in self.headers.get("Accept-Encoding", ""):
            return self._send(200, gz, "application/octet-stream", extra={"Content-Encoding": "gzip"})
        import gzip

        self._send(200, gzip.decompress(gz), "application/octet-stream")

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data, default=str).encode(), "application/json")

    def _send(self, status: int, data: bytes, kind: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy", _CSP)
        if status == 200 and getattr(self, "_set_cookie", False):
            self.send_header(
                "Set-Cookie",
                f"tilescope-{self.view.port}={self.view.token}; HttpOnly; SameSite=Strict; Path=/",
            )
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if getattr(self, "_body", True):
            self.wfile.write(data)


def _served_page(token: str) -> bytes:
    config = json.dumps({"mode": "server", "token": token})
    head = (
        f'<link rel="stylesheet" href="/static/app.css?token={token}">\n'
        f'<script type="application/json" id="tilescope-config">{config}</script>\n'
        f'<script src="/static/vendor.js?token={token}"></script>\n'
        f'<script src="/static/app.js?token={token}"></script>'
    )
    return page_template().replace("<!--TILESCOPE-HEAD-->", head).encode()
