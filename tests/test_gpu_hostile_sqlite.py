"""Hostile SQLite inputs (issue 9, items 2 and 7): views, triggers, odd table names, huge
cells and unusable times give a one-line message or read the good tables, in seconds,
with both readers (the ADBC driver and the standard ``sqlite3`` module)."""
from __future__ import annotations

import sqlite3
import time

import pytest
from test_gpu_bad_input import make_db, one_line_error

from loganalyze.importers import sqlite_guard

STRINGS = ["CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)",
           "INSERT INTO StringIds VALUES (1, 'k(int)'), (2, 'k')"]
KERNEL_TABLE = ("CREATE TABLE {name} (start INT, end INT, deviceId INT, correlationId INT, globalPid INT, "
                "demangledName INT, shortName INT)")
GOOD_KERNELS = [KERNEL_TABLE.format(name="CUPTI_ACTIVITY_KIND_KERNEL"),
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, 10, 0, 1, 0, 1, 2), (20, 25, 0, 2, 0, 1, 2)"]
ENDLESS_VIEW = ("CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL "
                "SELECT x + 1 FROM r) SELECT x AS start, x + 1 AS end, 0 AS deviceId, x AS correlationId, "
                "0 AS globalPid, 1 AS demangledName, 2 AS shortName FROM r")


@pytest.fixture(params=["adbc", "stdlib"])
def reader(request, monkeypatch):
    monkeypatch.setenv("LOGANALYZE_SQLITE_READER", request.param)
    return request.param


def kernel_total(cli, db) -> list:
    return [(r["kernel"], r["count"], r["total_ns"])
            for r in cli("summary", "--db", db, "--by", "kernel", "--format", "json").json()]


def test_recursive_view_named_like_the_kernel_table_is_not_read(tmp_path, cli, tmp_db, reader):
    db = make_db(tmp_path / "view.sqlite", STRINGS + [ENDLESS_VIEW])
    started = time.monotonic()
    msg = one_line_error(cli("ingest", "--db", tmp_db, db))
    assert time.monotonic() - started < 30
    assert str(db) in msg and "not an Nsight Systems export" in msg
    assert "view CUPTI_ACTIVITY_KIND_KERNEL" in msg and "only base tables" in msg


@pytest.mark.parametrize("extra, shown", [
    ([ENDLESS_VIEW.replace("VIEW CUPTI_ACTIVITY_KIND_KERNEL", "VIEW CUPTI_ACTIVITY_KIND_MEMCPY")],
     "not read: view CUPTI_ACTIVITY_KIND_MEMCPY"),
    (["CREATE TABLE log (x)", "CREATE TRIGGER CUPTI_ACTIVITY_KIND_RUNTIME AFTER INSERT ON StringIds "
                              "BEGIN INSERT INTO log VALUES (1); END"], "trigger CUPTI_ACTIVITY_KIND_RUNTIME"),
])
def test_view_or_trigger_beside_good_tables_is_ignored(tmp_path, cli, tmp_db, reader, extra, shown):
    db = make_db(tmp_path / "view2.sqlite", STRINGS + GOOD_KERNELS + extra)
    res = cli("ingest", "--db", tmp_db, db)
    assert res.exit_code == 0, res.output
    assert shown in res.output and "only base tables are read" in res.output
    assert kernel_total(cli, tmp_db) == [("k(int)", 2, 15)]


def test_table_names_with_quotes_brackets_and_semicolons(tmp_path, cli, tmp_db, reader):
    db = make_db(tmp_path / "names.sqlite", STRINGS + GOOD_KERNELS + [
        'CREATE TABLE "CUPTI_ACTIVITY_KIND_x""; DROP TABLE StringIds; --" (a)',
        'CREATE TABLE "[br]ack;ets\'" (a)', 'CREATE TABLE "x"")" ("we""ird" INT)'])
    res = cli("ingest", "--db", tmp_db, db)
    assert res.exit_code == 0, res.output
    assert kernel_total(cli, tmp_db) == [("k(int)", 2, 15)]
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM StringIds").fetchone()[0] == 2  # untouched
    con.close()


