"""Part files: null columns left out (trace format 5), a new file when a column appears, the same
rows read back whether the launch wrote in the kernel's thread or on the writer thread."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tilescope.clients.tracer.parts import PartWriter
from tilescope.clients.tracer.reader import fill_carried, read_part
from tilescope.clients.tracer.schema import CARRIED_KEY, KEPT, ROW_SCHEMA


def _table(n: int, op: int, masked: bool) -> pa.Table:
    """``n`` rows of one op as the tracer builds them: the kept columns, one lane each, a mask when
    ``masked``, the per-record columns in the metadata."""
    columns = []
    for field in ROW_SCHEMA:
        if field.name in KEPT:
            data = np.full(n, op) if field.name == "op" else np.arange(n) % 7
            columns.append(pa.array(data, field.type))
        elif field.name == "mask" and masked:
            columns.append(pa.array([[bool(i % 2)] for i in range(n)], field.type))
        else:
            columns.append(pa.nulls(n, field.type))
    # launch, batch, kind, site, argument, dtype, shape, loop_sites, loop_iterations, address_sites,
    # mask_sites, attrs
    carried = json.dumps({str(op): [1, op, "load", op - 1, "x_ptr", None, [op], [], [], None, [op, 1], None]})
    return pa.Table.from_arrays(columns, schema=ROW_SCHEMA.with_metadata({CARRIED_KEY: carried}))


def _footed(table: pa.Table) -> tuple[pa.Table, dict]:
    """``table`` as the tracer hands it to a part writer: with its footer entries beside it."""
    return table, json.loads(table.schema.metadata[CARRIED_KEY.encode()])


@pytest.mark.parametrize("inline_bytes", [0, 1 << 30])
def test_null_columns_left_out_and_read_back(tmp_path, inline_bytes):
    tables = [_table(5, 0, False), _table(3, 1, False), _table(4, 2, True), _table(2, 3, False)]
    writer = PartWriter(tmp_path, row_group_bytes=1, inline_bytes=inline_bytes)
    writer.begin()
    for t in tables:
        writer.add(lambda t=t: [_footed(t)], t.num_rows, 8)  # each its own row group
    writer.commit()
    writer.close()
    parts = sorted(tmp_path.glob("part-*.parquet"))
    assert writer.parts == len(parts) == 2  # the mask starts a second file; the last table fits in it
    assert [set(pq.read_schema(p).names) for p in parts] == [set(KEPT), set(KEPT) | {"mask"}]
    back = pa.concat_tables([read_part(p) for p in parts])
    assert back.equals(pa.concat_tables([fill_carried(t) for t in tables]))
    shapes = [[op] for op, t in enumerate(tables) for _ in range(t.num_rows)]
    assert back.column("shape").to_pylist() == shapes


@pytest.mark.parametrize("inline_bytes", [0, 1 << 30])
def test_a_write_error_raises_in_the_kernel_thread(tmp_path, inline_bytes):
    writer = PartWriter(tmp_path / "gone", row_group_bytes=1, inline_bytes=inline_bytes)
    writer.begin()
    with pytest.raises(OSError):
        writer.add(lambda: [_footed(_table(3, 0, False))], 3, 8)
        writer.commit()
        writer.close()


def test_an_interrupted_close_leaves_a_writer_that_aborts_and_writes_again(tmp_path, monkeypatch):
    """Ctrl-C inside a part file's close (run in the kernel's thread) raises at once; the attempt's
    abort then deletes its file without touching the half-closed writer, and the next attempt writes."""
    real_close = pq.ParquetWriter.close
    interrupts = [KeyboardInterrupt()]

    def close_then_interrupt(self):
        real_close(self)
        if interrupts:
            raise interrupts.pop()

    monkeypatch.setattr(pq.ParquetWriter, "close", close_then_interrupt)
    writer = PartWriter(tmp_path, row_group_bytes=1, inline_bytes=1 << 30)
    writer.begin()
    writer.add(lambda: [_footed(_table(3, 0, False))], 3, 8)
    with pytest.raises(KeyboardInterrupt):
        writer.commit()
    writer.abort()  # what the engine does with an interrupted attempt
    assert list(tmp_path.iterdir()) == []
    writer.begin()
    writer.add(lambda: [_footed(_table(2, 1, False))], 2, 8)
    writer.commit()
    writer.close()
    parts = sorted(tmp_path.glob("part-*.parquet"))
    assert len(parts) == 1
    assert read_part(parts[0]).equals(fill_carried(_table(2, 1, False)))
