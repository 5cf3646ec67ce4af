"""What the viewer computes from a trace equals what the trace says, lane by lane.

The oracle explodes ``tilescope.load_trace(...).ops`` (every lane's address, listed by the reader)
into (program, element, class) triples in plain Python/NumPy, independently of the viewer's
grouped affine expansion, and the viewer's element maps and footprints must agree with it.
"""

from __future__ import annotations

import json
import pickle

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tilescope
from tilescope.clients.tracer import TraceError
from tilescope.clients.tracer.reader import footer_carried
from tilescope.clients.tracer.schema import CARRIED_KEY
from tilescope.viewer import TraceModel
from tilescope.viewer.aggregate import (
    F_INSIDE,
    F_MASKED,
    F_MULTIWRITE,
    F_OUTSIDE,
    F_READ,
    F_WRITE,
    program_runs,
)
from tilescope.viewer.geometry import base_geometry, finish
from tilescope.viewer.pack import compress, pack, unpack
from tilescope.viewer.rows import read_rows


def _oracle(trace_dir, argument):
    """(program, flat element, class) triples of one tensor from the trace's listed lanes."""
    trace = tilescope.load_trace(trace_dir)
    launch = trace.launches.iloc[0]
    gx, gy, _ = launch["grid"]
    args = trace.arguments.set_index("name")
    base, shape = int(args.loc[argument, "address"]), list(args.loc[argument, "shape"])
    numel = int(np.prod(shape))
    out = set()
    for row in trace.ops.itertuples():
        if row.argument != argument:
            continue
        program = row.pid_x + gx * (row.pid_y + gy * row.pid_z)
        elements = (row.address.astype(np.int64) - base) // 4
        enabled = np.ones(len(elements), bool) if row.mask is None else row.mask
        for e, on in zip(elements, enabled, strict=True):
            cls = (
                "masked"
                if not on
                else "outside"
                if not 0 <= e < numel
                else "write"
                if row.kind == "store"
                else "read"
            )
            out.add((int(program), int(e), cls))
    return out, shape


def _viewer_triples(model, argument):
    meta, arrays = model.launch_container(1)
    k = next(i for i, t in enumerate(meta["tensors"]) if t["name"] == argument)
    tmap = model.maps(1, 1 << 22).tensors[k]
    g = tmap.geometry
    out = set()
    for program in range(meta["programs"]):
        for cls, runs in program_runs(tmap, program).items():
            for start, length in zip(runs[0::2], runs[1::2], strict=True):
                for cell in range(start, start + length):
                    cr, cc = divmod(cell, g.cell_cols)
                    row, col = cr - g.before_rows, cc - g.before_cols
                    element = row * g.wrap + col if len(g.shape) == 1 else row * g.shape[-1] + col
                    out.add((program, element, cls))
    return out, tmap


