"""Bad input through the CLI: one line naming the file, no traceback, the right exit code, and
nothing left behind by a file that failed."""
from __future__ import annotations

import gzip
import os
import random
import zlib

import pytest

from conftest import PER_FILE_TABLES, table_counts

GOOD = [
    "dnnl_verbose,info,oneDNN v1.7.0 (commit 7aed236906b1f7a05c0917e5257a1af05e9ff683)",
    "dnnl_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:aBcd8b:f0,,,2x16x7x7,0.5",
    "dnnl_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:aBcd8b:f0,,,2x16x7x7,0.25",
]
EMPTY_TABLES = dict.fromkeys(PER_FILE_TABLES, 0)


def good_log(d, name="good.log"):
    p = d / name
    p.write_text("\n".join(GOOD) + "\n")
    return p


def lines_naming(text: str, path) -> list[str]:
    return [line for line in text.splitlines() if str(path) in line]


def assert_one_error(result, path):
    named = lines_naming(result.stderr or result.output, path)
    assert len(named) == 1, result.output
    assert named[0].startswith("error: "), named[0]
    assert "Traceback" not in result.output


def big_gzip_log(n_lines: int = 60000) -> bytes:
    rnd = random.Random(7)
    body = "\n".join(f"{GOOD[1].rsplit(',', 1)[0]},{rnd.random():.6g}" for _ in range(n_lines))
    return gzip.compress((GOOD[0] + "\n" + body + "\n").encode(), compresslevel=1)


# --------------------------------------------------------------------------- nothing ingestible
UNRECOGNISED = ("not a recognised format (tried: onednn_verbose, trace_json, mxnet_table, torch_table, cntk, "
                "nsys_sqlite, nvprof_sqlite, nvprof_text, nsys_stats, ncu_csv, pyprof)")


@pytest.mark.parametrize(
    "name,content,message",
    [
        ("empty.log", b"", "empty file"),
        ("binary.bin", bytes(range(256)) * 64, "binary"),
        ("zeros.log", b"\x00" * 4096, "binary"),
        ("text.log", b"hello\nworld\n\n", UNRECOGNISED),
        ("latin1.log", "caf\xe9 cr\xe8me br\xfbl\xe9e\nna\xefve r\xe9sum\xe9\n".encode("latin-1") * 20,
         UNRECOGNISED),
        ("empty.log.gz", gzip.compress(b"", mtime=0), "empty"),
        ("blank_lines.log", b"\n\n\r\n\n", UNRECOGNISED),
    ],
)
def test_file_with_nothing_to_ingest(tmp_path, tmp_db, cli, name, content, message):
    p = tmp_path / name
    p.write_bytes(content)
    r = cli("ingest", "--db", tmp_db, p)
    assert r.exit_code == 2, r.output
    assert_one_error(r, p)
    assert message in lines_naming(r.stderr or r.output, p)[0]
    assert table_counts(tmp_db) == EMPTY_TABLES


def test_log_with_nul_filled_tail(tmp_path, tmp_db, cli, query):
    """A process that crashed can leave NUL-filled blocks at the end of its log: the good
    lines go in, the NUL block is one more (non-verbose) line; never a traceback."""
    p = tmp_path / "crashed.log"
    p.write_bytes(("\n".join(GOOD) + "\n").encode() + b"\x00" * 5000)
    r = cli("ingest", "--db", tmp_db, p)
    assert r.exit_code == 0, r.output
    assert query("SELECT count(*) FROM onednn_events WHERE time_ms IS NOT NULL") == [(2,)]
    assert query("SELECT lines_total FROM sources") == [(len(GOOD) + 1,)]


