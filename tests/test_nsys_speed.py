"""The fast SQLite read of issue 10 (item 4): a table whose rows are all small is read without a
check per cell, in rowid ranges on two threads, and gives exactly what the checked read gives;
a value of another type sends the table through the checked read."""
from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import pytest
from test_gpu_bad_input import make_db

from loganalyze.importers import sqlite_arrow, sqlite_input
from loganalyze.inputs import InputFile
from loganalyze.store import Store

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not sqlite_arrow.adbc_ready(), reason="the ADBC SQLite driver is not installed")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_nsys", ROOT / "scripts" / "bench_nsys.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    """A bench-style export: 3,000 kernels, their launches and 300 NVTX ranges."""
    path = tmp_path_factory.mktemp("nsys") / "export.sqlite"
    _bench().build(path, 3000, 300)
    return path


def _copy_with(src: Path, dst: Path, *sql: str) -> Path:
    dst.write_bytes(src.read_bytes())
    return make_db(dst, list(sql))


def dump(db: str) -> dict:
    """Every row of every table, sorted (storage order is the join's, as before), but the
    timing and path columns of ``sources``."""
    out = {}
    with Store(db, read_only=True) as store:
        con = store.con
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() "
                                            "WHERE database_name = current_database() ORDER BY 1").fetchall()]
        for t in tables:
            cols = [r[0] for r in con.execute(f"SELECT column_name FROM duckdb_columns() WHERE table_name = '{t}' "
                                              "AND database_name = current_database()").fetchall()
                    if not (t == "sources" and c_is_volatile(r[0]))]
            out[t] = con.execute(f"SELECT {', '.join(cols)} FROM {t} ORDER BY ALL").fetchall()
    return out


def c_is_volatile(col: str) -> bool:
    return col in ("path", "ingested_at", "ingest_seconds", "mtime", "elapsed_s", "duration_s") or "time" in col


def ingest(cli, db: str, path: Path) -> None:
    res = cli("ingest", "-q", "--db", db, path)
    assert res.exit_code == 0, res.output


@pytest.fixture
def spy(monkeypatch):
    """Which tables went through the fast read, and in how many parts."""
    seen: dict[str, int] = {}
    original = sqlite_input.SqliteFile._plain_table

    def plain_table(self, table, cols, rowid, wheres):
        data = original(self, table, cols, rowid, wheres)
        if data is not None:
            seen[table] = len(wheres)
        return data

    monkeypatch.setattr(sqlite_input.SqliteFile, "_plain_table", plain_table)
    return seen


def test_fast_read_in_parts_equals_the_checked_read_and_the_stdlib_read(export, cli, tmp_path, monkeypatch, spy):
    monkeypatch.setattr(sqlite_input, "READ_PART_ROWS", 100)  # the 3,000-row tables go in parts too
    fast = str(tmp_path / "fast.duckdb")
    ingest(cli, fast, export)
    assert spy.get("CUPTI_ACTIVITY_KIND_KERNEL") == sqlite_input.READ_PARTS
    assert spy.get("CUPTI_ACTIVITY_KIND_RUNTIME") == sqlite_input.READ_PARTS
    assert "NVTX_EVENTS" in spy and "StringIds" in spy

    monkeypatch.setattr(sqlite_input.SqliteFile, "small_rows", lambda self, table: False)
    checked = str(tmp_path / "checked.duckdb")
    ingest(cli, checked, export)
    monkeypatch.setenv("LOGANALYZE_SQLITE_READER", "stdlib")
    stdlib = str(tmp_path / "stdlib.duckdb")
    ingest(cli, stdlib, export)

    got = dump(fast)
    assert len(got["gpu_kernels"]) == 3000 and len(got["gpu_api_calls"]) == 3000 and got["nvtx_ranges"]
    assert got == dump(checked)
    assert got == dump(stdlib)


@pytest.mark.parametrize("batch_rows", [2, 65536])  # the odd value after the first batch, or in it
@pytest.mark.parametrize("value", ["'abc'", "x'00'", "1500.5"])
def test_a_time_of_another_type_sends_the_table_through_the_checked_read(export, cli, tmp_path, monkeypatch,
                                                                         spy, query, batch_rows, value):
    odd = _copy_with(export, tmp_path / "odd.sqlite",
                     f"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = {value} WHERE rowid = 2000")
    monkeypatch.setattr(sqlite_arrow, "BATCH_ROWS", batch_rows)
    fast = str(tmp_path / "fast.duckdb")
    ingest(cli, fast, odd)
    assert "CUPTI_ACTIVITY_KIND_KERNEL" not in spy and "CUPTI_ACTIVITY_KIND_RUNTIME" in spy
    monkeypatch.setenv("LOGANALYZE_SQLITE_READER", "stdlib")
    stdlib = str(tmp_path / "stdlib.duckdb")
    ingest(cli, stdlib, odd)
    assert dump(fast) == dump(stdlib)
    if value != "1500.5":  # a real time is read (CAST), text and blobs are skipped with the reason
        skipped = query("SELECT line_no, reason FROM skipped_lines", db=fast)
        assert skipped == [(2000, "unreadable time in start_ns (text or blob, not a number)")]


def test_a_row_larger_than_the_cell_limit_is_read_with_the_checks(export, cli, tmp_path, monkeypatch, spy):
    monkeypatch.setattr(sqlite_input, "MAX_CELL_BYTES", 50)  # kernel names are longer
    msg = cli("ingest", "-q", "--db", str(tmp_path / "x.duckdb"), export)
    assert msg.exit_code == 2 and "a cell holds more than 50 bytes" in msg.output
    assert "StringIds" not in spy


def test_small_rows_reads_dbstat(export):
    ctx = type("Ctx", (), {})()
    ctx.file = InputFile(str(export))
    ctx.warnings = []
    db = sqlite_input.SqliteFile(ctx)
    try:
        assert db.small_rows("CUPTI_ACTIVITY_KIND_KERNEL")
        assert not db.small_rows("no such table")
        assert db._parts("CUPTI_ACTIVITY_KIND_KERNEL", "rowid", 2) == [None]  # 3,000 rows: one part
        assert db._parts("CUPTI_ACTIVITY_KIND_KERNEL", "_id_", 2) == [None]
    finally:
        db.close()
    # the file was hashed on a helper thread while SQLite read it
    assert ctx.file.sha256 == hashlib.sha256(Path(export).read_bytes()).hexdigest()
