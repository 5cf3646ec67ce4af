"""The tracer client: rows on disk match the launch, abandoned attempts never reach the trace,
values modes, many launches, and errors that name the file."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest
import triton
import triton.language as tl

import tilescope
from tilescope.clients.tracer import TraceError
from tilescope.clients.tracer.reader import read_part
from tilescope.examples.vector_add import add_kernel


@triton.jit
def branchy_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """Odd programs take a different path: batched execution aborts and replays the first attempt."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if pid % 2 == 1:
        x = x * 2.0
        tl.store(out_ptr + offs, x)
    else:
        tl.store(out_ptr + offs, x + 1.0)


@triton.jit
def gather_kernel(x_ptr, idx_ptr, out_ptr, BLOCK: tl.constexpr):
    """``out = x[idx]``: the gather's addresses depend on data, the other two ops' do not."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + tl.load(idx_ptr + offs)))


def _add(trace_dir, n=3000, block=1024, **options):
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    out = np.empty_like(x)
    launcher = tilescope.trace(add_kernel, clients="tracer", trace_dir=trace_dir, **options)
    launcher[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    return launcher, x, out


def test_rows_match_the_launch(tmp_path):
    _, x, out = _add(tmp_path / "t", values="all")
    trace = tilescope.load_trace(tmp_path / "t")
    ops = trace.ops
    assert list(trace.launches["status"]) == ["complete"]
    assert len(ops) == 3 * 3  # 3 memory ops x 3 programs
    loads = ops[(ops.kind == "load") & (ops.argument == "x_ptr")].sort_values("pid_x")
    assert list(loads.active_lanes) == [1024, 1024, 3000 - 2048]
    assert loads["mask"].iloc[0] is None  # every lane enabled
    tail = loads.iloc[2]
    np.testing.assert_array_equal(tail["mask"], np.arange(2048, 3072) < 3000)
    np.testing.assert_array_equal(tail["address"] - tail["address"][0], np.arange(1024) * 4)
    np.testing.assert_array_equal(loads.iloc[0]["values"], x[:1024])
    stores = ops[ops.kind == "store"]
    assert stores.bytes.sum() == 3000 * 4
    sites = trace.sites.set_index("site")
    assert "tl.store" in sites.loc[stores.site.iloc[0], "source"]


def test_data_dependent_addresses_are_listed_and_read_back(tmp_path):
    x = np.arange(256, dtype=np.float32)
    idx = np.random.default_rng(0).permutation(256).astype(np.int32)
    out = np.empty_like(x)
    tilescope.trace(gather_kernel, clients="tracer", trace_dir=tmp_path / "t")[(4,)](x, idx, out, BLOCK=64)
    trace = tilescope.load_trace(tmp_path / "t")
    ops = trace.ops.sort_values(["op", "pid_x"])
    by_argument = {name: np.concatenate(rows["address"].tolist()) for name, rows in ops.groupby("argument")}
    np.testing.assert_array_equal(by_argument["x_ptr"], x.ctypes.data + idx.astype(np.uint64) * 4)
    lanes = np.arange(256, dtype=np.uint64)
    np.testing.assert_array_equal(by_argument["idx_ptr"], idx.ctypes.data + lanes * 4)
    stored = read_part(trace.parts[1][0], ["argument", "address", "address_strides"]).to_pandas()
    listed = stored[stored["address"].notna()]
    assert set(listed["argument"]) == {"x_ptr"} and stored["address_strides"].isna().sum() == len(listed)
    assert trace.table(["argument", "address"]).column_names == ["argument", "address"]


def test_abandoned_attempts_are_never_written(tmp_path):
    x = np.arange(4 * 64, dtype=np.float32)
    out = np.empty_like(x)
    tilescope.trace(branchy_kernel, clients="tracer", trace_dir=tmp_path / "t", values="all")[(4,)](
        x, out, BLOCK=64)
    np.testing.assert_array_equal(out.reshape(4, 64)[0], x[:64] + 1)
    trace = tilescope.load_trace(tmp_path / "t")
    ops = trace.ops
    # each program: one load and one store, exactly once, though the first attempt ran all four together
    assert sorted(ops.groupby("pid_x").size()) == [2, 2, 2, 2]
    assert trace.launches["programs"].tolist() == [4]
    assert not list((tmp_path / "t").rglob("*.tmp"))
    stored = ops[ops.kind == "store"].set_index("pid_x")["values"]
    np.testing.assert_array_equal(stored[1], x[64:128] * 2)


def test_relaunch_adds_a_launch_and_keeps_the_first(tmp_path):
    launcher, _, _ = _add(tmp_path / "t")
    first = (tmp_path / "t" / "launches" / "launch-000001.json").read_text()
    n = 100
    launcher[(1,)](np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32), n, BLOCK=1024)
    assert (tmp_path / "t" / "launches" / "launch-000001.json").read_text() == first
    trace = tilescope.load_trace(tmp_path / "t")
    assert trace.launches["launch"].tolist() == [1, 2]
    assert trace.table(["launch"], launches=[2]).num_rows == 3


def test_values_off_and_sampled(tmp_path):
    _add(tmp_path / "off")
    assert tilescope.load_trace(tmp_path / "off").ops["values"].isna().all()
    _add(tmp_path / "sample", n=16 * 64, block=64, values="sample", sample_programs=4)
    ops = tilescope.load_trace(tmp_path / "sample").ops
    kept = sorted(set(ops[ops["values"].notna()].pid_x))
    assert kept == [0, 5, 10, 15]


def test_existing_directory_is_never_overwritten(tmp_path):
    _add(tmp_path / "t")
    with pytest.raises(TraceError, match="already exists"):
        _add(tmp_path / "t")
    _add(tmp_path / "t", append=True)
    assert len(tilescope.load_trace(tmp_path / "t").launches) == 2
    _add(tmp_path / "t", force=True)
    assert len(tilescope.load_trace(tmp_path / "t").launches) == 1
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(TraceError, match="not a tilescope trace"):
        _add(tmp_path / "other", force=True)


def test_corrupt_and_truncated_files_are_named(tmp_path):
    _add(tmp_path / "t")
    part = next((tmp_path / "t" / "ops").rglob("part-*.parquet"))
    part.write_bytes(part.read_bytes()[:-20])
    with pytest.raises(TraceError, match=str(part.name)):
        tilescope.load_trace(tmp_path / "t")
    _add(tmp_path / "u")
    launch = tmp_path / "u" / "launches" / "launch-000001.json"
    launch.write_text("{not json")
    with pytest.raises(TraceError, match="launch-000001.json"):
        tilescope.load_trace(tmp_path / "u")
    with pytest.raises(TraceError, match="trace.json is missing"):
        tilescope.load_trace(tmp_path)


def test_reports_collects_every_launcher(tmp_path):
    launcher, _, _ = _add(tmp_path / "t")
    assert any(r is not None and r.summary.get("trace_dir") == str(tmp_path / "t")
               for r in tilescope.reports())
    assert launcher.reports[0].summary["rows"] == 9


def test_unknown_values_mode(tmp_path):
    with pytest.raises(ValueError, match="off, sample, all"):
        _add(tmp_path / "t", values="some")


def _as_version(root, version):
    """Rewrite the trace at ``root`` as trace format 2, 4, 5 or 6 wrote it: every column in every part
    file (version 2: no ``address_rows`` column; its rows had no row offsets), or for version 6 the
    per-row columns (every row holding its own, ``pid_y`` to ``bytes`` in every part) and a footer
    of the per-record ones; ``version`` in the manifest, the launch files and the Parquet metadata."""
    import json

    from tilescope.clients.tracer.reader import footer_carried
    from tilescope.clients.tracer.schema import (
        CARRIED_KEY,
        FOOTER,
        KEPT_6,
        OPS_SCHEMA,
        part_schema,
        schema_of,
    )  # fmt: skip

    old = schema_of(version).with_metadata({b"format": b"tilescope-trace", b"version": str(version).encode()})
    for part in root.rglob("part-*.parquet"):
        names = set(pq.read_schema(part).names)
        assert names < set(OPS_SCHEMA.names) and not names & set(FOOTER)  # version 6 on: in the footer
        entries = json.loads(footer_carried(part))
        assert all(len(e) == len(FOOTER) + 1 for e in entries.values())  # version 7: and the uniform ones
        assert any(e[-1] for e in entries.values())
        table = read_part(part)
        if version == 6:
            kept = KEPT_6 | {c for c in table.column_names
                             if c not in FOOTER and table.column(c).null_count < len(table)}  # fmt: skip
            table = table.select([f.name for f in OPS_SCHEMA if f.name in kept]).cast(part_schema(kept))
            footer = {CARRIED_KEY: json.dumps({op: e[: len(FOOTER)] for op, e in entries.items()})}
            pq.write_table(table.replace_schema_metadata({**old.metadata, **footer}), part)
            continue
        if version == 2:
            assert table.column("address_rows").null_count == table.num_rows
            table = table.drop_columns(["address_rows"])
        pq.write_table(table.cast(old), part)
    for file in [root / "trace.json", *(root / "launches").glob("*.json")]:
        file.write_text(json.dumps({**json.loads(file.read_text()), "version": version}))


@pytest.mark.parametrize("version", [2, 4, 5, 6])
def test_older_traces_read_and_are_not_appended_to(tmp_path, version):
    from tilescope.viewer import TraceModel

    _add(tmp_path / "t", n=41 * 64 - 5, block=64, values="all")  # 41 rows a record: uniform ones in footers
    now = tilescope.load_trace(tmp_path / "t").ops
    drawn = TraceModel(tmp_path / "t").maps(1, 1 << 22).tensors
    _as_version(tmp_path / "t", version)
    trace = tilescope.load_trace(tmp_path / "t")
    assert trace.version == version
    then = trace.ops
    assert list(then.columns) == list(now.columns)
    assert then["address_rows"].isna().all() or version != 2
    for column in ("op", "pid_x", "pid_y", "pid_z", "active_lanes", "bytes", "shape", "loop_sites",
                   "address_strides", "address", "mask", "values", "coords", "attrs"):  # fmt: skip
        for a, b in zip(then[column], now[column], strict=True):
            np.testing.assert_array_equal(a, b)
    for before, after in zip(drawn, TraceModel(tmp_path / "t").maps(1, 1 << 22).tensors, strict=True):
        np.testing.assert_array_equal(before.flags, after.flags)
        np.testing.assert_array_equal(before.owner, after.owner)
    with pytest.raises(TraceError, match=f"version {version} is not supported .*appends to version 7"):
        _add(tmp_path / "t", append=True)