def test_huge_text_cell_is_a_one_line_error(tmp_path, cli, tmp_db, reader, query):
    big = sqlite_guard.MAX_CELL_BYTES + 1000
    db = make_db(tmp_path / "big.sqlite", STRINGS + GOOD_KERNELS + [
        f"INSERT INTO StringIds VALUES (3, printf('%.*c', {big}, 'x'))"])
    msg = one_line_error(cli("ingest", "--db", tmp_db, db))
    assert str(db) in msg and "a cell holds more than" in msg
    assert query("SELECT count(*) FROM sources")[0][0] == 0


def test_file_is_opened_read_only_and_not_immutable(tmp_path):
    path = tmp_path / "x.sqlite"
    make_db(path, ["CREATE TABLE t (a)"])
    assert sqlite_guard.sqlite_uri(str(path)).endswith("?mode=ro")
    assert sqlite_guard.sqlite_uri(str(path), ours=True).endswith("?mode=ro&immutable=1")
    clock = sqlite_guard.StatementClock(5)
    con = sqlite_guard.open_readonly(sqlite_guard.sqlite_uri(str(path)), clock)
    try:
        for stmt in ("INSERT INTO t VALUES (1)", f"ATTACH DATABASE '{tmp_path / 'y.db'}' AS y",
                     "PRAGMA writable_schema = 1", "SELECT load_extension('x')",
                     "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r"):
            with pytest.raises(sqlite3.DatabaseError):
                con.execute(stmt).fetchall()
    finally:
        con.close()
    assert not (tmp_path / "y.db").exists()


def test_slow_statement_stops_with_a_clear_message(tmp_path, cli, tmp_db, monkeypatch):
    monkeypatch.setenv("LOGANALYZE_SQLITE_READER", "stdlib")
    monkeypatch.setattr(sqlite_guard, "STATEMENT_SECONDS", 0.0)
    monkeypatch.setattr(sqlite_guard, "PROGRESS_STEPS", 1)
    monkeypatch.setattr(sqlite_guard, "SCAN_BYTES_PER_SECOND", 10**15)
    rows = ", ".join(f"({i}, {i + 5}, 0, {i}, 0, 1, 2)" for i in range(2000))
    db = make_db(tmp_path / "slow.sqlite", STRINGS + [KERNEL_TABLE.format(name="CUPTI_ACTIVITY_KIND_KERNEL"),
                                                       f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES {rows}"])
    msg = one_line_error(cli("ingest", "--db", tmp_db, db))
    assert str(db) in msg and "took longer than 0 s; not an export loganalyze can read" in msg


def test_unusable_times_are_skipped_with_reasons(tmp_path, cli, tmp_db, reader, query):
    db = make_db(tmp_path / "values.sqlite", STRINGS + GOOD_KERNELS + [
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 90, 0, 3, 0, 1, 2)",
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ('abc', 50, 0, 5, 0, 1, 2)",
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (60, NULL, 0, 6, 0, 1, 2)",
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (70, x'00', 0, 7, 0, 1, 2)"])
    res = cli("ingest", "--db", tmp_db, db)
    assert res.exit_code == 0, res.output
    assert kernel_total(cli, tmp_db) == [("k(int)", 2, 15)]
    assert query("SELECT lines_total, lines_parsed, lines_skipped, lines_non_verbose FROM sources") == [(7, 2, 5, 0)]
    reasons = dict(query("SELECT line_no, reason FROM skipped_lines ORDER BY line_no"))
    assert reasons[3] == "end before start (negative duration)"
    assert reasons[4] == reasons[6] == "no start or end time"
    assert reasons[5].startswith("unreadable time in start_ns") and reasons[7].startswith("unreadable time in end_ns")


def test_all_bad_kernel_rows_are_not_parsed(tmp_path, cli, tmp_db, reader, query):
    db = make_db(tmp_path / "nulls.sqlite", STRINGS + [
        KERNEL_TABLE.format(name="CUPTI_ACTIVITY_KIND_KERNEL"),
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (NULL, NULL, NULL, NULL, NULL, NULL, NULL)"])
    msg = one_line_error(cli("ingest", "--db", tmp_db, db))
    assert "none of the 1 CUDA or NVTX rows could be read" in msg and "no start or end time" in msg
    assert query("SELECT count(*) FROM gpu_kernels")[0][0] == 0