def test_text_starting_with_a_bracket(tmp_path, tmp_db, cli):
    """Application output that starts like JSON is not a reason for a database error."""
    p = tmp_path / "brackets.log"
    p.write_text("[ RUN      ] Conv.Fwd\n[       OK ] Conv.Fwd (0 ms)\n")
    r = cli("ingest", "--db", tmp_db, p)
    assert r.exit_code == 2
    assert_one_error(r, p)
    assert "database error" not in r.stderr and "Transaction" not in r.stderr, r.stderr
    assert table_counts(tmp_db) == EMPTY_TABLES


def test_missing_path(tmp_path, tmp_db, cli):
    p = tmp_path / "nope.log"
    r = cli("ingest", "--db", tmp_db, p)
    assert r.exit_code == 2
    assert_one_error(r, p)
    assert "no such file" in r.stderr


def test_glob_without_match(tmp_path, tmp_db, cli):
    pattern = str(tmp_path / "*.nothing")
    r = cli("ingest", "--db", tmp_db, pattern)
    assert r.exit_code == 2
    assert_one_error(r, pattern)


def test_empty_directory(tmp_path, tmp_db, cli):
    d = tmp_path / "empty_dir"
    d.mkdir()
    r = cli("ingest", "--db", tmp_db, d)
    assert r.exit_code == 2
    assert_one_error(r, d)


def test_directory_with_good_and_bad_files(tmp_path, tmp_db, cli, query):
    d = tmp_path / "logs"
    d.mkdir()
    good_log(d, "a_good.log")
    (d / "b_binary.dat").write_bytes(b"\x00\x01\x02" * 100)
    (d / "c_text.txt").write_text("nothing here\n")
    r = cli("ingest", "--db", tmp_db, d)
    assert r.exit_code == 1, r.output
    assert_one_error(r, d / "b_binary.dat")
    assert_one_error(r, d / "c_text.txt")
    assert query("SELECT name FROM sources") == [("a_good.log",)]


def _readable_prefix(compressed: bytes) -> bytes:
    """What a damaged gzip stream decompresses to before zlib reports the damage (fed byte
    by byte, so nothing before the failing byte is lost)."""
    d = zlib.decompressobj(zlib.MAX_WBITS | 16)
    out = []
    for i in range(len(compressed)):
        try:
            out.append(d.decompress(compressed[i:i + 1]))
        except zlib.error:
            break
    return b"".join(out)


def _prefix_lines(compressed: bytes) -> list[bytes]:
    """The complete lines a damaged gzip stream holds before the damage."""
    return _readable_prefix(compressed).split(b"\n")[:-1]


@pytest.mark.parametrize("fraction", [0.5, 0.97])
def test_gzip_cut_keeps_its_complete_lines_and_is_flagged(tmp_path, tmp_db, cli, query, fraction):
    data = big_gzip_log()
    p = tmp_path / "half.log.gz"
    p.write_bytes(data[: int(len(data) * fraction)])
    kept = _prefix_lines(data[: int(len(data) * fraction)])
    r = cli("ingest", "--db", tmp_db, p)
    assert r.exit_code == 0, r.output
    warned = [line for line in lines_naming(r.stderr, p) if "partial data" in line]
    assert len(warned) == 1 and "gzip stream is cut off" in warned[0], r.stderr
    assert f"the {len(kept)} complete verbose line(s)" in warned[0]
    assert query("SELECT truncated, lines_parsed FROM sources") == [(True, len(kept))]
    # exactly the complete lines: the line the stream ends in is skipped as cut off
    assert query("SELECT min(line_no), max(line_no), count(*) FROM onednn_events") == [(1, len(kept), len(kept))]
    (cut,) = query("SELECT line_no, reason FROM skipped_lines")
    assert cut[0] == len(kept) + 1 and cut[1].startswith("truncated")


