"""Bad input for the trace family: one-line messages, exit codes, no traceback, partial data
only where it is unambiguous (and flagged), nothing half-written."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "trace"

GOOD = [{"ph": "X", "cat": "cpu_op", "name": f"op{i % 3}", "pid": 1, "tid": 1, "ts": i * 10, "dur": 5,
         "args": {"External id": i}} for i in range(400)]


def ingest(cli, db, *paths):
    res = cli("ingest", "--db", db, *paths)
    assert "Traceback" not in res.output
    return res


def one_line_error(res) -> str:
    errors = [l for l in res.stderr.splitlines() if l.startswith("error:")]
    assert len(errors) == 1, res.stderr
    return errors[0]


def nothing_stored(query):
    for table in ("sources", "trace_events", "trace_files", "skipped_lines", "profiler_tables", "gpu_kernels"):
        assert query(f"SELECT count(*) FROM {table}")[0][0] == 0, table
    assert query("SELECT count(*) FROM duckdb_tables() WHERE starts_with(database_name, 'loganalyze_ws')")[0][0] == 0


@pytest.mark.parametrize("text, message", [
    ('{"a": 1, "b": [1, 2]}', "not a trace-event file"),
    ('{"traceEvents": {"ph": "X"}}', "traceEvents is not an array"),
    ("[1, 2, 3]", "none of the 3 trace events could be read"),
    ('{"traceEvents": []}', "the trace has no events"),
    ('[{"ph": "X", "name": "a"}]', "missing ts"),
    ('[{"ph": "X", "ts": 1}]', "X event without dur" if False else "missing dur"),
    ('{"traceEvents": [{"ph": "X", "na', "truncated"),
    ("hello, this is not json", "not JSON"),
    ("", "empty file"),
])
def test_not_a_usable_trace(cli, tmp_path, tmp_db, query, text, message):
    p = tmp_path / "bad.json"
    p.write_text(text)
    res = ingest(cli, tmp_db, p)
    assert res.exit_code == 2
    assert message in one_line_error(res)
    nothing_stored(query)


def test_truncated_object_keeps_complete_events_and_flags_the_source(cli, tmp_path, tmp_db, query):
    text = json.dumps({"schemaVersion": 1, "traceEvents": GOOD, "traceName": "x"})
    cut = text[: text.index('"External id": 300') + 5]
    p = tmp_path / "cut.pt.trace.json"
    p.write_text(cut)
    res = ingest(cli, tmp_db, p)
    assert res.exit_code == 0
    assert "partial data" in res.stderr
    assert query("SELECT count(*) FROM trace_events")[0][0] == 300
    assert query("SELECT dialect, lines_total, lines_parsed, lines_skipped FROM sources") == [
        ("kineto, cut off", 301, 300, 1)]
    assert query("SELECT complete FROM trace_files") == [(False,)]
    assert any("partial data" in w for (w,) in query("SELECT unnest(warnings) FROM sources"))


BIG = [{"ph": "X", "cat": "cpu_op", "name": f"op{i % 3}", "pid": 1, "tid": 1, "ts": i * 10, "dur": 5,
        "args": {"External id": i, "Input Dims": [[i % 7, 3], [i % 5]]}} for i in range(20000)]


@pytest.mark.parametrize("fraction", [0.5, 0.9])
def test_cut_gzip_keeps_what_it_holds(cli, tmp_path, tmp_db, query, fraction):
    # (the first 64 KiB must decompress: ingest reads them to choose the importer)
    data = gzip.compress(json.dumps({"traceEvents": BIG}).encode(), mtime=0)
    p = tmp_path / "cut.json.gz"
    p.write_bytes(data[: int(len(data) * fraction)])
    res = ingest(cli, tmp_db, p)
    assert res.exit_code == 0, res.output
    assert "gzip stream is cut off" in res.stderr
    n = query("SELECT count(*) FROM trace_events")[0][0]
    assert 0 < n < len(BIG)
    # what was kept is exactly the first n events
    assert query("SELECT min(event_no), max(event_no) FROM trace_events") == [(0, n - 1)]
    assert query("SELECT complete FROM trace_files") == [(False,)]


def test_gzip_cut_before_any_event(cli, tmp_path, tmp_db, query):
    data = gzip.compress(json.dumps({"traceEvents": GOOD}).encode(), mtime=0)
    p = tmp_path / "cut.json.gz"
    p.write_bytes(data[:12])
    res = ingest(cli, tmp_db, p)
    assert res.exit_code == 2
    one_line_error(res)
    nothing_stored(query)


def test_corrupt_gzip(cli, tmp_path, tmp_db, query):
    data = bytearray(gzip.compress(json.dumps({"traceEvents": GOOD}).encode(), mtime=0))
    for i in range(len(data) // 2, len(data) // 2 + 64):
        data[i] ^= 0x5A
    p = tmp_path / "corrupt.json.gz"
    p.write_bytes(bytes(data))
    res = ingest(cli, tmp_db, p)
    # the damage is found half-way through the compressed bytes (wherever a deflate stream
    # notices it, never before them): the ~200 complete events before it are kept, flagged
    assert res.exit_code == 0, res.stderr
    assert "corrupt gzip data after" in res.stderr and "partial data" in res.stderr
    assert query("SELECT complete FROM trace_files") == [(False,)]
    kept = query("SELECT name, ts_ns, dur_ns FROM trace_events ORDER BY event_no")
    assert 100 < len(kept) < len(GOOD)
    assert kept[:100] == [(e["name"], e["ts"] * 1000, e["dur"] * 1000) for e in GOOD[:100]]


def test_event_problems_are_skipped_with_reasons(cli, tmp_path, tmp_db, query):
    res = ingest(cli, tmp_db, SAMPLES / "unmatched_begin_end.json")
    assert res.exit_code == 0
    reasons = [r for (r,) in query("SELECT reason FROM skipped_lines ORDER BY line_no")]
    assert reasons == ["duplicate of event 1", "unmatched E: no open B named 'stray' on pid 1 tid 1",
                       "B ends before it begins (E is event 7)", "E before its B (event 6): negative duration",
                       "negative dur (-5)", "ts is not a finite number (NaN)"]
    assert query("SELECT unmatched_e, unclosed_b, duplicates, negative_durations FROM trace_files") == [(1, 1, 1, 2)]
    assert query("SELECT lines_total, lines_parsed, lines_skipped FROM sources") == [(10, 4, 6)]
    for text in ("1 E event(s) without an open B", "1 B event(s) never closed", "1 duplicated event(s) skipped"):
        assert text in res.stderr
    res = cli("skipped", "--db", tmp_db)
    assert res.exit_code == 0 and "negative dur (-5)" in res.stdout


def test_binary_and_mixed_inputs(cli, tmp_path, tmp_db, query):
    bin_ = tmp_path / "x.json"
    bin_.write_bytes(bytes(range(256)) * 10)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(GOOD))
    res = ingest(cli, tmp_db, bin_, good)
    assert res.exit_code == 1
    assert query("SELECT name FROM sources") == [("good.json",)]


def test_failure_midway_rolls_back_and_cleans_up(cli, tmp_path, tmp_db, query, monkeypatch):
    from loganalyze.importers import trace_spans

    def boom(self):
        raise RuntimeError("simulated failure")

    monkeypatch.setattr(trace_spans.SpanEngine, "_derived", boom)
    p = tmp_path / "t.json"
    p.write_text(json.dumps(GOOD))
    from loganalyze.ingest import ingest_file
    from loganalyze.store import Store

    with Store(tmp_db) as store:
        res = ingest_file(store, str(p))
    assert res.status == "error" and "simulated failure" in res.message
    nothing_stored(query)


def test_duplicate_file_is_not_ingested_twice(cli, tmp_path, tmp_db, query):
    p = tmp_path / "t.json"
    p.write_text(json.dumps(GOOD))
    assert ingest(cli, tmp_db, p).exit_code == 0
    res = ingest(cli, tmp_db, p)
    assert res.exit_code == 0 and "already ingested" in res.output
    assert query("SELECT count(*) FROM trace_events")[0][0] == len(GOOD)


def test_table_files_that_hold_no_rows(cli, tmp_path, tmp_db, query):
    p = tmp_path / "stats.txt"
    p.write_text("Profile Statistics.\n\tNote that counter items are counter values and not time units.\n"
                 "operator\n=================\nName  Total Count  Time (ms)\n")
    res = ingest(cli, tmp_db, p)
    assert res.exit_code == 2
    one_line_error(res)
    c = tmp_path / "2017-01-01_00-00-00_summary_0.txt"
    c.write_text("CNTK Performance Profiler Summary Report\n\nTime Stamp: 2017/01/01 00:00:00\n")
    res = ingest(cli, tmp_db, c)
    assert res.exit_code == 2 and "no CNTK summary event" in one_line_error(res)
    d = tmp_path / "2017-01-01_00-00-00_detail_0.csv"
    d.write_text("EventDescription,ThreadId,BeginTimeStamp(ms),EndTimeStamp(ms)\n\"a\",x,1.0,2.0\n")
    res = ingest(cli, tmp_db, d)
    assert res.exit_code == 2 and "could be read" in one_line_error(res)
    nothing_stored(query)