@pytest.mark.parametrize("argument", ["x_ptr", "y_ptr", "out_ptr"])
def test_vector_add_footprints_are_the_traced_lanes(traces, argument):
    model = TraceModel(traces["add"])
    expected, _ = _oracle(traces["add"], argument)
    got, tmap = _viewer_triples(model, argument)
    assert got == expected
    # every element owned by the program whose block holds it; the tail block's masked lanes drawn past n
    n, block = 1000, 128
    g = tmap.geometry
    elements = np.arange(n)
    cells = g.cell_of(*divmod(elements, g.wrap))
    np.testing.assert_array_equal(tmap.owner[cells], elements // block)
    tail = g.cell_of(*divmod(np.arange(n, 1024), g.wrap))
    assert np.all(tmap.flags[tail] & F_MASKED) and not np.any(
        tmap.flags[tail] & (F_READ | F_WRITE | F_INSIDE)
    )
    assert tmap.stats["masked_lanes"] == 1024 - n and tmap.stats["outside_lanes"] == 0
    assert tmap.stats["multiwrite_cells"] == 0


def _group_m_tile(pid, m, n, bm, bn, group_m):
    """The Triton tutorial's GROUP_M program -> (tile row, tile column), in plain Python."""
    num_pid_m, num_pid_n = -(-m // bm), -(-n // bn)
    in_group = group_m * num_pid_n
    first = (pid // in_group) * group_m
    size = min(num_pid_m - first, group_m)
    return first + (pid % in_group) % size, (pid % in_group) // size


def test_grouped_matmul_owner_is_the_group_m_tile(traces):
    model = TraceModel(traces["matmul"])
    meta, _ = model.launch_container(1)
    maps = model.maps(1, 1 << 22)
    c = next(t for t in maps.tensors if t.name == "c_ptr")
    m, n, bm, bn = 96, 80, 16, 16
    expected = np.empty((m, n), np.int32)
    for pid in range(meta["programs"]):
        tm, tn = _group_m_tile(pid, m, n, bm, bn, 2)
        expected[tm * bm : (tm + 1) * bm, tn * bn : (tn + 1) * bn] = pid
    g = c.geometry
    rows, cols = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    np.testing.assert_array_equal(c.owner[g.cell_of(rows, cols)], expected)
    assert not np.any(c.flags & F_MULTIWRITE)
    # each element of A is read by every program of its tile row: ceil(n / bn) of them
    a = next(t for t in maps.tensors if t.name == "a_ptr")
    rows, cols = np.meshgrid(np.arange(m), np.arange(40), indexing="ij")
    assert np.all(a.readers[a.geometry.cell_of(rows, cols)] == -(-n // bn))
    for argument in ("a_ptr", "b_ptr", "c_ptr"):
        expected_triples, _ = _oracle(traces["matmul"], argument)
        got, _ = _viewer_triples(model, argument)
        assert got == expected_triples, argument


def test_out_of_bounds_lanes_and_the_sanitizer_finding(traces):
    model = TraceModel(traces["oob"])
    meta, arrays = model.launch_container(1)
    src = next(k for k, t in enumerate(meta["tensors"]) if t["name"] == "src_ptr")
    finding = next(f for f in meta["findings"] if f["client"] == "sanitizer")
    assert finding["kind"] == "out-of-bounds load"
    load_line = next(
        s["line"] for s in meta["sites"] if "tl.load" in s["source"] and s["expression"].startswith("tl.load")
    )
    assert finding["line"] == load_line
    mark = finding["marks"][0]
    assert (mark["tensor"], mark["element"], mark["row"], mark["col"]) == (src, [50, 0], 50, 0)
    g = meta["tensors"][src]["geometry"]
    assert mark["cell"] == (50 + g["before_rows"]) * g["cell_cols"] + g["before_cols"]
    # rows 50..63 of the last row block were read from outside; the margin holds them
    flags = arrays[f"t{src}.flags"].reshape(g["cell_rows"], g["cell_cols"])
    # (15 margin rows: masked-off lanes of row 63, columns 40..47, wrap into row 64)
    assert g["after_rows"] == 15 and flags[50:64, :40].all() and np.all(flags[50:64, :40] & F_OUTSIDE)
    assert not np.any(flags[:50] & F_OUTSIDE)
    expected, _ = _oracle(traces["oob"], "src_ptr")
    assert meta["tensors"][src]["stats"]["outside_lanes"] == sum(1 for t in expected if t[2] == "outside")
    assert sum(1 for t in expected if t[2] == "outside") == 14 * 40
    line = meta["lines"][str(load_line)]
    assert line["findings"] == 1 and line["outside"] == 14 * 40


def test_without_a_sanitizer_report_the_viewer_finds_the_bad_lanes_itself(traces, tmp_path):
    import shutil

    copy = tmp_path / "oob"
    shutil.copytree(traces["oob"], copy)
    shutil.rmtree(copy / "reports")
    meta, _ = TraceModel(copy).launch_container(1)
    (finding,) = meta["findings"]
    assert finding["client"] == "viewer" and finding["kind"] == "out-of-bounds load"
    assert finding["marks"][0]["element"] == [50, 0] and finding["details"]["lanes"] == 14 * 40
    assert finding["programs"] == [[3, 0, 0], [3, 1, 0], [3, 2, 0]]


def test_op_rows_of_a_program_in_order_with_loop_iterations(traces):
    model = TraceModel(traces["matmul"])
    meta, arrays = model.launch_container(1)
    lo, hi = arrays["ops.offsets"][4], arrays["ops.offsets"][5]
    assert np.all(np.diff(arrays["ops.op"][lo:hi]) > 0)
    kinds = [meta["ops"]["kinds"][k] for k in arrays["ops.kind"][lo:hi]]
    assert kinds.count("load") == 2 * 3 and kinds[-1] == "store"  # K = 40 in blocks of 16: 3 iterations
    depth = meta["ops"]["loop_depth"]
    if not depth:
        pytest.skip("this trace's rows carry no loop records yet (the core fills loops in batched runs soon)")
    assert list(meta["loops"].values()) == ["k"]  # the loop variable's name, from the loop's site
    iterations = arrays["ops.loop_iterations"].reshape(-1, depth)[lo:hi, 0]
    loads = [i for i, kind in zip(iterations, kinds, strict=True) if kind == "load"]
    assert loads == [0, 0, 1, 1, 2, 2]


def test_values_of_a_program_are_its_lanes(traces):
    model = TraceModel(traces["add"])
    x = tilescope.load_trace(traces["add"]).ops
    row = x[(x.argument == "x_ptr") & (x.pid_x == 7)].iloc[0]
    meta, arrays = model.values_container(1, 7)
    tile = next(t for i, t in enumerate(meta["tiles"]) if t["op"] == row.op)
    values = arrays[f"v{meta['tiles'].index(tile)}"].reshape(-1)
    np.testing.assert_array_equal(
        values[: 1000 - 7 * 128], row["values"][: 1000 - 7 * 128].astype(np.float32)
    )
    assert np.isnan(values[1000 - 7 * 128 : 128]).all()  # masked-off lanes


def test_downsampled_maps_keep_cells_aligned_and_counts(traces):
    model = TraceModel(traces["matmul"])
    small = model.maps(1, 1 << 10)
    c = next(t for t in small.tensors if t.name == "c_ptr")
    g = c.geometry
    assert g.cells <= 1 << 10 and g.factor_rows in (1, 2, 4) and g.factor_cols in (1, 2, 4)
    full = next(t for t in model.maps(1, 1 << 22).tensors if t.name == "c_ptr")
    assert (c.flags & F_WRITE).any() and not (c.flags & F_MULTIWRITE).any()
    assert int(np.count_nonzero(full.flags & F_WRITE)) == 96 * 80


def test_geometry_of_views_and_margins():
    g = finish(base_geometry((4, 6), (6, 1), 1000, 4), (-2, 5, 0, 5), 1 << 20)
    assert (g.before_rows, g.after_rows) == (2, 2)
    row, col, inside = g.element_rc(np.array([0, 4 * 23, 4 * 24, -4]))
    assert row.tolist() == [0, 3, 4, -1] and col.tolist() == [0, 5, 0, 5] and inside.tolist() == [1, 1, 0, 0]
    t = base_geometry((3, 5), (1, 3), 0, 4)  # a transposed view: columns are the outer dimension
    row, col, inside = t.element_rc(np.array([4 * 1, 4 * 3, 4 * 15]))
    assert list(zip(row.tolist(), col.tolist(), strict=True)) == [
        (1, 0),
        (0, 1),
        (0, 5),
    ] and inside.tolist() == [1, 1, 0]


def test_rows_read_tolerates_added_columns(traces, tmp_path):
    model = TraceModel(traces["add"])
    part = model.trace.parts[1][0]
    table = pq.read_table(part)
    extra = table.append_column("in_bounds", pa.array([None] * table.num_rows, pa.list_(pa.bool_())))
    extra = extra.replace_schema_metadata({CARRIED_KEY: footer_carried(part)})  # the carried lists
    pq.write_table(extra, tmp_path / "part.parquet")
    rows = read_rows([tmp_path / "part.parquet"], (8, 1, 1))
    assert len(rows) == table.num_rows and rows.lanes.max() == 128


def test_container_round_trip():
    arrays = {
        "a": np.arange(5, dtype=np.int32),
        "b": np.array([1.5, np.nan], np.float32),
        "c": np.zeros((2, 3), np.uint8),
    }
    meta, back = unpack(compress(pack({"x": [1, 2]}, arrays)))
    assert meta == {"x": [1, 2]}
    for name, array in arrays.items():
        np.testing.assert_array_equal(back[name], array)


def test_missing_and_corrupt_traces_name_the_path(traces, tmp_path):
    with pytest.raises(TraceError, match=str(tmp_path / "nope")):
        TraceModel(tmp_path / "nope")
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(traces["add"], broken)
    part = next((broken / "ops").rglob("*.parquet"))
    part.write_bytes(part.read_bytes()[:100])
    with pytest.raises(TraceError, match="part-000000.parquet"):
        TraceModel(broken)


def test_nothing_is_unpickled(traces, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the viewer unpickled something")

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    from tilescope.viewer import render_html

    for name in ("add", "matmul", "oob"):
        model = TraceModel(traces[name])
        assert "tilescope-launch-1" in render_html(model)
        model.values_bytes(1, 0)


def test_reports_beside_the_trace_are_never_overwritten(traces, tmp_path):
    from tilescope.viewer import write_reports

    launcher = traces["launchers"]["oob"]
    sanitizer = [r for r in launcher.reports if r.client == "sanitizer"]
    first = write_reports(tmp_path, sanitizer)
    second = write_reports(tmp_path, sanitizer)
    assert [p.name for p in first + second] == ["sanitizer.json", "sanitizer-2.json"]
    assert json.loads(first[0].read_text())["findings"][0]["details"]["first_element"] == [50, 0]