def test_corrupt_gzip_in_the_middle_keeps_what_came_before(tmp_path, tmp_db, cli, query):
    data = bytearray(big_gzip_log(40000))
    mid = len(data) // 2
    for i in range(mid, mid + 64):
        data[i] ^= 0x5A
    p = tmp_path / "corrupt_middle.log.gz"
    p.write_bytes(bytes(data))
    prefix = _readable_prefix(bytes(data))
    r = cli("ingest", "--db", tmp_db, p)
    assert r.exit_code == 0, r.output
    assert any("partial data" in line and "corrupt gzip data" in line for line in lines_naming(r.stderr, p))
    assert query("SELECT truncated FROM sources") == [(True,)]
    # every line decompressed before zlib noticed is read (deflate has no per-block check:
    # bytes decoded from the damaged part may be garbage, and are skipped or non-verbose)
    complete = prefix.count(b"\n")
    assert complete > 1000
    cut = not prefix.endswith(b"\n")
    assert query("SELECT lines_total FROM sources") == [(complete + cut,)]
    if cut:  # the line the damage falls in is skipped as cut off
        assert query("SELECT reason FROM skipped_lines WHERE line_no = ?", [complete + 1])[0][0].startswith("truncated")


def test_corrupt_gzip_near_the_start_keeps_the_lines_before(tmp_path, tmp_db, cli, query):
    data = bytearray(big_gzip_log(3000))
    for i in range(200, len(data) - 20, 97):
        data[i] ^= 0x5A
    p = tmp_path / "corrupt.log.gz"
    p.write_bytes(bytes(data))
    kept = _prefix_lines(bytes(data))
    r = cli("ingest", "--db", tmp_db, p)
    assert r.exit_code == 0, r.output
    assert any("partial data" in line for line in lines_naming(r.stderr, p))
    assert query("SELECT truncated, lines_total FROM sources") == [(True, len(kept) + 1)]


@pytest.mark.parametrize("damage", ["cut", "corrupt"])
def test_gzip_damaged_before_any_line(tmp_path, tmp_db, cli, damage):
    data = bytearray(big_gzip_log(3000))
    if damage == "cut":
        data = data[:12]
    else:
        for i in range(12, len(data) - 20, 7):
            data[i] ^= 0x5A
    p = tmp_path / "broken.log.gz"
    p.write_bytes(bytes(data))
    r = cli("ingest", "--db", tmp_db, p)
    assert r.exit_code == 2, r.output
    assert_one_error(r, p)
    assert "gzip" in r.stderr
    assert table_counts(tmp_db) == EMPTY_TABLES


def test_intact_file_is_not_flagged(tmp_path, tmp_db, ingest_files, query):
    p = tmp_path / "whole.log.gz"
    p.write_bytes(big_gzip_log(100))
    (res,) = ingest_files([p])
    assert res.status == "ingested" and not any("partial" in w for w in res.warnings)
    assert query("SELECT truncated FROM sources") == [(False,)]


def test_failed_file_mid_stream_is_rolled_back(tmp_path, tmp_db, ingest_files, monkeypatch):
    """A read that fails after line batches were written: every row goes away."""
    from loganalyze.inputs import InputError, InputFile

    good = good_log(tmp_path)
    ingest_files([good])
    before = table_counts(tmp_db)

    original = InputFile.chunks
    handed_out = []

    def chunks(self, size=None, *args, **kwargs):
        for block in original(self, 64 << 10, *args, **kwargs):
            handed_out.append(len(block))
            yield block
            if len(handed_out) == 3 and self.name == "big.log.gz":
                raise InputError(f"{self.path}: read error: Input/output error")

    monkeypatch.setattr(InputFile, "chunks", chunks)
    p = tmp_path / "big.log.gz"
    p.write_bytes(big_gzip_log(40000))
    (res,) = ingest_files([p])
    assert len(handed_out) >= 3, "the stream should have produced some lines before failing"
    assert res.status == "error" and str(p) in res.message
    assert table_counts(tmp_db) == before
    # and the store is usable afterwards
    (again,) = ingest_files([good_log(tmp_path, "good2.log")])
    assert again.status == "duplicate"


