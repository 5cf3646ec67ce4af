"""Regenerate the screenshots of docs/visualizer.md: four example kernels in tilescope view.

Runs each kernel under the tracer and the sanitizer or the race detector
(tilescope.viewer.examples), writes the self-contained HTML view, opens it in Debian's Chromium
(headless, through Playwright) and saves a PNG into docs/images/.
Usage: .venv/bin/python scripts/visualizer_screenshots.py
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from tilescope.viewer import TraceModel, write_html
from tilescope.viewer.examples import grouped_matmul_trace, out_of_bounds_trace, race_trace, vector_add_trace

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
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
READY = "() => document.body.dataset.ready === '1'"


def _vector_add(page) -> None:
    page.keyboard.press("ArrowLeft")  # the last program: its block is cut by the tail mask


def _matmul(page) -> None:
    page.select_option("#mode", "order")
    page.evaluate(
        "() => { const s = document.getElementById('program-slider'); s.value = 9; "
        "s.dispatchEvent(new Event('input')); }"
    )


def _out_of_bounds(page) -> None:
    page.click("li.finding")


def _race(page) -> None:
    page.click("li.finding >> text=read-after-write race")


SHOTS = {
    "viewer-vector-add.png": (lambda d: vector_add_trace(d, n=1000, block=128, values="all"), _vector_add),
    "viewer-grouped-matmul.png": (
        lambda d: grouped_matmul_trace(d, m=128, n=128, k=64, block_m=16, block_n=16, block_k=32, group_m=2),
        _matmul,
    ),
    "viewer-out-of-bounds.png": (lambda d: out_of_bounds_trace(d), _out_of_bounds),
    "viewer-race.png": (lambda d: race_trace(d), _race),
}


def main() -> None:
    from playwright.sync_api import sync_playwright

    IMAGES.mkdir(parents=True, exist_ok=True)
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for name, (make, act) in SHOTS.items():
            trace_dir = Path(tmp) / name.removesuffix(".png")
            make(trace_dir)
            html = write_html(TraceModel(trace_dir), Path(tmp) / f"{trace_dir.name}.html")
            page = browser.new_page(viewport={"width": 1440, "height": 1000}, device_scale_factor=1)
            page.goto(html.as_uri() + "#/launch/1")
            page.wait_for_function(READY)
            act(page)
            page.wait_for_timeout(300)
            height = min(1900, page.evaluate("document.documentElement.scrollHeight"))
            page.screenshot(
                path=str(IMAGES / name),
                full_page=True,
                clip={"x": 0, "y": 0, "width": 1440, "height": height},
            )
            page.close()
            print(f"wrote {IMAGES / name}")
        browser.close()


if __name__ == "__main__":
    main()
