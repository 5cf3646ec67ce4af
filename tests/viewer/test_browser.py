"""The page in a real browser: Playwright driving Debian's Chromium, over the served view and the
self-contained HTML file alike.

Set ``TILESCOPE_BROWSER_TESTS=0`` to skip these (they then skip with that reason). Otherwise a
missing Chromium fails them: CI installs it (``.ci/run``), and a green run must mean the page was
really tested. ``TILESCOPE_CHROMIUM`` names another Chromium binary. No browser is ever downloaded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from tilescope.viewer import TraceModel, ViewServer, write_html

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
READ, OUTSIDE = [37, 99, 235], [217, 70, 239]


def _chromium() -> str:
    return os.environ.get("TILESCOPE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    if os.environ.get("TILESCOPE_BROWSER_TESTS", "1") == "0":
        pytest.skip("browser tests are off (TILESCOPE_BROWSER_TESTS=0)")
    path = _chromium()
    if not Path(path).is_file():
        pytest.fail(
            f"Chromium not found at {path}: install Debian's chromium (apt-get install -y chromium), "
            "set TILESCOPE_CHROMIUM, or turn browser tests off with TILESCOPE_BROWSER_TESTS=0",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield b
        b.close()


class View:
    """One page of the viewer and every request it made."""

    def __init__(self, page, url: str, origin: str):
        self.page, self.url, self.origin = page, url, origin
        self.requests: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, fragment: str = ""):
        self.page.goto(self.url + fragment)
        self.ready()

    def ready(self, view: str | None = None):
        """Wait until the page has rendered (or shown an error); with ``view``, until it rendered that
        view: a click that changes the hash routes asynchronously, so the view it leaves can still
        read as ready for a moment."""
        self.page.wait_for_function(
            "(view) => document.body.dataset.ready === 'error' || (document.body.dataset.ready === '1'"
            " && (view === null || document.body.dataset.view === view))",
            arg=view,
            timeout=20_000,
        )
        assert self.page.evaluate("document.body.dataset.ready") == "1", self.page.inner_text("#app")

    def meta(self) -> dict:
        return self.page.evaluate("window.tilescope.state.launch.meta")

    def only_local(self):
        """No request left this machine's loopback (served) or the file itself (HTML)."""
        outside = [
            u for u in self.requests if not (u.startswith(self.origin) or u.startswith(("data:", "blob:")))
        ]
        assert any(u.startswith(self.origin) for u in self.requests), "the request log recorded nothing"
        assert not outside, outside
        # nor does the page name anything elsewhere (a request the policy blocked leaves no log entry)
        linked = self.page.evaluate(
            "() => [...document.querySelectorAll('[src], [href]')].map((e) => e.src || e.href)"
        )
        here = (self.origin, "data:", "blob:", "about:", "javascript:void")
        named = [u for u in linked if u and not u.startswith(here)]
        assert not named, named
        assert not self.errors, self.errors


