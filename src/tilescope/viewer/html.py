"""``tilescope view TRACE --html out.html``: the whole view in one file that needs no network at all.

Scripts, styles and data are inlined; the page's content security policy allows no connection,
so it opens from disk, from a CI artifact or in a notebook's sandboxed frame, and can fetch
nothing. To stay under ``max_bytes`` (default 16 MiB) it is built at the finest of a few levels
that fits: element maps of at most 1M cells per tensor (then 256K, 64K, 16K, 4K; a cell then
covers several elements), op rows of every program up to 200K rows (then a sample of programs,
always including those with findings), values heatmaps of a few programs. The page says which
limits it applied. Launches that still do not fit are listed but not embedded.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .assets import asset_text, page_template
from .model import Limits, TraceModel
from .pack import compress, pack, to_base64

DEFAULT_MAX_BYTES = 16 << 20
#: (cells per tensor map, op rows per launch, programs with inlined values, cells per values heatmap)
LEVELS = [
    (1 << 20, 200_000, 8, 64 * 64),
    (1 << 18, 50_000, 4, 64 * 64),
    (1 << 16, 20_000, 2, 32 * 32),
    (1 << 14, 5_000, 0, 32 * 32),
    (1 << 12, 2_000, 0, 16 * 16),
]
_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
    "connect-src 'none'; base-uri 'none'; form-action 'none'"
)


def render_html(model: TraceModel, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """The self-contained page of a trace, at most about ``max_bytes`` (see the module docstring)."""
    index = model.index()
    fixed = (
        len(page_template())
        + sum(len(asset_text(n)) for n in ("app.js", "app.css", "vendor.js"))
        + len(json.dumps(index))
        + 4096
    )
    numbers = [launch["launch"] for launch in index["launches"]]
    for level, (cells, op_rows, value_programs, tile_cells) in enumerate(LEVELS):
        limits = Limits(
            max_cells=cells, max_op_rows=op_rows, tile_cells=tile_cells, value_programs=value_programs
        )
        blobs, total = {}, fixed
        last = level == len(LEVELS) - 1
        for n in numbers:
            meta, arrays = model.launch_container(n, limits)
            blob = to_base64(compress(pack(meta, arrays)))
            if total + len(blob) > max_bytes and not last:
                break
            if total + len(blob) > max_bytes:
                continue  # the coarsest level: skip what does not fit, keep the rest
            blobs[n] = blob
            total += len(blob) + 80
        else:
            return _page(index, blobs, _notes(model, index, limits, blobs, max_bytes, level), total)
    raise AssertionError("unreachable: the last level always returns")


def write_html(model: TraceModel, out: str | os.PathLike, max_bytes: int = DEFAULT_MAX_BYTES) -> Path:
    """Write :func:`render_html` to ``out``; returns the path."""
    path = Path(out)
    path.write_text(render_html(model, max_bytes), encoding="utf-8")
    return path


def _notes(
    model: TraceModel, index: dict, limits: Limits, blobs: dict, max_bytes: int, level: int
) -> list[str]:
    notes = []
    mib = max_bytes / 2**20
    if level:
        notes.append(
            f"This file is limited to {mib:.0f} MiB: element maps are downsampled to at most "
            f"{limits.max_cells:,} cells per tensor, op rows kept for at most about "
            f"{limits.max_op_rows:,} rows per launch (whole programs, those with findings first), "
            f"values of {limits.value_programs} programs per launch. `tilescope view TRACE` serves "
            "the full trace."
        )
    else:
        notes.append(
            f"Self-contained file (limit {mib:.0f} MiB): maps up to {limits.max_cells:,} cells per tensor, "
            f"values heatmaps of up to {limits.value_programs} programs per launch."
        )
    missing = [n["launch"] for n in index["launches"] if n["launch"] not in blobs]
    if missing:
        notes.append(
            f"{len(missing)} launch(es) did not fit and are listed only: {missing[:20]}"
            f"{' ...' if len(missing) > 20 else ''}."
        )
    return notes


def _json(text: str) -> str:
    return text.replace("</", "<\\/").replace("<!--", "<\\u0021--")


def _script(text: str) -> str:
    # inside <script> only "</script" and "<!--" end or confuse the element; JS reads "<\/" as "</"
    import re

    return re.sub(r"</(script)", r"<\\/\1", text, flags=re.IGNORECASE).replace("<!--", "<\\!--")


def _page(index: dict, blobs: dict[int, str], notes: list[str], _total: int) -> str:
    config = json.dumps({"mode": "inline", "notes": notes})
    data = "\n".join(
        f'<script type="application/octet-stream" id="tilescope-launch-{n}">{b}</script>'
        for n, b in blobs.items()
    )
    head = "\n".join(
        [
            f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
            f"<style>{asset_text('app.css')}</style>",
            f'<script type="application/json" id="tilescope-config">{_json(config)}</script>',
            '<script type="application/json" id="tilescope-index">'
            f"{_json(json.dumps(index, default=str))}</script>",
            data,
            f"<script>{_script(asset_text('vendor.js'))}</script>",
            f"<script>{_script(asset_text('app.js'))}</script>",
        ]
    )
    return page_template().replace("<!--TILESCOPE-HEAD-->", head)
