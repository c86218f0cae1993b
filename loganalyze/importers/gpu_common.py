"""What the GPU profile importers share: the DuckDB hand-off, source facts and counts.

- :func:`insert_stream` runs one INSERT over a whole Arrow stream (the SQLite readers').
- :class:`RowBuffer` collects rows parsed from text and inserts them as Arrow tables.
- :func:`put_meta` keeps key/value facts about a source; :func:`no_data_error` and
  :func:`set_counts` finish a source; :func:`first_lines` decodes a sniffed head.

SQLite inputs are :mod:`.sqlite_input`, kernel names :mod:`loganalyze.names`, NVTX ranges
:mod:`.nvtx_ranges`.
"""
from __future__ import annotations

import pyarrow as pa

from ..inputs import InputError
from .base import IngestContext


# =========================================================================== DuckDB hand-off
def insert_stream(con, reader: pa.RecordBatchReader, sql: str, params: dict | None = None,
                  stage: bool = True) -> None:
    """Run ``sql`` (which reads ``_batch``) over the whole Arrow stream.

    With ``stage`` the stream is first copied into a temporary table ``_batch`` (columnar, one
    pass): DuckDB cannot know a stream's size, and joining the stream itself to the name
    tables made it build its hash tables on the big side."""
    _stream = reader  # noqa: F841 -- reached by DuckDB's replacement scan (register() would keep it until COMMIT)
    if not stage:
        con.execute(sql.replace("_batch", "_stream"), params or {})
        return
    con.execute("CREATE OR REPLACE TEMP TABLE _batch AS SELECT * FROM _stream WHERE _d = 0")
    try:
        con.execute(sql, params or {})
    finally:
        con.execute("DROP TABLE IF EXISTS _batch")


class RowBuffer:
    """Rows parsed from text, inserted into ``table`` as Arrow tables of ``limit`` rows."""

    def __init__(self, con, table: str, types: dict[str, pa.DataType], source_id: int, limit: int = 100_000):
        self.con, self.table, self.types, self.source_id, self.limit = con, table, types, source_id, limit
        self.cols: dict[str, list] = {c: [] for c in types}
        self.count = 0
        self.total = 0

    def add(self, **values) -> None:
        for c, lst in self.cols.items():
            lst.append(values.get(c))
        self.count += 1
        if self.count >= self.limit:
            self.flush()

    def flush(self) -> None:
        if not self.count:
            return
        arrays = {c: pa.array(v, self.types[c]) for c, v in self.cols.items()}
        arrays["source_id"] = pa.array([self.source_id] * self.count, pa.int32())
        _rows = pa.table(arrays)  # noqa: F841 -- replacement scan, freed after the INSERT
        self.con.execute(f"INSERT INTO {self.table} BY NAME SELECT * FROM _rows")
        self.total += self.count
        self.cols = {c: [] for c in self.types}
        self.count = 0


def put_meta(ctx: IngestContext, items: dict) -> None:
    """Key/value facts about a source (tool version, session start, ...) in gpu_source_meta."""
    rows = [(k, None if v is None else str(v)) for k, v in items.items() if v is not None]
    if not rows:
        return
    tbl = pa.table({
        "source_id": pa.array([ctx.source_id] * len(rows), pa.int32()),
        "key": pa.array([r[0] for r in rows], pa.string()),
        "value": pa.array([r[1] for r in rows], pa.string()),
    })
    ctx.con.register("_meta", tbl)
    try:
        ctx.con.execute("INSERT INTO gpu_source_meta SELECT * FROM _meta")
    finally:
        ctx.con.unregister("_meta")


def no_data_error(ctx: IngestContext, what: str, hint: str = "") -> InputError:
    """The one-line error for a file with nothing usable, naming the first skipped line."""
    ctx.flush_skipped()
    first = ctx.con.execute(
        "SELECT line_no, reason FROM skipped_lines WHERE source_id = ? ORDER BY line_no LIMIT 1", [ctx.source_id]
    ).fetchall()
    why = f" (line {first[0][0]}: {first[0][1]})" if first else (f" ({hint})" if hint else "")
    return InputError(f"{ctx.file.path}: no {what} could be read{why}")


def set_counts(ctx: IngestContext, total: int, parsed: int, non_data: int, skipped: int | None = None) -> None:
    skipped = ctx.skipped_count if skipped is None else skipped
    ctx.source.update(lines_total=total, lines_parsed=parsed, lines_non_verbose=non_data, lines_skipped=skipped)


# =========================================================================== text inputs
def first_lines(head: bytes, limit: int = 200) -> list[str]:
    """Up to ``limit`` decoded lines of a sniffed head (the last, maybe cut, line dropped
    when the head is longer than it)."""
    text = head.decode("utf-8", "replace")
    lines = text.splitlines()
    if len(head) >= (64 << 10) and lines:
        lines = lines[:-1]
    return lines[:limit]
