"""Every shape of access the engine records reaches the page: gathers (listed lanes and row form), atomics,
3-D tensors (sliced), tensor descriptors and transposed views, several launches in one trace."""

from __future__ import annotations

from dataclasses import fields

import numpy as np

import tilescope
from tests.profiler.kernels import embedding_kernel
from tilescope.clients.tracer import rows as tracer_rows
from tilescope.viewer import TraceModel, render_html
from tilescope.viewer.aggregate import F_ATOMIC, F_READ, F_WRITE
from tilescope.viewer.rows import affine_span, lanes_of


def test_every_launch_builds_and_renders(mixed):
    model = TraceModel(mixed)
    index = model.index()
    assert [launch["kernel"] for launch in index["launches"]] == [
        "gather_kernel",
        "histogram_kernel",
        "batched_scale_kernel",
        "descriptor_copy_kernel",
        "column_kernel",
    ]
    for launch in index["launches"]:
        meta, arrays = model.launch_container(launch["launch"])
        assert meta["tensors"], launch["kernel"]
        for k, t in enumerate(meta["tensors"]):
            assert arrays[f"t{k}.flags"].size == t["geometry"]["cell_rows"] * t["geometry"]["cell_cols"]
    html = render_html(model)
    assert all(f'id="tilescope-launch-{n}"' in html for n in range(1, 6))


def _tensor(model, launch, name):
    meta, _ = model.launch_container(launch)
    k = next(i for i, t in enumerate(meta["tensors"]) if t["name"] == name)
    return model.maps(launch, 1 << 22).tensors[k]


def test_gathered_elements_are_read_by_the_program_that_gathered_them(mixed):
    model = TraceModel(mixed)
    x = _tensor(model, 1, "x_ptr")
    idx = tilescope.load_trace(mixed).ops
    rows = idx[(idx.launch == 1) & (idx.argument == "x_ptr")]
    base = int(model.launch_data(1)["arguments"][0]["address"])
    for row in rows.itertuples():
        elements = (row.address.astype(np.int64) - base) // 4
        cells = x.geometry.cell_of(*divmod(elements, x.geometry.wrap))
        assert np.all(x.owner[cells] == row.pid_x)
    assert np.all(x.flags[x.geometry.cell_of(*divmod(np.arange(256), x.geometry.wrap))] & F_READ)


def test_atomics_mark_their_bins_written_by_every_program(mixed):
    bins = _tensor(TraceModel(mixed), 2, "bins_ptr")
    cells = bins.geometry.cell_of(*divmod(np.arange(8), bins.geometry.wrap))
    assert np.all(bins.flags[cells] & F_ATOMIC) and np.all(bins.flags[cells] & F_WRITE)
    assert np.all(bins.writers[cells] >= 2)


