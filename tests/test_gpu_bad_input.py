"""Bad GPU profile input: a one-line error and exit code 2 when nothing can be read, a
warning naming what is missing when the rest can be, never a traceback, nothing half-written."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "gpu"
GPU_TABLES = ("gpu_kernels", "gpu_memops", "gpu_api_calls", "nvtx_ranges", "gpu_report_rows", "gpu_metrics",
              "gpu_kernel_ops", "gpu_source_meta", "sources", "skipped_lines")


def one_line_error(res) -> str:
    assert res.exit_code == 2, res.output
    err = [l for l in (res.stderr or res.output).splitlines() if l.startswith("error:")]
    assert len(err) == 1, res.output
    return err[0]


def empty_db(query):
    for t in GPU_TABLES:
        assert query(f"SELECT count(*) FROM {t}")[0][0] == 0, t


def make_db(path: Path, ddl: list[str]) -> Path:
    con = sqlite3.connect(path)
    for stmt in ddl:
        con.execute(stmt)
    con.commit()
    con.close()
    return path


def test_sqlite_that_is_not_a_profile(tmp_path, cli, tmp_db, query):
    db = make_db(tmp_path / "app.sqlite", ["CREATE TABLE users (id INTEGER, name TEXT)",
                                           "INSERT INTO users VALUES (1, 'x')"])
    msg = one_line_error(cli("ingest", "--db", tmp_db, db))
    assert "not an Nsight Systems export" in msg and "users" in msg
    empty_db(query)


def test_export_without_nvtx_and_runtime_tables(tmp_path, cli, tmp_db):
    db = make_db(tmp_path / "kernels_only.sqlite", [
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)",
        "INSERT INTO StringIds VALUES (1, 'k(int)'), (2, 'k')",
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, correlationId INT, "
        "globalPid INT, demangledName INT, shortName INT)",
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, 10, 0, 1, 0, 1, 2), (20, 25, 0, 2, 0, 1, 2)",
    ])
    res = cli("ingest", "--db", tmp_db, db)
    assert res.exit_code == 0, res.output
    assert "NVTX_EVENTS" in res.output and "CUPTI_ACTIVITY_KIND_RUNTIME" in res.output
    kern = cli("summary", "--db", tmp_db, "--by", "kernel", "--format", "json").json()
    assert kern == [dict(kern[0], kernel="k(int)", count=2, total_ns=15)]
    ops = cli("summary", "--db", tmp_db, "--by", "op", "--format", "json").json()
    assert len(ops) == 1 and ops[0]["op"].startswith("(") and ops[0]["count"] == 2


def test_export_without_any_cuda_or_nvtx_table(tmp_path, cli, tmp_db, query):
    db = make_db(tmp_path / "cpu_only.sqlite", [
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)",
        "CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT)",
        "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INT, utcTime TEXT, localTime TEXT)",
    ])
    msg = one_line_error(cli("ingest", "--db", tmp_db, db))
    assert "without CUDA or NVTX data" in msg
    empty_db(query)


def test_corrupt_database(tmp_path, cli, tmp_db, query):
    src = (SAMPLES / "nsys_2024_pytorch.sqlite").read_bytes()
    cut = tmp_path / "cut.sqlite"
    cut.write_bytes(src[: len(src) // 3])
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(src[:100] + bytes(range(256)) * 64)
    for path in (cut, garbage):
        msg = one_line_error(cli("ingest", "--db", tmp_db, path))
        assert str(path) in msg
    empty_db(query)


def test_locked_database(tmp_path, cli, tmp_db, query):
    db = tmp_path / "busy.sqlite"
    shutil.copy(SAMPLES / "nsys_2022_pytorch.sqlite", db)
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("PRAGMA journal_mode=DELETE")
    writer.execute("BEGIN EXCLUSIVE")
    writer.execute("INSERT INTO StringIds VALUES (100000, 'being written')")
    try:
        msg = one_line_error(cli("ingest", "--db", tmp_db, db))
        assert "locked" in msg
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    empty_db(query)
    assert cli("ingest", "--db", tmp_db, db).exit_code == 0  # fine once the writer is done


def test_csv_without_units_row(tmp_path, cli, tmp_db, query):
    lines = (SAMPLES / "nvprof_gpu_trace_cuda10.csv").read_text().splitlines()
    no_units = tmp_path / "no_units.csv"
    no_units.write_text("\n".join(lines[:4] + lines[5:]) + "\n")
    msg = one_line_error(cli("ingest", "--db", tmp_db, no_units))
    assert "no units row" in msg
    empty_db(query)
    # a second table after it still goes in, with a warning about the first
    both = tmp_path / "two_tables.csv"
    api = (SAMPLES / "nvprof_api_trace.csv").read_text()
    both.write_text("\n".join(lines[:4] + lines[5:]) + "\n" + api)
    res = cli("ingest", "--db", tmp_db, both)
    assert res.exit_code == 0 and "no units row" in res.output
    assert query("SELECT count(*) FROM gpu_api_calls")[0][0] == 4
    assert query("SELECT count(*) FROM gpu_kernels")[0][0] == 0
    total, parsed, other, skipped = query(
        "SELECT lines_total, lines_parsed, lines_non_verbose, lines_skipped FROM sources")[0]
    assert total == parsed + other + skipped and skipped == 5


def test_text_report_from_unknown_nvprof_version(tmp_path, cli, tmp_db, query):
    f = tmp_path / "nvprof_future.txt"
    f.write_text("==1== NVPROF is profiling process 1, command: ./a\n==1== Profiling result:\n"
                 "Kernel Mean  Kernel Spread  Label\n   1.0ms  0.5ms  foo\n")
    msg = one_line_error(cli("ingest", "--db", tmp_db, f))
    assert "unrecognised nvprof table header" in msg
    empty_db(query)


def test_unknown_nsys_stats_report_and_bad_rows(tmp_path, cli, tmp_db):
    f = tmp_path / "osrt.txt"
    f.write_text(" ** OS Runtime Summary (osrt_sum):\n\n Time (%)  Total Time (ns)  Num Calls  Name\n"
                 " --------  ---------------  ---------  ----\n    100.0            5,000          1  poll\n")
    msg = one_line_error(cli("ingest", "--db", tmp_db, f))
    assert "osrt_sum is not read" in msg
    g = tmp_path / "bad_rows.csv"
    g.write_text("Time (%),Total Time (ns),Instances,Avg (ns),Name\nabc,def,ghi,jkl,kern\n")
    assert "malformed" in one_line_error(cli("ingest", "--db", tmp_db, g))


def test_pyprof_and_ncu_without_data(tmp_path, cli, tmp_db):
    f = tmp_path / "net.dict"
    f.write_text("{'kShortName': 'k', 'kDuration': 'soon'}\n")
    assert "kDuration" in one_line_error(cli("ingest", "--db", tmp_db, f))
    g = tmp_path / "ncu.csv"
    g.write_text("==PROF== Connected to process 1\n==PROF== Disconnected from process 1\n")
    assert "Nsight Compute" in one_line_error(cli("ingest", "--db", tmp_db, g))


def test_binary_files_are_still_rejected(tmp_path, cli, tmp_db):
    f = tmp_path / "blob.bin"
    f.write_bytes(b"\x00\x01\x02" * 1000)
    assert "binary" in one_line_error(cli("ingest", "--db", tmp_db, f))


def test_duplicate_export_is_skipped(cli, tmp_db, query):
    p = SAMPLES / "nsys_2024_pytorch.sqlite"
    assert cli("ingest", "--db", tmp_db, p).exit_code == 0
    res = cli("ingest", "--db", tmp_db, p)
    assert res.exit_code == 0 and "already ingested" in res.output
    assert query("SELECT count(*) FROM gpu_kernels")[0][0] == 5


def test_bad_summary_options(cli, tmp_db):
    assert cli("ingest", "--db", tmp_db, SAMPLES / "nsys_2024_pytorch.sqlite").exit_code == 0
    assert "names" in one_line_error(cli("summary", "--db", tmp_db, "--by", "kernel", "--names", "pretty"))
    assert "cannot be split" in one_line_error(cli("summary", "--db", tmp_db, "--by", "memcpy,grid"))
    assert "exactly one" in one_line_error(cli("summary", "--db", tmp_db, "--by", "kernel,op"))


#: (sample, text replaced, replacement): a bare carriage return in a cell the importer reads
#: as CSV, outside quotes (the line splitter keeps a bare "\r" inside its line)
CARRIAGE_RETURNS = [
    ("nsys_stats_cuda_gpu_trace.csv", "[CUDA memcpy Host-to-Device]", "[CUDA memcpy\rHost-to-Device]"),
    ("ncu_raw.csv", None, "app output,50%\r100%\n"),
    ("nvprof_api_trace.csv", None, '"app output",50%\r100%\n'),
    ("pyprof_prof.csv", '"gemm_kernel"', "gemm\rkernel"),
]


def _counts(query, path) -> tuple:
    (row,) = query("SELECT lines_total, lines_parsed, lines_skipped FROM sources WHERE path LIKE ?",
                   [f"%/{path.name}"])
    return row


@pytest.mark.parametrize("sample,old,new", CARRIAGE_RETURNS, ids=[c[0] for c in CARRIAGE_RETURNS])
def test_csv_cell_with_a_carriage_return(tmp_path, cli, tmp_db, query, sample, old, new):
    """A carriage return outside quotes is a character of its cell (the csv module took it for
    a record's end: an internal error, found by scripts/fuzz.py); every row is read as in
    the sample (a line put before the table is one more line, not a row)."""
    text = (SAMPLES / sample).read_text()
    assert old is None or old in text
    changed = tmp_path / ("changed_" + sample)
    changed.write_text(new + text if old is None else text.replace(old, new, 1), newline="")
    for path in (SAMPLES / sample, changed):
        res = cli("ingest", "--db", tmp_db, path)
        assert res.exit_code == 0, res.output
    total, parsed, skipped = _counts(query, SAMPLES / sample)
    assert _counts(query, changed) == (total + (old is None), parsed, skipped)


def test_csv_cell_over_the_csv_modules_limit_is_a_skipped_row(tmp_path, cli, tmp_db, query):
    """A cell the csv module will not read (over its 128 KiB field limit, in a line under the
    1 MiB line limit) makes that row skipped with the reason, not an internal error."""
    sample = SAMPLES / "nsys_stats_cuda_gpu_trace.csv"
    text = sample.read_text()
    changed = tmp_path / "long_cell.csv"
    changed.write_text(text.replace("[CUDA memcpy Host-to-Device]", "x" * 200_000, 1))
    for path in (sample, changed):
        assert cli("ingest", "--db", tmp_db, path).exit_code == 0
    total, parsed, skipped = _counts(query, sample)
    assert _counts(query, changed) == (total, parsed - 1, skipped + 1)
    (reason,) = query("SELECT reason FROM skipped_lines JOIN sources USING (source_id) WHERE path LIKE '%long_cell.csv'")[0]
    assert reason == "malformed gputrace row: not one CSV record: field larger than field limit (131072)"


def _changed_copy(tmp_path, sample: str, statements: list[str]) -> Path:
    path = tmp_path / ("changed_" + sample)
    shutil.copy(SAMPLES / sample, path)
    return make_db(path, statements)


def test_nsys_runtime_rows_without_an_event_class_count_once(tmp_path, cli, tmp_db, query):
    """A runtime row without an eventClass is a runtime call (as the rows are read): one with
    no start is skipped, and not also counted among the other rows (found by scripts/fuzz.py:
    the counts did not add up)."""
    first = "SELECT rowid FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 0 ORDER BY rowid"
    changed = _changed_copy(tmp_path, "nsys_2022_pytorch.sqlite", [
        *_without_constraints("CUPTI_ACTIVITY_KIND_RUNTIME"),
        f"UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET eventClass = NULL, start = NULL WHERE rowid IN ({first} LIMIT 3)",
        f"UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET eventClass = NULL WHERE rowid IN ({first} LIMIT 1 OFFSET 3)",
    ])
    for path in (SAMPLES / "nsys_2022_pytorch.sqlite", changed):
        assert cli("ingest", "--db", tmp_db, path).exit_code == 0
    assert _counts(query, SAMPLES / "nsys_2022_pytorch.sqlite") == (29, 24, 0)
    assert _counts(query, changed) == (29, 21, 3)
    assert query("SELECT lines_non_verbose FROM sources ORDER BY source_id") == [(5,), (5,)]


def test_nvprof_call_ids_read_as_the_rows_read_them(tmp_path, cli, tmp_db, query):
    """A cbid stored as text or a real is read as SQLite's CAST reads it (the rule of the
    id columns); its call is named from that id, not an internal error (found by
    scripts/fuzz.py)."""
    changed = _changed_copy(tmp_path, "nvprof_markers.nvvp", [
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET cbid = 'abc' WHERE _id_ = 1",
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET cbid = 2.5 WHERE _id_ = 2",
    ])
    res = cli("ingest", "--db", tmp_db, changed)
    assert res.exit_code == 0, res.output
    assert _counts(query, changed) == (15, 15, 0)
    rows = query("SELECT row_no, cbid, name FROM gpu_api_calls WHERE api = 'runtime' AND row_no <= 2 ORDER BY row_no")
    assert rows == [(1, 0, "runtime_cbid_0"), (2, 2, "cudaRuntimeGetVersion_v3020")]


def _without_constraints(table: str) -> list[str]:
    """Statements that make ``table`` a plain copy of itself (no key, no NOT NULL): what a
    damaged file can hold."""
    return [f"CREATE TABLE _copy AS SELECT * FROM {table} ORDER BY rowid", f"DROP TABLE {table}",
            f"ALTER TABLE _copy RENAME TO {table}"]


def _kernel_names(query, path) -> list:
    return query("SELECT k.row_no, k.name FROM gpu_kernels k JOIN sources s USING (source_id) "
                 "WHERE s.path LIKE ? ORDER BY k.row_no", [f"%/{path.name}"])


@pytest.mark.parametrize("sample,statements", [
    ("nsys_2024_pytorch.sqlite",
     _without_constraints("StringIds") + ["INSERT INTO StringIds VALUES (1, 'a repeated id'), (3, NULL)"]
     + _without_constraints("ENUM_CUDA_MEMCPY_OPER") + ["INSERT INTO ENUM_CUDA_MEMCPY_OPER (id) VALUES (NULL)"]
     + _without_constraints("ENUM_NSYS_EVENT_TYPE") + ["INSERT INTO ENUM_NSYS_EVENT_TYPE (id, name) VALUES (NULL, 'x')"]),
    ("nvprof_markers.nvvp",
     _without_constraints("StringTable")
     + ["INSERT INTO StringTable VALUES (1, 'a repeated id'), (NULL, 'no id'), (9999, NULL), ('text', 'x')"]),
], ids=["nsys", "nvprof"])
def test_damaged_lookup_tables(tmp_path, cli, tmp_db, query, sample, statements):
    """A string id given twice (only a damaged export repeats one: every kernel row joined to it
    was repeated, 29 rows read from 26), lookup rows without an id or a text (internal
    errors): found by scripts/fuzz.py.  The first string of an id counts; the rows are read
    as in the sample."""
    changed = _changed_copy(tmp_path, sample, statements)
    for path in (SAMPLES / sample, changed):
        res = cli("ingest", "--db", tmp_db, path)
        assert res.exit_code == 0, res.output
    assert _counts(query, changed) == _counts(query, SAMPLES / sample)
    assert _kernel_names(query, changed) == _kernel_names(query, SAMPLES / sample)
