"""The on-disk trace format: its name, version, Arrow schema of the ``ops`` table and file layout.

``docs/trace-format.md`` documents every field. Bump :data:`VERSION` on any change a reader of an
older trace would misread; readers refuse versions they do not know (they read every version in
:data:`READABLE`; a table of an older version gains the newer columns as nulls).
"""

from __future__ import annotations

import pyarrow as pa

FORMAT = "tilescope-trace"
VERSION = 7
#: versions a reader takes: version 2 lacks ``address_rows`` (no row had row offsets); up to version 3
#: every row repeats its record's :data:`CARRIED` lists, from version 4 only a record's first row of a
#: part file carries them (the others are null; :func:`reader.fill_carried` restores them); from
#: version 5 a part file leaves out the columns that are null on all its rows (:data:`OMITTED_FROM`);
#: from version 6 a part file's footer holds the per-record columns (:data:`FOOTER`), not its columns;
#: from version 7 it also holds a record's :data:`UNIFORM` columns when they are the same on all its rows
READABLE = (2, 3, 4, 5, 6, 7)

MANIFEST = "trace.json"
LAUNCHES = "launches"
OPS = "ops"
PART_SUFFIX = ".parquet"
TEMP_SUFFIX = ".tmp"


def launch_stem(launch: int) -> str:
    """File stem of one launch: ``launch-000001``."""
    return f"launch-{launch:06d}"


def _list(item: pa.DataType) -> pa.DataType:
    return pa.list_(pa.field("element", item))


_TEXT = pa.dictionary(pa.int32(), pa.string())

OPS_SCHEMA = pa.schema([
    ("launch", pa.int32()),
    ("op", pa.int64()),
    ("batch", pa.int32()),
    ("kind", _TEXT),
    ("site", pa.int32()),
    ("pid_x", pa.int32()),
    ("pid_y", pa.int32()),
    ("pid_z", pa.int32()),
    ("argument", _TEXT),
    ("dtype", _TEXT),
    ("shape", _list(pa.int32())),
    ("loop_sites", _list(pa.int32())),
    ("loop_iterations", _list(pa.int32())),
    ("address_sites", _list(pa.int32())),
    ("mask_sites", _list(pa.int32())),
    ("active_lanes", pa.int32()),
    ("bytes", pa.int64()),
    ("address_base", pa.uint64()),
    ("address_strides", _list(pa.int64())),
    ("address_rows", _list(pa.int64())),
    ("address", _list(pa.uint64())),
    ("mask", _list(pa.bool_())),
    ("values", _list(pa.float64())),
    ("coords", _list(pa.int64())),
    ("attrs", _TEXT),
], metadata={b"format": FORMAT.encode(), b"version": str(VERSION).encode()})

#: the per-record list columns that, from version 4, only the first row of a record in a part holds
#: (version 6 keeps them in the footer, :data:`FOOTER`)
CARRIED = ("shape", "loop_sites", "loop_iterations", "address_sites", "mask_sites")
#: the per-record columns (one value or list per op record, the same on all its rows) that a part
#: file of version 6 holds in its footer instead of columns (:data:`CARRIED_KEY`)
FOOTER = ("launch", "batch", "kind", "site", "argument", "dtype", *CARRIED, "attrs")
#: key of a version 6 part file's footer (Parquet key-value metadata; of an Arrow table the tracer
#: builds, its schema metadata) holding its records' :data:`FOOTER` columns as JSON, by op:
#: ``{"<op>": [launch, batch, kind, ..., attrs]}`` in :data:`FOOTER` order
CARRIED_KEY = "tilescope.carried"
#: the per-row columns that a part file of version 7 holds in its footer for a record whose rows all
#: have the same value (not null) in them: the last item of the record's footer entry is an object
#: from those column names to their values (``{"pid_y": 0, "active_lanes": 64, ...}``); the rows
#: of such a record are null in the column itself (a part leaves it out when every row is)
UNIFORM = ("pid_y", "pid_z", "active_lanes", "bytes", "address_strides")
#: the columns of the tables the tracer writes (version 6 on): every column but the :data:`FOOTER` ones
ROW_SCHEMA = pa.schema([f for f in OPS_SCHEMA if f.name not in FOOTER], metadata=OPS_SCHEMA.metadata)

#: the columns a version added: a part of an older version lacks them
ADDED = {3: ("address_rows",)}


#: the columns every part file of version 7 holds (never null)
KEPT = frozenset({"op", "pid_x"})
#: the columns every part file of version 6 holds
KEPT_6 = KEPT | {"pid_y", "pid_z", "active_lanes", "bytes"}
#: the columns every part file of version 5 holds
KEPT_5 = KEPT_6 | {"launch", "batch", "kind", "site"}
#: the first version whose part files leave out columns that are null on every row of the file
OMITTED_FROM = 5
#: the first version whose part files keep the :data:`FOOTER` columns in their footer
FOOTER_FROM = 6
#: the first version whose part files keep a record's :data:`UNIFORM` columns in their footer
UNIFORM_FROM = 7


def schema_of(version: int) -> pa.Schema:
    """The ops schema of trace format ``version`` (one of :data:`READABLE`)."""
    missing = [name for v, names in ADDED.items() if v > version for name in names]
    return pa.schema([f for f in OPS_SCHEMA if f.name not in missing])


def part_schema(columns: set[str]) -> pa.Schema:
    """The schema of a part file holding ``columns``: those fields of :data:`OPS_SCHEMA`, in its order."""
    return pa.schema([f for f in OPS_SCHEMA if f.name in columns], metadata=OPS_SCHEMA.metadata)


def fits(schema: pa.Schema, version: int) -> bool:
    """Whether a part file's ``schema`` is one trace format ``version`` writes: its ops schema, or
    from :data:`OMITTED_FROM` on, some of its fields in order."""
    if version < OMITTED_FROM:
        return schema.equals(schema_of(version), check_metadata=False)
    names = set(schema.names)
    kept = KEPT if version >= UNIFORM_FROM else KEPT_6 if version >= FOOTER_FROM else KEPT_5
    return kept <= names and schema.equals(part_schema(names), check_metadata=False)


#: Parquet writer settings: delta-encoded listed addresses (consecutive lanes differ by a stride, so
#: they pack to a few bits each), no dictionaries (the repeated text columns are in the footer), no
#: general-purpose compression (it costs more time than it saves on delta-packed data).
PARQUET_OPTIONS = dict(
    compression="none",
    use_dictionary=False,
    column_encoding={"address.list.element": "DELTA_BINARY_PACKED",
                     "address_rows.list.element": "DELTA_BINARY_PACKED",
                     "coords.list.element": "DELTA_BINARY_PACKED"},
    write_statistics=False,
)


def parquet_options(columns: set[str]) -> dict:
    """:data:`PARQUET_OPTIONS` for a part file holding ``columns``."""
    return {**PARQUET_OPTIONS,
            "column_encoding": {k: v for k, v in PARQUET_OPTIONS["column_encoding"].items()
                                if k.split(".", 1)[0] in columns}}  # fmt: skip