def test_a_database_error_inside_the_transaction_is_the_error_reported(tmp_path, tmp_db, ingest_files,
                                                                        monkeypatch):
    """A statement that fails in a file's transaction is what the error says, not the refusal
    of the working tables' DROP that follows it in the aborted transaction ("Current
    transaction is aborted"); nothing of the file is stored."""
    from loganalyze.importers import onednn

    def failing(ctx, shapes):
        ctx.con.execute("SELECT CAST('not a number' AS INTEGER)")

    monkeypatch.setattr(onednn, "insert_segments", failing)
    p = good_log(tmp_path)
    (res,) = ingest_files([p])
    assert res.status == "error" and str(p) in res.message
    assert "Conversion Error" in res.message and "aborted" not in res.message, res.message
    assert table_counts(tmp_db) == EMPTY_TABLES


def test_working_tables_are_dropped_after_an_error_only_where_they_can_be(tmp_path):
    """lookup_tables (and every working table of an importer, through dropped_after) lets a
    failed statement's error through; outside a transaction the tables are dropped too."""
    import duckdb

    from loganalyze.importers.gpu_common import lookup_tables

    con = duckdb.connect(str(tmp_path / "x.duckdb"))
    for in_transaction in (True, False):
        if in_transaction:
            con.execute("BEGIN TRANSACTION")
        with pytest.raises(duckdb.ConversionException):
            with lookup_tables(con, _kinds={"k": ("INTEGER", [1, 2])}):
                con.execute("SELECT CAST('x' AS INTEGER) FROM _kinds")
        if in_transaction:
            con.execute("ROLLBACK")
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = '_kinds'").fetchone() == (0,)


def test_duckdbs_limit_grows_with_the_shapes_of_a_log(tmp_path, tmp_db, ingest_files, monkeypatch):
    """A oneDNN log of very many distinct shapes (here every line one: 100,000) outgrows a
    fixed DuckDB memory limit for the file (the shapes' key index and working queries: a
    100 MB limit failed at some 600,000 shapes); the limit grows with the shapes, so that it
    is read.  At a small scale: 16 MB fails with no growth, passes with 2,000 bytes a shape."""
    from loganalyze.importers import onednn

    log = tmp_path / "shapes.log"
    log.write_text("".join(
        f"onednn_verbose,v1,info,cpu,runtime:OpenMP nthr:{i}\n" if i % 2 else
        f"onednn_verbose,v1,1.5,primitive,exec,cpu,reorder,simple:any,undef,src:f32::blocked:abcd::f0,,,{i}x3,0.25\n"
        for i in range(100_000)), encoding="utf-8")
    monkeypatch.setattr(onednn.OneDNNVerboseImporter, "memory_limit", "16MB")
    monkeypatch.setattr(onednn, "SHAPE_MEMORY_BYTES", 0)
    (fixed,) = ingest_files([log])
    assert fixed.status == "error" and "Out of Memory" in fixed.message, fixed.message
    monkeypatch.setattr(onednn, "SHAPE_MEMORY_BYTES", 2000)
    (growing,) = ingest_files([log])
    assert growing.status == "ingested", growing.message
    assert table_counts(tmp_db)["onednn_events"] == 100_000


