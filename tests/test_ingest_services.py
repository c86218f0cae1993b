"""The shared ingest services of importers/base.py: finishing a source, skipped lines, the
Arrow hand-off and row buffers typed from the schema."""
from __future__ import annotations

import gzip

import duckdb
import pyarrow as pa
import pytest

from loganalyze.importers.base import (IngestContext, RowBuffer, arrow_types, create_arrow_table, insert_arrow,
                                      write_parquet)
from loganalyze.inputs import InputError, InputFile
from loganalyze.store import Store


@pytest.fixture
def ctx(tmp_path):
    p = tmp_path / "some.log"
    p.write_bytes(b"a\nb\n")
    store = Store(":memory:")
    yield IngestContext(con=store.con, source_id=7, file=InputFile(str(p)))
    store.close()


def skipped_rows(ctx):
    return ctx.con.execute("SELECT source_id, line_no, reason, text FROM skipped_lines ORDER BY line_no").fetchall()


def test_first_skip_pending_or_flushed(ctx):
    assert ctx.first_skip() is None
    ctx.skip(5, "late", b"five\r\n")
    ctx.skip(3, "early", "three")
    assert ctx.first_skip() == (3, "early")
    ctx.flush_skipped()
    assert ctx.first_skip() == (3, "early")
    assert skipped_rows(ctx) == [(7, 3, "early", "three"), (7, 5, "late", "five")]


def test_clear_skipped_drops_flushed_and_pending(ctx):
    ctx.skip(1, "x")
    ctx.flush_skipped()
    ctx.skip(2, "y")
    ctx.clear_skipped()
    assert (ctx.skipped_count, ctx.first_skip()) == (0, None)
    ctx.flush_skipped()
    assert skipped_rows(ctx) == []


def test_finish_fills_counts_and_warns(ctx):
    ctx.skip(4, "malformed: bad")
    ctx.finish(10, 6)
    assert ctx.source == {"lines_total": 10, "lines_parsed": 6, "lines_skipped": 1, "lines_non_verbose": 3}
    assert ctx.warnings == [f"{ctx.file.path}: 1 line(s) skipped (first: line 4, malformed: bad; "
                            "see 'loganalyze skipped')"]
    assert skipped_rows(ctx) == [(7, 4, "malformed: bad", None)]


def test_finish_with_explicit_non_data_and_no_warning(ctx):
    ctx.skip(2, "r")
    ctx.finish(3, 1, 0, warn=False)
    assert ctx.source["lines_non_verbose"] == 0 and ctx.warnings == []


def test_finish_without_records_names_the_file_and_first_problem(ctx):
    ctx.skip(9, "later")
    ctx.skip(2, "malformed: x")
    with pytest.raises(InputError) as err:
        ctx.finish(12, 0, what="widget", unit="row")
    assert str(err.value) == f"{ctx.file.path}: none of the 2 widgets could be read (first problem: row 2: malformed: x)"


def test_finish_without_anything(ctx):
    with pytest.raises(InputError, match=r"some\.log: no widget found \(no header\)$"):
        ctx.finish(5, 0, what="widget", hint="no header")
    with pytest.raises(InputError, match=r"some\.log: the trace has no events$"):
        ctx.finish(5, 0, empty="the trace has no events")


def test_finish_may_keep_a_source_whose_records_were_all_skipped(ctx):
    ctx.skip(1, "truncated")
    ctx.finish(1, 0, none_is_error=False)
    assert ctx.source["lines_skipped"] == 1


