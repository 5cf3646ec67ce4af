"""The view server: loopback only, token on every request, Host checked, nothing outside the trace,
and the same data the model computes; ``tilescope view`` end to end in a subprocess."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tilescope.viewer import TraceModel, ViewServer
from tilescope.viewer.pack import unpack


@pytest.fixture
def server(traces):
    with ViewServer(TraceModel(traces["oob"])) as s:
        yield s


def _get(server, path, headers=None, method="GET"):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)  # the path goes out as written
    conn.putheader("Host", (headers or {}).pop("Host", f"127.0.0.1:{server.port}"))
    for k, v in (headers or {}).items():
        conn.putheader(k, v)
    conn.endheaders()
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response, body


def test_listens_on_loopback_with_a_random_token(server, traces):
    assert server.httpd.server_address[0] == "127.0.0.1"
    assert server.url.startswith(f"http://127.0.0.1:{server.port}/?token=") and len(server.token) >= 24
    with ViewServer(TraceModel(traces["oob"])) as other:
        assert other.token != server.token and other.port != server.port


def test_every_request_needs_the_token(server):
    for path in ("/", "/api/index", "/api/launch/1", "/static/app.js", "/files/trace.json", "/nope"):
        response, body = _get(server, path)
        assert response.status == 403, path
        assert b"token" in body
        response, _ = _get(server, f"{path}?token=wrong{server.token}")
        assert response.status == 403, path
    response, body = _get(server, f"/?token={server.token}")
    assert response.status == 200 and b"tilescope" in body
    cookie = response.getheader("Set-Cookie")
    assert cookie.startswith(f"tilescope-{server.port}={server.token};") and "HttpOnly" in cookie
    response, _ = _get(server, "/api/index", {"Cookie": cookie.split(";")[0]})
    assert response.status == 200


def test_a_foreign_host_header_is_refused(server):
    response, _ = _get(server, f"/?token={server.token}", {"Host": f"evil.example:{server.port}"})
    assert response.status == 403
    response, _ = _get(server, f"/?token={server.token}", {"Host": f"localhost:{server.port}"})
    assert response.status == 200


@pytest.mark.parametrize(
    "path",
    [
        "/files/../../../etc/passwd",
        "/files/%2e%2e/%2e%2e/etc/passwd",
        "/static/../server.py",
        "/files/launches/..%2f..%2f..%2fetc%2fpasswd",
        "/files//etc/passwd",
        "/files/..\\..\\etc\\passwd",
        "/static/%2e%2e%2finit.py",
    ],
)
def test_paths_outside_the_trace_are_refused(server, path):
    response, body = _get(server, f"{path}?token={server.token}")
    assert response.status in (400, 404), path
    assert b"root:" not in body


def test_files_inside_the_trace_are_served_and_symlinks_out_are_not(server, traces):
    response, body = _get(server, f"/files/trace.json?token={server.token}")
    assert response.status == 200 and json.loads(body)["format"] == "tilescope-trace"
    link = traces["oob"] / "escape.txt"
    link.symlink_to("/etc/hostname")
    try:
        response, _ = _get(server, f"/files/escape.txt?token={server.token}")
        assert response.status == 404
    finally:
        link.unlink()


def test_only_get_and_head(server):
    response, _ = _get(server, f"/api/index?token={server.token}", method="POST")
    assert response.status == 405


def test_api_serves_the_models_containers(server):
    response, body = _get(server, f"/api/index?token={server.token}")
    index = json.loads(body)
    assert [launch["kernel"] for launch in index["launches"]] == ["copy_rows_kernel"]
    assert index["launches"][0]["findings"] == 1
    response, body = _get(server, f"/api/launch/1?token={server.token}", {"Accept-Encoding": "gzip"})
    assert response.status == 200 and response.getheader("Content-Encoding") == "gzip"
    meta, arrays = unpack(body)
    expected_meta, expected = server.model.launch_container(1)
    assert meta["findings"][0]["marks"][0]["element"] == [50, 0]
    np.testing.assert_array_equal(arrays["t0.flags"], expected["t0.flags"])
    response, _ = _get(server, f"/api/launch/9?token={server.token}")
    assert response.status == 404
    csp = response.getheader("Content-Security-Policy")
    assert "default-src 'none'" in csp and "connect-src 'self'" in csp


def _start(args, cwd):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, "-m", "tilescope.cli", "view", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_tilescope_view_prints_the_url_and_serves(traces, tmp_path):
    proc = _start([str(traces["add"]), "--no-browser"], tmp_path)
    try:
        line = proc.stdout.readline()
        assert "serving" in line and "http://127.0.0.1:" in line and "token=" in line
        url = line.split(" at ", 1)[1].split()[0]
        port = int(url.split(":")[2].split("/")[0])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", url.split(f":{port}", 1)[1].replace("/?", "/api/index?"))
        assert json.loads(conn.getresponse().read())["launches"][0]["kernel"] == "add_kernel"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_tilescope_view_html_writes_one_file(traces, tmp_path):
    out = tmp_path / "view.html"
    run = subprocess.run(
        [sys.executable, "-m", "tilescope.cli", "view", str(traces["matmul"]), "--html", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    text = out.read_text()
    assert "wrote" in run.stdout and "tilescope-launch-1" in text and "connect-src 'none'" in text
    assert "<script src=" not in text and '<link rel="stylesheet" href' not in text


def test_a_small_size_limit_downsamples_and_says_so(traces, tmp_path):
    out = tmp_path / "small.html"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "tilescope.cli",
            "view",
            str(traces["matmul"]),
            "--html",
            str(out),
            "--max-size",
            "0.1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    text = out.read_text()
    assert "downsampled" in text and out.stat().st_size <= 0.1 * 2**20


@pytest.mark.parametrize("make", ["missing", "not a trace", "corrupt launch"])
def test_bad_trace_is_one_line_naming_the_path(traces, tmp_path, make):
    import shutil

    path = tmp_path / "t"
    if make == "not a trace":
        path.mkdir()
    elif make == "corrupt launch":
        shutil.copytree(traces["add"], path)
        (path / "launches" / "launch-000001.json").write_text("{ not json")
    run = subprocess.run(
        [sys.executable, "-m", "tilescope.cli", "view", str(path), "--no-browser"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tilescope view: error:") and str(path) in lines[0]
    assert "Traceback" not in run.stderr


def test_port_in_use_is_an_error_not_a_traceback(traces, tmp_path):
    with ViewServer(TraceModel(traces["add"])) as busy:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "tilescope.cli",
                "view",
                str(traces["add"]),
                "--no-browser",
                "--port",
                str(busy.port),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert run.returncode == 2 and "cannot listen" in run.stderr and "Traceback" not in run.stderr