@contextmanager
def _view(browser, trace_dir: Path, how: str, tmp_path: Path):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        if how == "served":
            with ViewServer(TraceModel(trace_dir)) as server:
                yield View(page, server.url, f"http://127.0.0.1:{server.port}/"), server
        elif how == "cli-html":  # what a user runs: tilescope view TRACE --html OUT
            out = tmp_path / f"{trace_dir.name}-cli.html"
            command = [sys.executable, "-m", "tilescope.cli", "view", str(trace_dir), "--html", str(out)]
            done = subprocess.run(command, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
            yield View(page, out.as_uri(), out.as_uri()), None
        else:
            out = write_html(TraceModel(trace_dir), tmp_path / f"{trace_dir.name}.html")
            yield View(page, out.as_uri(), out.as_uri()), None
    finally:
        context.close()


def _cell(meta: dict, name: str, element: list[int]) -> tuple[int, int]:
    k = next(i for i, t in enumerate(meta["tensors"]) if t["name"] == name)
    g = meta["tensors"][k]["geometry"]
    if len(g["shape"]) == 1:
        row, col = divmod(element[0], g["wrap"])
    else:
        row, col = element
    cr, cc = (row + g["before_rows"]) // g["factor_rows"], (col + g["before_cols"]) // g["factor_cols"]
    return k, cr * g["cell_cols"] + cc


def _click_element(view: View, name: str, element: list[int]):
    k, cell = _cell(view.meta(), name, element)
    view.page.locator(f'canvas.map[data-tensor="{name}"]').scroll_into_view_if_needed()
    point = view.page.evaluate(f"window.tilescope.cellCenter({k}, {cell})")
    view.page.mouse.click(point["x"], point["y"])


def _pixel(view: View, name: str, element: list[int]) -> list[int]:
    meta = view.meta()
    k, cell = _cell(meta, name, element)
    cols = meta["tensors"][k]["geometry"]["cell_cols"]
    return view.page.evaluate(f"window.tilescope.pixel({k}, {cell // cols}, {cell % cols})")


@pytest.mark.parametrize("how", ["served", "html"])
def test_launch_list_renders_and_opens_a_launch(browser, traces, tmp_path, how):
    with _view(browser, traces["oob"], how, tmp_path) as (view, _):
        view.open()
        rows = view.page.locator("#launch-list tbody tr")
        assert rows.count() == 1
        text = rows.first.inner_text()
        assert "copy_rows_kernel" in text and "4 × 3 × 1" in text and "src_ptr: fp32[50, 40]" in text
        assert rows.first.locator(".badge").inner_text() == "1"  # the sanitizer's finding
        rows.first.click()
        view.ready("launch")
        assert view.page.evaluate("document.body.dataset.view") == "launch"
        assert view.page.locator(".tensor-card").count() == 2
        view.only_local()


@pytest.mark.parametrize("how", ["served", "html"])
def test_clicking_a_program_changes_the_highlighted_elements(browser, traces, tmp_path, how):
    with _view(browser, traces["add"], how, tmp_path) as (view, _):
        view.open("#/launch/1")
        assert view.page.evaluate("document.body.dataset.program") == "-1"
        _click_element(view, "x_ptr", [300])  # block 2 of 128
        assert view.page.evaluate("document.body.dataset.program") == "2"
        assert "program (2)" in view.page.inner_text("#program-label")
        assert _pixel(view, "x_ptr", [300]) == READ and _pixel(view, "x_ptr", [256]) == READ
        assert _pixel(view, "x_ptr", [255]) != READ and _pixel(view, "x_ptr", [384]) != READ
        card = view.page.locator('.tensor-card[data-tensor="x_ptr"] .footprint')
        assert card.get_attribute("data-read") == "128"
        _click_element(view, "out_ptr", [990])  # the tail program: 1000 - 7 * 128 = 104 elements
        assert view.page.evaluate("document.body.dataset.program") == "7"
        assert _pixel(view, "x_ptr", [300]) != READ and _pixel(view, "x_ptr", [990]) == READ
        assert card.get_attribute("data-read") == "104"
        ops = view.page.locator("#ops-table tbody tr")
        assert ops.count() == 3 and "104/128" in ops.first.inner_text()
        if how == "served":  # values are served on request (the HTML file inlines a few programs')
            view.page.wait_for_selector("#ops-table td.values canvas")
        view.only_local()


@pytest.mark.parametrize("how", ["served", "html"])
def test_sanitizer_finding_is_drawn_at_its_element_and_line(browser, traces, tmp_path, how):
    report = json.loads((traces["oob"] / "reports" / "sanitizer.json").read_text())
    (finding,) = report["findings"]
    with _view(browser, traces["oob"], how, tmp_path) as (view, _):
        view.open("#/launch/1")
        item = view.page.locator("li.finding")
        assert item.count() == 1 and "out-of-bounds load" in item.inner_text()
        assert f"examples.py:{finding['line']}" in item.inner_text()
        item.click()
        mark = view.page.locator(".mark.selected")
        assert mark.count() == 1 and mark.get_attribute("data-element") == "50,0"
        k, cell = _cell(view.meta(), "src_ptr", [50, 0])
        center = view.page.evaluate(f"window.tilescope.cellCenter({k}, {cell})")
        box = mark.bounding_box()
        assert abs(box["x"] + box["width"] / 2 - center["x"]) <= 1.5
        assert abs(box["y"] + box["height"] / 2 - center["y"]) <= 1.5
        assert _pixel(view, "src_ptr", [50, 0]) == OUTSIDE
        line = view.page.locator("tr.src-line.selected")
        assert line.count() == 1 and line.get_attribute("data-line") == str(finding["line"])
        assert "tl.load" in line.inner_text() and "has-finding" in line.get_attribute("class")
        assert "program (3, 0)" in view.page.inner_text("#program-label")
        view.only_local()


def test_the_served_view_needs_the_token_and_refuses_dot_dot(browser, traces, tmp_path):
    with _view(browser, traces["add"], "served", tmp_path) as (view, server):
        origin = f"http://127.0.0.1:{server.port}"
        response = view.page.goto(origin + "/")
        assert response.status == 403 and "token" in view.page.inner_text("body")
        response = view.page.goto(origin + "/api/index")
        assert response.status == 403
        view.open()  # with the token
        for path in (
            "/files/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
            "/files/../../../etc/passwd",
            "/static/%2e%2e/server.py",
        ):
            got = view.page.request.get(f"{origin}{path}?token={server.token}")
            assert got.status in (400, 404), path
            assert "root:" not in got.text()
        assert view.page.request.get(f"{origin}/files/trace.json?token={server.token}").status == 200
        view.only_local()


def test_every_kind_of_launch_draws_without_errors(browser, mixed, tmp_path):
    with _view(browser, mixed, "html", tmp_path) as (view, _):
        view.open()
        assert view.page.locator("#launch-list tbody tr").count() == 5
        for n in range(1, 6):
            view.page.evaluate(f"() => {{ location.hash = '#/launch/{n}/program/1'; }}")
            view.page.wait_for_function(
                f"() => document.body.dataset.ready === '1' && window.tilescope.state.number === {n}"
            )
            assert view.page.locator("canvas.map").count() >= 1
            assert view.page.evaluate("document.body.dataset.program") == "1"
        view.page.evaluate("() => { location.hash = '#/launch/3'; }")
        view.page.wait_for_function("() => window.tilescope.state.number === 3")
        assert (
            view.page.locator(".tensor-card .slice input").count() == 2
        )  # the 3-D tensors: one slice at a time
        view.only_local()


def test_a_race_finding_marks_both_sides(browser, traces, tmp_path):
    from tilescope import Finding, Report
    from tilescope.viewer import write_reports

    trace = tmp_path / "race"
    shutil.copytree(traces["oob"], trace)
    data = json.loads((trace / "launches" / "launch-000001.json").read_text())
    store = next(s for s in data["sites"] if s["expression"].startswith("tl.store"))
    sides = [
        {
            "file": store["file"],
            "line": store["line"],
            "argument": "dst_ptr",
            "element": e,
            "program": p,
            "access": a,
        }
        for e, p, a in (([15, 3], [0, 0, 0], "write"), ([16, 3], [1, 0, 0], "write"))
    ]
    race = Finding(
        "race",
        "error",
        "write-write race",
        data["kernel"],
        store["file"],
        store["line"],
        5,
        [(0, 0, 0), (1, 0, 0)],
        details={"sites": sides},
    )
    write_reports(trace, [Report("racecheck", [race])])
    with _view(browser, trace, "html", tmp_path) as (view, _):
        view.open("#/launch/1")
        view.page.locator("li.finding", has_text="write-write race").click()
        marks = view.page.locator(".mark.selected")
        assert sorted(marks.nth(i).get_attribute("data-element") for i in range(marks.count())) == [
            "15,3",
            "16,3",
        ]
        assert view.page.locator("tr.src-line.selected").get_attribute("data-line") == str(store["line"])
        assert view.page.evaluate("document.body.dataset.program") == "0"
        view.only_local()


@pytest.mark.parametrize("how", ["served", "html"])
def test_selecting_a_source_line_narrows_the_highlight_to_it(browser, traces, tmp_path, how):
    write = [234, 88, 12]
    with _view(browser, traces["add"], how, tmp_path) as (view, _):
        view.open("#/launch/1/program/2")
        assert _pixel(view, "x_ptr", [300]) == READ and _pixel(view, "out_ptr", [300]) == write
        store_line = next(s["line"] for s in view.meta()["sites"] if s["expression"].startswith("tl.store"))
        view.page.click(f'tr.src-line[data-line="{store_line}"]')
        assert _pixel(view, "x_ptr", [300]) != READ and _pixel(view, "out_ptr", [300]) == write
        assert view.page.locator("#ops-table tbody tr").count() == 1
        view.page.click("#all-programs")  # the line over every program
        assert _pixel(view, "out_ptr", [5]) == write and _pixel(view, "out_ptr", [999]) == write
        assert _pixel(view, "x_ptr", [5]) != READ
        view.page.click(f'tr.src-line[data-line="{store_line}"]')  # again: every line
        assert _pixel(view, "out_ptr", [5]) != write
        view.only_local()


def test_a_sliced_map_follows_the_selected_program(browser, mixed, tmp_path):
    with _view(browser, mixed, "html", tmp_path) as (view, _):
        view.open("#/launch/3/program/2")  # batched_scale_kernel: program b works on slice [b, :, :]
        labels = view.page.locator(".tensor-card .slice .meta")
        assert [labels.nth(i).inner_text() for i in range(labels.count())] == ["[2, :, :]", "[2, :, :]"]
        assert _pixel(view, "x_ptr", [2 * 8 + 3, 5]) == READ
        view.only_local()


def _mark_at(view: View, mark, name: str, element: list[int]):
    """``mark`` (a ring of the selected finding) is drawn on ``name``'s map, centred on ``element``."""
    assert mark.get_attribute("data-element") == ",".join(map(str, element))
    k, cell = _cell(view.meta(), name, element)
    center = view.page.evaluate(f"window.tilescope.cellCenter({k}, {cell})")
    box = mark.bounding_box()
    assert abs(box["x"] + box["width"] / 2 - center["x"]) <= 1.5
    assert abs(box["y"] + box["height"] / 2 - center["y"]) <= 1.5


@pytest.mark.parametrize("how", ["served", "cli-html"])
def test_racecheck_finding_marks_both_sides_where_they_happen(browser, clients_trace, tmp_path, how):
    from . import clients_script as script

    store = script.line_of(script.smooth, "tl.store")
    left = script.line_of(script.smooth, "offs - 1")
    with _view(browser, clients_trace, how, tmp_path) as (view, _):
        view.open()
        assert view.page.locator("#launch-list tbody tr").count() == 3
        view.open("#/launch/1")
        item = view.page.locator("li.finding", has_text="read-after-write race")
        assert item.count() == 1 and f"examples.py:{left}" in item.inner_text()
        item.click()
        y_mark = view.page.locator('.tensor-card[data-tensor="y_ptr"] .mark.selected')
        x_mark = view.page.locator('.tensor-card[data-tensor="x_ptr"] .mark.selected')
        assert y_mark.count() == x_mark.count() == 1
        assert view.page.locator(".mark.selected").count() == 2
        shares = view.page.locator('.tensor-card[data-tensor="x_ptr"] .shares')
        assert shares.inner_text().strip() == "· same memory as y_ptr"
        _mark_at(view, y_mark, "y_ptr", [63])  # program 0's store
        _mark_at(view, x_mark, "x_ptr", [63])  # program 1's read of its left neighbour
        labels = view.page.locator(".mark-label")
        assert sorted(labels.nth(i).inner_text() for i in range(labels.count())) == [
            f"load by program (1), line {left}",
            f"store by program (0), line {store}",
        ]
        assert view.page.locator("tr.src-line.selected").get_attribute("data-line") == str(left)
        for line in (left, store):
            row = view.page.locator(f'tr.src-line[data-line="{line}"]')
            assert "has-finding" in row.get_attribute("class")
        assert view.page.evaluate("document.body.dataset.program") == "0"
        view.only_local()


@pytest.mark.parametrize("how", ["served", "cli-html"])
def test_profiler_findings_mark_wasted_sectors_and_masked_lanes(browser, clients_trace, tmp_path, how):
    from . import clients_script as script

    with _view(browser, clients_trace, how, tmp_path) as (view, _):
        view.open("#/launch/2")
        view.page.locator("li.finding", has_text="uncoalesced access").click()
        marks = view.page.locator('.tensor-card[data-tensor="x_ptr"] .mark.selected')
        assert marks.count() == 8 and view.page.locator(".mark.selected").count() == 8
        for r in range(8):  # one lane per sector, down column 0
            _mark_at(view, marks.nth(r), "x_ptr", [r, 0])
        label = view.page.locator(".mark-label")  # one label for the run of marks, not eight
        assert label.count() == 1
        assert label.inner_text() == "sector 1/32 of request 1: 4 of 32 bytes used (+7 more elements)"
        load = script.line_of(script.gather_columns_kernel, "tl.load")
        assert view.page.locator("tr.src-line.selected").get_attribute("data-line") == str(load)
        assert "program (0, 0)" in view.page.inner_text("#program-label")
        view.page.evaluate("() => { location.hash = '#/launch/3'; }")
        view.page.wait_for_function(
            "() => document.body.dataset.ready === '1' && window.tilescope.state.number === 3"
        )
        load = script.line_of(script.softmax_kernel, "tl.load")
        view.page.locator(f'li.finding[data-line="{load}"]', has_text="masked lanes").click()
        marks = view.page.locator('.tensor-card[data-tensor="input_ptr"] .mark.selected')
        assert marks.count() == 8
        _mark_at(view, marks.first, "input_ptr", [1, 0])  # row 0's lane 80: past its 80 columns
        assert view.page.locator("tr.src-line.selected").get_attribute("data-line") == str(load)
        view.only_local()