def test_damaged_input_is_flagged_once(tmp_path):
    p = tmp_path / "cut.log.gz"
    data = gzip.compress(b"".join(b"line %d\n" % i for i in range(50000)))
    p.write_bytes(data[: len(data) // 2])
    store = Store(":memory:")
    ctx = IngestContext(con=store.con, source_id=1, file=InputFile(str(p)))
    for _ in ctx.file.chunks():
        pass
    ctx.finish(100, 99, what="widget")
    ctx.note_damage()
    assert ctx.source["truncated"] is True
    (warning,) = ctx.warnings
    assert "partial data: gzip stream is cut off" in warning and "the 99 complete widget(s)" in warning
    store.close()


def test_insert_arrow_by_name_with_select_and_staged(ctx):
    con = ctx.con
    insert_arrow(con, "gpu_source_meta", pa.table({"key": ["k"], "source_id": pa.array([1], pa.int32())}))
    reader = pa.RecordBatchReader.from_batches(
        pa.schema([("key", pa.string())]), [pa.record_batch([pa.array(["a", "b"])], names=["key"])])
    insert_arrow(con, "gpu_source_meta", reader, select="SELECT 2 AS source_id, key, upper(key) AS value FROM _arrow",
                 stage=True)
    insert_arrow(con, "gpu_source_meta", pa.record_batch([pa.array([3], pa.int32()), pa.array(["z"])],
                                                         names=["source_id", "key"]))
    assert con.execute("SELECT * FROM gpu_source_meta ORDER BY ALL").fetchall() == [
        (1, "k", None), (2, "a", "A"), (2, "b", "B"), (3, "z", None)]
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = '_arrow'").fetchall() == [(0,)]


def test_create_arrow_table(ctx):
    create_arrow_table(ctx.con, "_work", pa.table({"x": [1, 2]}), temp=True)
    assert ctx.con.execute("SELECT sum(x) FROM _work").fetchall() == [(3,)]


def test_write_parquet_keeps_rows_in_order_with_their_types_and_nulls(ctx, tmp_path):
    """The span engine's working files: read back beside another table by position, so the
    rows must come back in order, and 32-bit integers, booleans and NULLs as written."""
    n = 300_000  # several row groups
    data = pa.table({"r": pa.array(range(n), pa.int32()),
                     "flag": pa.array([i % 3 == 0 for i in range(n)]),
                     "v": pa.array([None if i % 7 == 0 else i * 1_000_000_007 for i in range(n)], pa.int64())})
    path = str(tmp_path / "rows.parquet")
    write_parquet(ctx.con, path, data)
    back = ctx.con.sql(f"SELECT * FROM read_parquet('{path}')")
    assert back.types == ["INTEGER", "BOOLEAN", "BIGINT"]
    assert back.to_arrow_table().to_pylist() == data.to_pylist()


def test_row_buffer_types_from_the_schema(ctx):
    types = arrow_types(ctx.con, "profiler_tables")
    assert types["cells"] == pa.map_(pa.string(), pa.string()) and types["total_ns"] == pa.int64()
    rows = RowBuffer(ctx, "profiler_tables", ["line_no", "name", "total_ns", "cells"], limit=2)
    rows.extend([{"line_no": i, "name": f"op{i}", "total_ns": 10 * i, "cells": {"k": str(i)}} for i in range(3)])
    assert rows.total == 2 and rows.count == 1  # flushed at the limit
    rows.flush()
    assert ctx.con.execute("SELECT source_id, line_no, name, total_ns, cells['k'] FROM profiler_tables "
                           "ORDER BY line_no").fetchall() == [(7, 0, "op0", 0, "0"), (7, 1, "op1", 10, "1"),
                                                              (7, 2, "op2", 20, "2")]


def test_row_buffer_rows_taken_now_and_inserted_later(ctx):
    """``take`` builds the waiting rows' columns and empties the buffer; ``insert`` writes
    them whenever the caller can (rows added meanwhile are the buffer's own)."""
    rows = RowBuffer(ctx, "profiler_tables", ["line_no", "name"])
    assert rows.take() is None
    rows.add(line_no=1, name="a")
    taken = rows.take()
    assert taken.num_rows == 1 and rows.count == 0 and rows.total == 1
    rows.add(line_no=2, name="b")
    assert ctx.con.execute("SELECT count(*) FROM profiler_tables").fetchall() == [(0,)]
    rows.insert(taken)
    rows.insert(None)
    rows.flush()
    assert ctx.con.execute("SELECT source_id, line_no, name FROM profiler_tables ORDER BY line_no").fetchall() == [
        (7, 1, "a"), (7, 2, "b")]


def test_row_buffer_rows_given_as_arrow_columns(ctx):
    """``add_table`` takes rows already made as columns (in any column order), beside rows
    added one by one: they count toward the limit and go in with the others."""
    rows = RowBuffer(ctx, "profiler_tables", ["line_no", "name"], limit=4)
    rows.add(line_no=1, name="a")
    rows.add_table(pa.table({"name": pa.array(["b", "c"]), "line_no": pa.array([2, 3], pa.int64())}))
    assert rows.count == 3 and rows.total == 0
    taken = rows.take()
    assert taken.column_names == ["line_no", "name", "source_id"] and taken.num_rows == 3
    rows.insert(taken)
    rows.add_table(pa.table({"line_no": pa.array([4, 5, 6, 7], pa.int64()), "name": pa.array(list("defg"))}))
    assert rows.count == 0 and rows.total == 7  # flushed at the limit
    assert ctx.con.execute("SELECT source_id, line_no, name FROM profiler_tables ORDER BY line_no").fetchall() == [
        (7, i, n) for i, n in enumerate("abcdefg", start=1)]


def test_row_buffer_rejects_unknown_columns(ctx):
    with pytest.raises(ValueError, match="no_such"):
        RowBuffer(ctx, "profiler_tables", ["line_no", "no_such"])


def test_inserts_behind_land_in_order_and_fail_where_settled(ctx):
    """insert_behind runs one insert at a time on a helper thread, in the order given; what
    one raises comes out of the next settle (or the next insert_behind); close waits."""
    for first in range(0, 50_000, 10_000):
        ctx.insert_behind("onednn_events", pa.table({
            "source_id": pa.array([7] * 10_000, pa.int32()), "line_no": pa.array(range(first, first + 10_000)),
            "shape_id": pa.array([1] * 10_000, pa.uint64())}))
    ctx.settle()
    assert ctx.con.execute("SELECT count(*), min(line_no), max(line_no) FROM onednn_events").fetchone() == \
        (50_000, 0, 49_999)
    assert [r[0] for r in ctx.con.execute("SELECT line_no FROM onednn_events").fetchall()] == list(range(50_000))
    ctx.insert_behind("onednn_events", pa.table({"line_no": pa.array([None], pa.int64())}))  # NOT NULL columns
    with pytest.raises(duckdb.ConstraintException):
        ctx.settle()
    ctx.settle()  # reported once
    ctx.skip(1, "pending")
    ctx.insert_behind("no_such_table", pa.table({"x": [1]}))
    with pytest.raises(duckdb.CatalogException):
        ctx.flush_skipped()  # settles before it writes
    ctx.insert_behind("onednn_events", pa.table({
        "source_id": pa.array([7], pa.int32()), "line_no": [99], "shape_id": pa.array([1], pa.uint64())}))
    ctx.close()
    ctx.close()
    assert ctx.con.execute("SELECT count(*) FROM onednn_events").fetchone()[0] == 50_001