def test_widening_the_memory_limit_stays_under_the_ceiling_in_steps(tmp_path):
    import duckdb

    from loganalyze.importers.base import MEMORY_STEP, IngestContext, MemoryRoom
    from loganalyze.memory_limit import setting_bytes

    con = duckdb.connect(str(tmp_path / "x.duckdb"))
    con.execute("SET memory_limit = '100MB'")
    ctx = IngestContext(con=con, source_id=1, file=None)
    shown = lambda: setting_bytes(con.execute("SELECT current_setting('memory_limit')").fetchone()[0])  # noqa: E731
    ctx.widen_memory_limit(1 << 30)  # no room set: nothing changes
    assert abs(shown() - 100e6) < 1e6
    ctx.memory = MemoryRoom(limit=100e6, ceiling=300e6)
    ctx.widen_memory_limit(MEMORY_STEP // 2)  # less than a step: not yet
    assert abs(shown() - 100e6) < 1e6
    ctx.widen_memory_limit(50e6)
    assert abs(shown() - 150e6) < 1e6
    ctx.widen_memory_limit(1e12)  # never past the limit the ingest lowered from
    assert abs(shown() - 300e6) < 1e6 and ctx.memory.applied == 300e6


# --------------------------------------------------------------------------- partly bad files
def test_verbose_log_with_one_invalid_utf8_line(tmp_path, tmp_db, cli, query):
    p = tmp_path / "oneline.log"
    bad = GOOD[1].rsplit(",", 1)[0].encode() + b",0.5 \xe9t\xe9\xff"
    p.write_bytes(b"\n".join([GOOD[0].encode(), GOOD[1].encode(), bad, GOOD[2].encode(), "caf\xe9".encode("latin-1")]) + b"\n")
    r = cli("ingest", "--db", tmp_db, p)
    assert r.exit_code == 0, r.output
    named = lines_naming(r.stderr, p)
    assert len(named) == 1 and named[0].startswith("warning: ") and "skipped" in named[0]
    assert query("SELECT line_no, reason FROM skipped_lines") == [(3, "invalid UTF-8")]
    assert query("SELECT lines_total, lines_parsed, lines_non_verbose, lines_skipped FROM sources") == [(5, 3, 1, 1)]
    assert query("SELECT line_no FROM onednn_events ORDER BY 1") == [(1,), (2,), (4,)]


def test_ten_megabyte_lines(tmp_path, tmp_db, cli, query):
    junk = tmp_path / "junk_line.log"
    junk.write_bytes(("\n".join(GOOD[:2]) + "\n").encode() + b"y" * (10 << 20) + b"\n" + GOOD[2].encode() + b"\n")
    verbose = tmp_path / "verbose_line.log"
    verbose.write_bytes(("\n".join(GOOD[:2]) + "\n").encode() + b"dnnl_verbose,exec," + b"z" * (10 << 20) + b"\n"
                        + GOOD[2].replace("0.25", "0.125").encode() + b"\n")
    r = cli("ingest", "--db", tmp_db, junk, verbose)
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    rows = query("SELECT name, lines_total, lines_parsed, lines_non_verbose, lines_skipped FROM sources ORDER BY name")
    assert rows == [("junk_line.log", 4, 3, 1, 0), ("verbose_line.log", 4, 3, 0, 1)]
    (line_no, reason, text), = query("SELECT line_no, reason, text FROM skipped_lines")
    assert line_no == 3 and reason.startswith("line too long")
    assert len(text) <= 200
    named = lines_naming(r.stderr, verbose)
    assert len(named) == 1 and named[0].startswith("warning: ")
    assert query("SELECT sum(time_ms) FROM onednn_events") == [(0.5 + 0.25 + 0.5 + 0.125,)]


def test_header_only_file(tmp_path, tmp_db, cli, query):
    p = tmp_path / "header.log"
    p.write_text("\n".join([
        "onednn_verbose,info,oneDNN v3.2.0 (commit N/A)",
        "onednn_verbose,info,cpu,runtime:OpenMP,nthr:8",
        "onednn_verbose,info,cpu,isa:Intel AVX2",
        "onednn_verbose,primitive,info,template:operation,engine,primitive,implementation,prop_kind,"
        "memory_descriptors,attributes,auxiliary,problem_desc,exec_time",
    ]) + "\n")
    r = cli("ingest", "--db", tmp_db, p)
    assert r.exit_code == 0, r.output
    named = lines_naming(r.stderr, p)
    assert len(named) == 1 and named[0].startswith("warning: "), r.output
    assert query("SELECT library_version, lines_parsed FROM sources") == [("oneDNN v3.2.0", 4)]
    s = cli("summary", "--db", tmp_db, "--format", "json")
    assert s.exit_code == 2 and s.stdout == ""
    assert "the 1 ingested file(s) hold nothing to summarise (no timed records" in s.stderr


# --------------------------------------------------------------------------- mixed commands
def test_good_and_bad_files_in_one_command(tmp_path, tmp_db, cli, query):
    good = good_log(tmp_path)
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    missing = tmp_path / "missing.log"
    half = tmp_path / "half.log.gz"  # cut before its first line: nothing to keep
    data = big_gzip_log(20000)
    half.write_bytes(data[:12])
    r = cli("ingest", "--db", tmp_db, empty, good, missing, half)
    assert r.exit_code == 1, r.output
    for p in (empty, missing, half):
        assert_one_error(r, p)
    assert f"ingested {good}" in r.stdout
    assert query("SELECT name, lines_parsed FROM sources") == [("good.log", 3)]
    assert table_counts(tmp_db)["onednn_events"] == 3
    assert table_counts(tmp_db)["skipped_lines"] == 0


def test_only_bad_files_exit_2_and_leave_no_rows(tmp_path, tmp_db, cli):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    text = tmp_path / "text.log"
    text.write_text("just text\n")
    r = cli("ingest", "--db", tmp_db, empty, text, tmp_path / "missing.log")
    assert r.exit_code == 2
    assert len([line for line in r.stderr.splitlines() if line.startswith("error: ")]) == 3
    assert table_counts(tmp_db) == EMPTY_TABLES


def test_duplicate_is_not_an_error(tmp_path, tmp_db, cli):
    good = good_log(tmp_path)
    assert cli("ingest", "--db", tmp_db, good).exit_code == 0
    r = cli("ingest", "--db", tmp_db, good)
    assert r.exit_code == 0
    assert "already ingested" in r.output
    assert table_counts(tmp_db)["sources"] == 1


def test_quiet_prints_errors_only(tmp_path, tmp_db, cli):
    good = good_log(tmp_path)
    r = cli("ingest", "-q", "--db", tmp_db, good, tmp_path / "missing.log")
    assert r.exit_code == 1
    assert r.stdout.strip() == ""
    assert_one_error(r, tmp_path / "missing.log")


# --------------------------------------------------------------------------- bad databases
def test_database_file_that_is_not_duckdb(tmp_path, cli):
    db = tmp_path / "not.duckdb"
    db.write_text("hello\n")
    good = good_log(tmp_path)
    for args in (("ingest", "--db", db, good), ("summary", "--db", db), ("sources", "--db", db),
                 ("sql", "--db", db, "SELECT 1")):
        r = cli(*args)
        assert r.exit_code == 2, (args, r.output)
        assert len(lines_naming(r.stderr, db.name)) == 1, r.output


def test_query_commands_without_database(tmp_path, cli):
    db = tmp_path / "absent.duckdb"
    for args in (("summary", "--db", db), ("sources", "--db", db), ("skipped", "--db", db), ("sql", "--db", db, "SELECT 1")):
        r = cli(*args)
        assert r.exit_code == 2, (args, r.output)
        assert r.stderr.startswith("error: ") and str(db) in r.stderr
    assert not db.exists()


def test_unwritable_database_location(tmp_path, cli):
    good = good_log(tmp_path)
    db = tmp_path / "no" / "such" / "dir" / "x.duckdb"
    r = cli("ingest", "--db", db, good)
    assert r.exit_code == 2
    assert r.stderr.startswith("error: ")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path, tmp_db, cli):
    p = good_log(tmp_path)
    p.chmod(0)
    try:
        r = cli("ingest", "--db", tmp_db, p)
    finally:
        p.chmod(0o644)
    assert r.exit_code == 2
    assert_one_error(r, p)