def test_three_dimensional_tensors_flatten_into_slices(mixed):
    cube = _tensor(TraceModel(mixed), 3, "x_ptr")
    g = cube.geometry
    assert (g.rows, g.cols, g.slice_rows) == (24, 16, 8)
    rows, cols = np.meshgrid(np.arange(24), np.arange(16), indexing="ij")
    np.testing.assert_array_equal(cube.owner[g.cell_of(rows, cols)], rows // 8)


def test_descriptor_tiles_and_transposed_views(mixed):
    model = TraceModel(mixed)
    src = _tensor(model, 4, "src_ptr")
    rows, cols = np.meshgrid(np.arange(32), np.arange(64), indexing="ij")
    owner = src.owner[src.geometry.cell_of(rows, cols)]
    np.testing.assert_array_equal(owner, (rows // 16) + 2 * (cols // 32))
    column = _tensor(model, 5, "x_ptr")  # square.T, strides (1, 16): program c reads x_ptr + c + 16 * j
    g = column.geometry
    rows, cols = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    np.testing.assert_array_equal(column.owner[g.cell_of(rows, cols)], rows)  # = view row c, x_ptr[c, j]
    assert column.stats["outside_lanes"] == 0


def test_a_tensor_touched_at_two_lines_keeps_per_line_footprints(tmp_path):
    from tilescope.viewer.aggregate import program_runs

    from .kernels_misc import scale_in_place_kernel

    x = np.ones(100, np.float32)
    tilescope.trace(scale_in_place_kernel, clients="tracer", trace_dir=tmp_path / "t")[(2,)](x, 100, BLOCK=64)
    model = TraceModel(tmp_path / "t")
    meta, arrays = model.launch_container(1)
    (t,) = meta["tensors"]
    assert t["site_runs"] and len(t["sites"]) == 2
    sites = {s["site"]: s for s in meta["sites"]}
    load_site, store_site = sorted(t["sites"], key=lambda s: sites[s]["line"])
    group, start, length = (arrays[f"t0.site_runs_{n}"] for n in ("group", "start", "length"))
    per = {}
    for g, s0, n in zip(group, start, length, strict=True):
        program, rest = divmod(int(g), 2 * 4)
        site = t["sites"][rest // 4]
        per.setdefault((program, site, rest % 4), []).append((int(s0), int(n)))
    assert per[(1, load_site, 0)] == [(64, 36)] and per[(1, store_site, 1)] == [(64, 36)]
    assert (1, load_site, 1) not in per and (1, store_site, 0) not in per
    tmap = model.maps(1, 1 << 22).tensors[0]
    assert program_runs(tmap, 1)["read"] == [64, 36] and program_runs(tmap, 1)["write"] == [64, 36]
    assert np.all(tmap.readers[:100] == 1) and np.all(tmap.writers[:100] == 1)  # distinct programs, not sites
    assert not np.any(tmap.flags[:100] & 32)  # each element read and written by the same program: no conflict


def test_gathers_in_row_form_draw_as_their_listed_lanes(tmp_path, monkeypatch):
    """An embedding lookup's gather written as one offset per block row (trace format 3) gives the
    lanes, spans and element maps of the same launch traced lane by lane."""
    rng = np.random.default_rng()
    idx = rng.integers(0, 40, 6 * 4)
    w = rng.random((40, 16), dtype=np.float32)

    def traced(path):
        out = np.empty((24, 16), np.float32)
        tilescope.trace(embedding_kernel, clients="tracer", trace_dir=path)[(6,)](idx, w, out, D=16, ROWS=4)
        np.testing.assert_array_equal(out, w[idx])
        return TraceModel(path)

    in_rows = traced(tmp_path / "rows")
    monkeypatch.setattr(tracer_rows, "_row_form", lambda *args: None)
    listed = traced(tmp_path / "lanes")
    lanes = {}
    for name, model in (("rows", in_rows), ("lanes", listed)):
        rows = model.rows(1)
        address = next(a["address"] for a in model.launch_data(1)["arguments"] if a["name"] == "w_ptr")
        selected = np.flatnonzero(rows.argument == rows.arguments.index("w_ptr"))
        got = [lane for lane in lanes_of(rows, selected, address)]
        row, delta = (np.concatenate([getattr(g, f) for g in got]) for f in ("row", "delta"))
        order = np.lexsort((delta, row))
        lanes[name] = row[order], delta[order]
        if name == "rows":
            assert rows.table.column("address_rows").is_valid().to_numpy(zero_copy_only=False)[selected].all()
            strided, lo, hi = affine_span(rows, selected, address)
            assert strided.all()
            np.testing.assert_array_equal(lo, [delta[row == r].min() for r in selected])
            np.testing.assert_array_equal(hi, [delta[row == r].max() for r in selected])
    np.testing.assert_array_equal(lanes["rows"][0], lanes["lanes"][0])
    np.testing.assert_array_equal(lanes["rows"][1], lanes["lanes"][1])
    for a, b in zip(in_rows.maps(1, 1 << 22).tensors, listed.maps(1, 1 << 22).tensors, strict=True):
        for f in fields(a):
            if isinstance(getattr(a, f.name), np.ndarray):
                np.testing.assert_array_equal(getattr(a, f.name), getattr(b, f.name), err_msg=f.name)
