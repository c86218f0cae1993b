"""Trace-event JSON: containers, exact times, B/E and async matching, nesting and self time,
flows, kernel attribution, counters, big ids, readers and staging modes, and the samples."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "trace"


def write_json(tmp_path, name, obj=None, text=None, gz=False) -> Path:
    path = tmp_path / name
    data = (text if text is not None else json.dumps(obj)).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def ops(query, sid=None):
    where = f"AND source_id = {sid}" if sid else ""
    return {n: (c, t, s) for n, c, t, s in query(
        f"""SELECT name, count(*), sum(dur_ns), sum(self_ns) FROM trace_events
            WHERE role = 'op' AND dur_ns IS NOT NULL {where} GROUP BY name""")}


def assert_invariants(query):
    """What must hold for every trace source, whatever its content."""
    for sid, total, parsed, other, skipped in query(
            "SELECT source_id, lines_total, lines_parsed, lines_non_verbose, lines_skipped FROM sources "
            "WHERE format IN ('trace_json', 'cntk')"):
        assert total == parsed + other + skipped
        n_ev, n_distinct = query("SELECT count(*), count(DISTINCT event_no) FROM trace_events WHERE source_id = ?", [sid])[0]
        if query("SELECT count(*) FROM trace_files WHERE source_id = ?", [sid])[0][0]:
            assert n_ev == parsed and n_distinct == n_ev
        assert query("SELECT count(*) FROM skipped_lines WHERE source_id = ?", [sid])[0][0] == skipped
        both = query("""SELECT count(*) FROM trace_events e JOIN skipped_lines k
                        ON k.source_id = e.source_id AND k.line_no = e.event_no WHERE e.source_id = ?""", [sid])[0][0]
        assert both == 0


# =========================================================================== nesting, times
NESTED = [
    {"ph": "X", "cat": "cpu_op", "name": "outer", "pid": 1, "tid": 1, "ts": 1000, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "child", "pid": 1, "tid": 1, "ts": 1010, "dur": 30},
    {"ph": "X", "cat": "cpu_op", "name": "grandchild", "pid": 1, "tid": 1, "ts": 1015, "dur": 10},
    {"ph": "X", "cat": "cpu_op", "name": "child", "pid": 1, "tid": 1, "ts": 1050, "dur": 20},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1055, "dur": 5,
     "args": {"correlation": 7, "External id": 4}},
    {"ph": "X", "cat": "python_function", "name": "model.py(3): forward", "pid": 1, "tid": 1, "ts": 1000, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "other_thread", "pid": 1, "tid": 2, "ts": 1010, "dur": 500},
    {"ph": "X", "cat": "kernel", "name": "void k<float>(float*)", "pid": 0, "tid": 7, "ts": 1070, "dur": 40,
     "args": {"correlation": 7, "External id": 4, "device": 0, "stream": 7, "grid": [4, 2, 1], "block": [128, 1, 1],
              "registers per thread": 32}},
]


def test_self_time_and_nesting(tmp_path, ingest_files, query):
    path = write_json(tmp_path, "nested.json", {"traceEvents": NESTED, "schemaVersion": 1})
    (res,) = ingest_files([path])
    assert res.status == "ingested", res.message
    assert ops(query) == {"outer": (1, 100_000, 50_000), "child": (2, 50_000, 40_000),
                          "grandchild": (1, 10_000, 10_000), "other_thread": (1, 500_000, 500_000)}
    rows = dict(((n, t), (d, p)) for n, t, d, p in query(
        "SELECT name, ts_ns, depth, parent FROM trace_events WHERE ph = 'X'"))
    assert rows[("outer", 1_000_000)] == (0, None)
    assert rows[("grandchild", 1_015_000)] == (2, 1)
    # a launch call belongs to the innermost operator around it; python frames never nest ops
    assert rows[("cudaLaunchKernel", 1_055_000)] == (2, 3)
    # kernel -> launch (correlation) -> operator; device time per operator, self and inclusive
    (launch, op), = query("SELECT launch_event, op_event FROM trace_events WHERE role = 'kernel'")
    assert (launch, op) == (4, 3)
    gpu = dict((n, (s, t)) for n, s, t in query(
        "SELECT name, sum(gpu_self_ns), sum(gpu_total_ns) FROM trace_events WHERE role = 'op' GROUP BY name"))
    assert gpu["child"] == (40_000, 40_000) and gpu["outer"] == (0, 40_000) and gpu["grandchild"] == (0, 0)
    k = query("""SELECT name, short_name, start_ns, duration_ns, device, stream, grid_x, grid_y, block_x,
                        registers, correlation_id, pid, tid, origin FROM gpu_kernels""")
    assert k == [("void k<float>(float*)", "k", 1_070_000, 40_000, 0, 7, 4, 2, 128, 32, 7, 0, 7, "trace_events")]
    assert query("SELECT name, base_name, api, correlation_id FROM gpu_api_calls") == [
        ("cudaLaunchKernel", "cudaLaunchKernel", "runtime", 7)]
    assert_invariants(query)


def test_exact_integer_ns_for_epoch_microseconds(tmp_path, ingest_files, query):
    """ts * 1000 in floating point is off by up to 128 ns at epoch microseconds; B/E pairs
    20 us apart must come out as exactly 20000 ns, and fractional relative times exactly."""
    events = [{"ph": "B", "name": "op", "cat": "operator", "pid": 0, "tid": 1, "ts": 1559670569099589},
              {"ph": "E", "name": "op", "cat": "operator", "pid": 0, "tid": 1, "ts": 1559670569099609},
              {"ph": "X", "name": "frac", "cat": "cpu_op", "pid": 0, "tid": 2, "ts": 4203669603771.648, "dur": 12.345},
              {"ph": "X", "name": "exp", "cat": "cpu_op", "pid": 0, "tid": 3, "ts": 1.5e3, "dur": 2e-3}]
    ingest_files([write_json(tmp_path, "t.json", events)])
    got = dict((n, (t, d)) for n, t, d in query("SELECT name, ts_ns, dur_ns FROM trace_events WHERE dur_ns IS NOT NULL"))
    assert got == {"op": (1559670569099589000, 20_000), "frac": (4203669603771648, 12_345), "exp": (1_500_000, 2)}


@pytest.mark.parametrize("ts, reader", [(4203669603771.648, "stream"), (1203669603771.648, "duckdb"),
                                        ("2199023255552.001", "stream"), (1e26, "stream")])
def test_fractions_beyond_double_precision_send_the_file_to_the_exact_reader(tmp_path, ingest_files, query,
                                                                             ts, reader):
    """DuckDB reads JSON numbers with a fraction through a double, exact below 2^41 us only:
    a fractional time at or beyond it (or one out of range) has the file read exactly."""
    events = [{"ph": "X", "name": "a", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 10.5, "dur": 1},
              {"ph": "X", "name": "b", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": ts, "dur": 1}]
    ingest_files([write_json(tmp_path, "t.json", events)])
    assert query("SELECT reader FROM trace_files") == [(reader,)]


@pytest.mark.parametrize("reader", ["duckdb", "stream"])
def test_a_duplicate_shows_its_times(tmp_path, ingest_files, query, monkeypatch, reader):
    if reader == "stream":
        monkeypatch.setenv("LOGANALYZE_TRACE_READER", "stream")
    event = {"ph": "X", "name": "a", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 1212076228576.5, "dur": 2.25}
    ingest_files([write_json(tmp_path, "t.json", [event, dict(event)])])
    assert query("SELECT line_no, reason, text FROM skipped_lines") == [
        (1, "duplicate of event 0",
         '{"ph": "X", "name": "a", "cat": "cpu_op", "ts": 1212076228576.5, "dur": 2.25, "pid": 1, "tid": 1}')]


def _number_texts():
    """Microsecond texts: short fractions and their neighbours (more digits, signs, spaces,
    exponents, a lone dot), and any text over the characters of numbers."""
    digits = st.integers(0, 18).flatmap(lambda n: st.text("0123456789", min_size=n, max_size=n))
    shaped = st.builds(lambda sign, whole, dot, frac, end: sign + whole + dot + frac + end,
                       st.sampled_from(["", "-", "+", " "]), digits, st.sampled_from([".", "", ".."]),
                       st.text("0123456789", max_size=5), st.sampled_from(["", "", "e3", "E-2", " "]))
    near_limit = st.builds(lambda whole, frac: f"{whole}.{frac}", st.integers(2 ** 41 - 3, 2 ** 41 + 2).map(str),
                           st.text("0123456789", max_size=4))
    return st.lists(st.one_of(shaped, near_limit, st.text("0123456789.-+eE _xabcdfinINFp\t", max_size=22)),
                    min_size=1, max_size=60)


@settings(max_examples=150, deadline=None)
@given(_number_texts())
@example(["999999999999999.999", "-999999999999999.", "9999999999999999.", "9223372036854775.807", ".999", "-.5",
          "1.2345", "5.", ".", "10000000000000000000000e3", "-9999999999999999.5", "2199023255551.999",
          "-2199023255552.001", "2199023255552.5", "1_0.5", "+.5", " 1.5", "1.5_0", "0x1.8", "inf.5", "1.5.",
          "1.5 ", "4.999", "0.0005", "-0.0005"])
def test_short_fractions_read_as_the_decimal_rule(texts):
    """The fast reading of short fractions gives what the decimal rule gives, on any text."""
    import duckdb

    from grammars import trace_event as te

    con = duckdb.connect()
    con.execute("CREATE TABLE t (x VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?)", [[x] for x in texts])
    # (values of 10^16 us or more are NULL before the multiplication, which would overflow)
    decimal_rule = ("CASE WHEN contains(x, '.') OR contains(x, 'e') OR contains(x, 'E') "
                    "THEN try_cast(CASE WHEN abs(try_cast(x AS DECIMAL(38,3))) < 1e16 "
                    "THEN try_cast(x AS DECIMAL(38,3)) END * 1000 AS BIGINT) "
                    "ELSE try_cast(try_cast(x AS HUGEINT) * 1000 AS BIGINT) END")
    got = con.execute(f"SELECT x, {te.us_text_to_ns_sql('x')}, {decimal_rule} FROM t").fetchall()
    assert [(x, a) for x, a, _ in got] == [(x, b) for x, _, b in got]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.builds(lambda sign, whole, frac: f"{sign}{whole}.{frac}", st.sampled_from(["", "-"]),
                          st.integers(0, 10 ** 15).map(str), st.text("0123456789", min_size=1, max_size=30)),
                min_size=1, max_size=40))
@example(["0.00049999999999", "0.0005", "-0.0005", "1.00049999999999999999999", "2.4995000000001"])
def test_long_fractions_round_once_half_away_from_zero(texts):
    """Fractions of any length: the ns are the exact decimal value times 1000, rounded once,
    half away from zero (Python's decimal module as the reference)."""
    from decimal import ROUND_HALF_UP, Decimal

    import duckdb

    from grammars import trace_event as te

    con = duckdb.connect()
    con.execute("CREATE TABLE t (x VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?)", [[x] for x in texts])
    got = con.execute(f"SELECT x, {te.us_text_to_ns_sql('x')} FROM t").fetchall()
    want = [(x, int((Decimal(x) * 1000).to_integral_value(ROUND_HALF_UP))) for x in texts]
    assert got == want


def test_time_text_beyond_bigint_is_skipped_not_an_error(tmp_path, ingest_files, query):
    """A time text whose decimal overflows in the ns multiplication skips its event with
    the reason; the other events are read."""
    events = [{"ph": "X", "name": "huge", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": "1e26", "dur": 1},
              {"ph": "X", "name": "huge_dur", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 1, "dur": "-2.5e30"},
              {"ph": "X", "name": "ok", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 5, "dur": 1}]
    ingest_files([write_json(tmp_path, "huge.json", events)])
    assert query("SELECT name, ts_ns, dur_ns FROM trace_events") == [("ok", 5000, 1000)]
    assert query("SELECT line_no, reason FROM skipped_lines ORDER BY line_no") == [
        (0, "ts is not a number in range (1e26)"), (1, "dur is not a number in range (-2.5e30)")]
    assert_invariants(query)


def test_fractional_epoch_microseconds_use_the_exact_reader(tmp_path, ingest_files, query):
    """A fractional value too large for a double to hold to the ns goes through the exact
    reader: nothing is rounded."""
    text = ('[{"ph": "X", "name": "a", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 1719853884000000.123, "dur": 1.001},'
            '{"ph": "X", "name": "b", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 1719853884000000.125, "dur": 0.5}]')
    ingest_files([write_json(tmp_path, "frac.json", text=text)])
    assert query("SELECT name, ts_ns, dur_ns FROM trace_events ORDER BY name") == [
        ("a", 1719853884000000123, 1001), ("b", 1719853884000000125, 500)]
    assert query("SELECT reader FROM trace_files") == [("stream",)]


def test_ids_above_2_63_and_2_64_and_string_pids(tmp_path, ingest_files, query):
    text = ('{"traceEvents": [\n'
            '{"ph": "B", "name": "x", "cat": "operator", "pid": 18446744073709551557, "tid": 9785678402843609691, "ts": 1},\n'
            '{"ph": "E", "name": "x", "cat": "operator", "pid": 18446744073709551557, "tid": 9785678402843609691, "ts": 5},\n'
            '{"ph": "b", "name": "t", "cat": "task", "id": 123456789012345678901234567890, "pid": "Spans", "tid": "Trace", "ts": 1},\n'
            '{"ph": "e", "name": "t", "cat": "task", "id": 123456789012345678901234567890, "pid": "Spans", "tid": "Trace", "ts": 9}\n'
            ']}')
    ingest_files([write_json(tmp_path, "ids.json", text=text)])
    assert query("SELECT pid, tid, dur_ns FROM trace_events WHERE ph = 'B'") == [
        ("18446744073709551557", "9785678402843609691", 4000)]
    assert query("SELECT id, pid, tid, dur_ns FROM trace_events WHERE ph = 'b'") == [
        ("123456789012345678901234567890", "Spans", "Trace", 8000)]


def test_begin_end_matching_by_name_on_each_thread(tmp_path, ingest_files, query):
    events = [
        {"ph": "B", "name": "a", "cat": "op", "pid": 1, "tid": 1, "ts": 0},
        {"ph": "B", "name": "a", "cat": "op", "pid": 1, "tid": 2, "ts": 1},
        {"ph": "B", "name": "b", "cat": "op", "pid": 1, "tid": 1, "ts": 2},
        {"ph": "E", "name": "a", "cat": "op", "pid": 1, "tid": 2, "ts": 3},
        {"ph": "E", "cat": "op", "pid": 1, "tid": 1, "ts": 6},  # no name: closes the innermost (b)
        {"ph": "E", "name": "a", "cat": "op", "pid": 1, "tid": 1, "ts": 10},
        {"ph": "E", "name": "zzz", "cat": "op", "pid": 1, "tid": 1, "ts": 11},
        {"ph": "B", "name": "open", "cat": "op", "pid": 1, "tid": 1, "ts": 12},
    ]
    (res,) = ingest_files([write_json(tmp_path, "be.json", events)])
    assert query("SELECT event_no, dur_ns, end_event FROM trace_events WHERE ph = 'B' ORDER BY event_no") == [
        (0, 10_000, 5), (1, 2_000, 3), (2, 4_000, 4), (7, None, None)]
    assert query("SELECT unmatched_e, unclosed_b FROM trace_files") == [(1, 1)]
    assert query("SELECT line_no, reason FROM skipped_lines") == [(6, "unmatched E: no open B named 'zzz' on pid 1 tid 1")]
    assert any("never closed" in w for w in res.warnings) and any("without an open B" in w for w in res.warnings)
    assert_invariants(query)


# =========================================================================== containers
def test_bare_array_object_and_gzip_give_the_same_events(tmp_path, ingest_files, query):
    a = write_json(tmp_path, "a.json", NESTED)
    b = write_json(tmp_path, "b.json", {"displayTimeUnit": "ns", "otherData": {"v": 1}, "traceEvents": NESTED,
                                        "deviceProperties": [{"id": 0}]})
    c = write_json(tmp_path, "c.json.gz", {"traceEvents": NESTED}, gz=True)
    results = ingest_files([a, b, c])
    assert [r.status for r in results] == ["ingested"] * 3
    per = [ops(query, sid) for sid in (1, 2, 3)]
    assert per[0] == per[1] == per[2]
    assert query("SELECT container, display_time_unit, top_level_keys FROM trace_files ORDER BY source_id") == [
        ("array", None, []), ("object", "ns", ["displayTimeUnit", "otherData", "traceEvents", "deviceProperties"]),
        ("object", None, ["traceEvents"])]
    assert query("SELECT compression FROM sources ORDER BY source_id") == [(None,), (None,), ("gzip",)]


@pytest.mark.parametrize("tail", [
    "",                       # cut right after an event and its comma
    '{"ph": "X", "name": "cut", "cat": "cpu_op", "pid": 1, "ti',  # cut inside an event
    '{"ph": "X", "name": "cut", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 5, "dur": 1}',  # no closing bracket
])
@pytest.mark.parametrize("reader", ["duckdb", "stream"])
def test_missing_closing_bracket_loads(tmp_path, ingest_files, query, monkeypatch, tail, reader):
    if reader == "stream":
        monkeypatch.setenv("LOGANALYZE_TRACE_READER", "stream")
    body = ",\n".join(json.dumps(e) for e in NESTED) + ",\n" + tail
    (res,) = ingest_files([write_json(tmp_path, "cut.json", text="[\n" + body)])
    assert res.status == "ingested", res.message
    n = len(NESTED) + (1 if tail.endswith("}") else 0)
    assert query("SELECT count(*) FROM trace_events")[0][0] == n
    assert query("SELECT complete FROM trace_files") == [(False,)]
    assert query("SELECT dialect FROM sources")[0][0].endswith("cut off")
    assert any("partial data" in w for w in res.warnings)
    cut = 1 if "ti" in tail and not tail.endswith("}") else 0
    assert query("SELECT count(*) FROM skipped_lines WHERE reason LIKE 'truncated%'")[0][0] == cut
    assert_invariants(query)


def test_object_with_metadata_after_the_events_and_pretty_printing(tmp_path, ingest_files, query):
    text = ('{\n  "schemaVersion": 1,\n  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8,\n'
            '      "pg_config": [{"ranks": [' + ", ".join(map(str, range(3000))) + ']}]},\n'
            '  "traceEvents": [\n'
            + ",\n".join("  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\",\n    \"pid\": 1, \"tid\": 1,\n"
                         f"    \"ts\": {i * 10}, \"dur\": 5,\n    \"args\": {{\n      \"External id\": {i}, \"Input Dims\": [[2, 2], []]\n    }}\n  }}"
                         for i in range(200))
            + '\n  ],\n  "traceName": "x.pt.trace.json",\n  "INFO": ["a ] b", "c }"],\n'
            '  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": 1719853884000000000\n}\n')
    ingest_files([write_json(tmp_path, "meta.json", text=text)])
    assert query("SELECT count(*) FROM trace_events")[0][0] == 200
    row = query("SELECT rank, world_size, trace_name, display_time_unit, CAST(base_time_ns AS VARCHAR), flavour, "
                "complete, reader FROM trace_files")
    assert row == [(3, 8, "x.pt.trace.json", "ms", "1719853884000000000", "kineto", True, "duckdb")]
    meta = json.loads(query("SELECT CAST(metadata AS VARCHAR) FROM trace_files")[0][0])
    assert meta["INFO"] == ["a ] b", "c }"] and meta["baseTimeNanoseconds"] == 1719853884000000000


@pytest.mark.parametrize("staging", ["copy", "fifo", "file"])
def test_staging_modes_agree(tmp_path, ingest_files, query, monkeypatch, staging):
    monkeypatch.setenv("LOGANALYZE_TRACE_STAGING", staging)
    results = ingest_files([SAMPLES / "kineto_gpu_style.pt.trace.json", SAMPLES / "kineto_rocm_style.pt.trace.json.gz",
                            SAMPLES / "mxnet_style_profile.json"])
    assert [r.status for r in results] == ["ingested"] * 3
    assert query("SELECT count(*) FROM trace_events")[0][0] == 51 + 29 + 47
    assert query("SELECT DISTINCT reader FROM trace_files") == [("duckdb",)]
    for r in results:
        assert len(r.source["sha256"]) == 64


def test_exact_reader_gives_the_same_rows_as_duckdb(tmp_path, monkeypatch):
    from loganalyze.ingest import ingest_paths
    from loganalyze.store import Store

    files = [str(p) for p in sorted(SAMPLES.glob("*")) if p.name.endswith((".json", ".json.gz"))]

    def dump(db, env):
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        with Store(db) as store:
            res = list(ingest_paths(store, files))
            assert all(r.status == "ingested" for r in res), [r.message for r in res]
            rows = store.con.execute(
                """SELECT s.name, e.* EXCLUDE (source_id) FROM trace_events e JOIN sources s USING (source_id)
                   ORDER BY s.name, e.event_no""").fetchall()
            skipped = store.con.execute(
                "SELECT s.name, k.line_no, k.reason FROM skipped_lines k JOIN sources s USING (source_id) ORDER BY 1, 2").fetchall()
            counters = store.con.execute("SELECT * EXCLUDE (source_id) FROM trace_counters ORDER BY event_no, series").fetchall()
        return rows, skipped, counters

    fast = dump(str(tmp_path / "fast.duckdb"), {"LOGANALYZE_TRACE_READER": "duckdb"})
    exact = dump(str(tmp_path / "exact.duckdb"), {"LOGANALYZE_TRACE_READER": "stream"})
    assert fast[0] == exact[0]
    assert fast[1] == exact[1]
    assert fast[2] == exact[2]


def test_malformed_element_is_skipped_and_reading_goes_on(tmp_path, ingest_files, query):
    text = ('[{"ph": "X", "name": "a", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 1, "dur": 1},\n'
            ' {"ph": "X", "name": "bad" "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 2, "dur": 1},\n'
            ' 42,\n'
            ' {"ph": "X", "name": "c", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 3, "dur": 1, "ts": 4},\n'
            ' {"ph": "X", "name": "d\\ud800", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 5, "dur": 1}]')
    (res,) = ingest_files([write_json(tmp_path, "bad.json", text=text)])
    assert res.status == "ingested"
    assert query("SELECT reader FROM trace_files") == [("stream",)]
    assert [r[0] for r in query("SELECT name FROM trace_events ORDER BY event_no")] == ["a", "c", "d\ufffd"]
    assert query("SELECT ts_ns FROM trace_events WHERE name = 'c'") == [(4000,)]  # duplicate key: the last wins
    reasons = dict(query("SELECT line_no, reason FROM skipped_lines"))
    assert reasons[1].startswith("malformed JSON") and reasons[2] == "not a JSON object (number)"
    assert_invariants(query)


# =========================================================================== flavours
def test_mxnet_sample(ingest_files, query):
    (res,) = ingest_files([SAMPLES / "mxnet_style_profile.json"])
    assert res.source["dialect"] == "mxnet"
    got = ops(query)
    # custom operator: the python part (an async task only) counts once, its sub-operator is
    # counted from its B/E pair only (its task duplicate does not count)
    assert got["MyAddOne::pure_python"] == (1, 80_000, 80_000)
    assert got["MyAddOne::_plus_scalar"] == (1, 15_000, 15_000)
    assert got["Convolution"] == (1, 150_000, 150_000)
    assert query("SELECT count(*) FROM trace_async WHERE cat = 'operator'")[0][0] == 4
    assert query("SELECT DISTINCT tid FROM trace_ops WHERE cat = 'operator'") == [("13835058055282163711",)]
    mem = query("SELECT value FROM trace_counters WHERE series = 'Memory: cpu/0' ORDER BY event_no")
    assert [v for (v,) in mem] == [4096.0 * i for i in range(1, 6)]
    assert query("SELECT name FROM trace_process_names WHERE pid = '11529215046068469760'") == [("MXNET_C_API",)]


def test_kineto_gpu_sample(ingest_files, query):
    (res,) = ingest_files([SAMPLES / "kineto_gpu_style.pt.trace.json"])
    assert res.source["dialect"] == "kineto"
    assert query("SELECT rank, world_size FROM trace_files") == [(1, 2)]
    # every device activity linked to its launch call and operator
    assert query("""SELECT kind, count(*), count(launch_event), count(op_event) FROM trace_gpu GROUP BY kind ORDER BY kind""") == [
        ("kernel", 4, 4, 4), ("memcpy", 2, 2, 2), ("memset", 2, 2, 2)]
    assert query("SELECT DISTINCT op_name FROM trace_gpu WHERE kind = 'kernel' ORDER BY 1") == [
        ("aten::addmm",), ("aten::clamp_min",)]
    # device time sums up the operator tree: the step holds everything launched in it
    steps = query("SELECT step, gpu_total_ns FROM trace_ops WHERE name LIKE 'ProfilerStep#%' ORDER BY step")
    per_step = query("""SELECT o.step, sum(g.dur_ns) FROM trace_gpu g JOIN trace_ops o
                        ON o.source_id = g.source_id AND o.event_no = g.op_event GROUP BY ALL ORDER BY 1""")
    assert steps == per_step
    assert query("SELECT count(*), min(total_allocated) FROM trace_memory") == [(2, 65536)]
    assert query("SELECT count(*) FROM gpu_memops WHERE kind = 'HtoD' AND bytes = 8192") == [(2,)]
    assert query("SELECT count(*) FROM trace_flows WHERE from_event IS NOT NULL AND to_event IS NOT NULL")[0][0] == 4
    assert query("SELECT DISTINCT step FROM trace_ops ORDER BY 1") == [("ProfilerStep#1",), ("ProfilerStep#2",)]


def test_flow_ends_at_the_same_time_go_by_file_order(tmp_path, ingest_files, query):
    """The earliest start of a flow starts it and the latest end ends it; at the same time,
    the first start in the file and the last end (negative times too)."""
    def flow(ph, ts, name, fid=7):
        return {"ph": ph, "cat": "ac2g", "name": name, "pid": 1, "tid": 1, "ts": ts, "id": fid}

    events = [{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": -100, "dur": 300},
              flow("s", 20, "late"), flow("s", 10, "a"), flow("s", 10, "b"), flow("t", 30, "step"),
              flow("f", 50, "c"), flow("f", 50, "d"), flow("f", 40, "early"),
              flow("s", -5, "n1", 8), flow("s", -5, "n2", 8), flow("f", -2, "n3", 8), flow("f", -2, "n4", 8),
              flow("s", 10.002, "x", 9), flow("s", 10.001, "y", 9), flow("f", 10.009, "z", 9), flow("f", 10.008, "w", 9)]
    ingest_files([write_json(tmp_path, "flows.json", events)])
    assert query("""SELECT id, name, start_event, end_event, steps, start_ts_ns, end_ts_ns FROM trace_flows
                    ORDER BY id""") == [("7", "late", 2, 6, 1, 10_000, 50_000), ("8", "n1", 8, 11, 0, -5_000, -2_000),
                                        ("9", "x", 13, 14, 0, 10_001, 10_009)]


def test_temporary_folder_named_with_braces_and_quotes(tmp_path, monkeypatch, ingest_files, query):
    """The span engine's working files live in the temporary folder and are named in SQL
    text (some of it a Python format string): a folder named with braces and a quote works."""
    monkeypatch.setenv("LOGANALYZE_TMPDIR", str(tmp_path / "tmp {x} 'q'"))
    events = [{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
              {"ph": "s", "cat": "ac2g", "name": "f", "pid": 1, "tid": 1, "ts": 10, "id": 3},
              {"ph": "f", "cat": "ac2g", "name": "f", "pid": 1, "tid": 1, "ts": 20, "id": 3, "bp": "e"}]
    ingest_files([write_json(tmp_path, "flows.json", events)])
    assert query("SELECT id, start_event, end_event, from_event, to_event FROM trace_flows") == [("3", 1, 2, 0, 0)]
    assert query("SELECT event_no, depth, self_ns FROM trace_events ORDER BY event_no") == [
        (0, 0, 100_000), (1, None, None), (2, None, None)]


def test_rocm_runtime_names(ingest_files, query):
    ingest_files([SAMPLES / "kineto_rocm_style.pt.trace.json.gz"])
    assert query("SELECT DISTINCT name FROM trace_events WHERE role = 'launch' ORDER BY 1") == [
        ("hipLaunchKernel",), ("hipMemcpyAsync",), ("hipMemsetAsync",)]
    assert query("SELECT count(*), count(op_event) FROM trace_gpu") == [(4, 4)]


def test_attribution_by_flows_and_by_external_id(tmp_path, ingest_files, query):
    """Without correlation ids, the ac2g flow links kernel and launch; without either, the
    External id links the kernel to its operator."""
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 50, "args": {"External id": 1}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 99, "pid": 1, "tid": 1, "ts": 10},
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 20, "dur": 30},
        {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 99, "pid": 0, "tid": 7, "ts": 20, "bp": "e"},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 60, "dur": 10, "args": {"External id": 2}},
        {"ph": "X", "cat": "kernel", "name": "add_kernel", "pid": 0, "tid": 7, "ts": 70, "dur": 4, "args": {"External id": 2}},
    ]
    ingest_files([write_json(tmp_path, "links.json", {"traceEvents": events, "schemaVersion": 1})])
    assert query("SELECT name, launch_name, op_name FROM trace_gpu ORDER BY event_no") == [
        ("gemm", "cudaLaunchKernel", "aten::mm"), ("add_kernel", None, "aten::add")]
    assert query("SELECT name, gpu_self_ns FROM trace_ops ORDER BY event_no") == [("aten::mm", 30_000), ("aten::add", 4_000)]


_FLOW_EVENT = st.tuples(st.sampled_from("sf"), st.integers(0, 3), st.sampled_from(["ac2g", None]),
                        st.integers(0, 3), st.sampled_from(["launch", "other", None]))


@settings(max_examples=40, deadline=None)
@given(st.lists(_FLOW_EVENT, max_size=40))
@example([("f", 0, "ac2g", 1, "launch"), ("s", 0, "ac2g", 1, "launch")])  # the start after the end
@example([("s", 0, "ac2g", 1, "other"), ("s", 1, "ac2g", 1, "launch"), ("f", 2, "ac2g", 1, "launch")])
@example([("s", 0, "ac2g", 1, "launch"), ("s", 1, "ac2g", 2, "launch"), ("f", 2, "ac2g", 1, "launch"),
          ("f", 2, "ac2g", 2, "launch"), ("f", 3, None, 2, "launch")])  # the last end decides
def test_launch_calls_found_by_flows_are_those_of_the_rule(tmp_path_factory, flows):
    """Kernels without correlation ids get their launch call from flows: a flow (cat, id)
    whose first start bound to a slice (in file order, before or after the ends) is bound
    to a launch call, and one of whose ends is bound to the kernel; the last such end in
    file order decides.  Random flows (several
    starts and ends per id, starts in launch calls, in other slices or in none, ends in a
    kernel or in none, no cat) against that rule written out."""
    from loganalyze.ingest import ingest_file
    from loganalyze.store import Store

    slices = []
    for k in range(4):
        t = 100 * k
        slices += [{"ph": "X", "cat": "cuda_runtime", "name": f"launch{k}", "pid": 1, "tid": 1, "ts": t, "dur": 5},
                   {"ph": "X", "cat": "python_function", "name": f"other{k}", "pid": 1, "tid": 1, "ts": t + 50, "dur": 5},
                   {"ph": "X", "cat": "kernel", "name": f"kernel{k}", "pid": 0, "tid": 7, "ts": t + 60, "dur": 10}]
    events, starts, expected = list(slices), {}, {}
    for ph, k, cat, fid, where in flows:
        ev = {"ph": ph, "name": "ac2g", "id": fid, "pid": 1 if ph == "s" else 0, "tid": 1 if ph == "s" else 7}
        if cat is not None:
            ev["cat"] = cat
        if ph == "s":  # in launch k, in other k, or after both (no slice encloses it)
            ev["ts"] = 100 * k + {"launch": 1, "other": 51, None: 30}[where]
            if where is not None:
                starts.setdefault((cat, fid), (where, k))
        else:  # the start of kernel k, or after it (no slice)
            ev.update(ts=100 * k + (60 if where is not None else 80), bp="e")
        events.append(ev)
    for ph, k, cat, fid, where in flows:  # the flow's first bound start, wherever it is in the file
        start = starts.get((cat, fid))
        if ph == "f" and where is not None and start is not None and start[0] == "launch":
            expected[f"kernel{k}"] = f"launch{start[1]}"
    path = write_json(tmp_path_factory.mktemp("flows"), "flows.json", {"traceEvents": events})
    with Store(":memory:") as store:
        assert ingest_file(store, str(path)).status == "ingested"
        got = dict(store.con.execute(
            """SELECT k.name, l.name FROM trace_events k JOIN trace_events l ON l.event_no = k.launch_event
               WHERE k.role = 'kernel'""").fetchall())
    assert got == expected


def test_real_pytorch_trace_matches_its_key_averages_table(ingest_files, query):
    """The real torch 2.13 CPU sample against the table the same run printed: Self CPU per
    operator is the same (to the table's printed precision); PyTorch renames ProfilerStep#N
    to ProfilerStep* and merges a nested call of the same name into its parent, so counts
    and CPU totals may differ for those names only."""
    import re

    real = [p for p in sorted(SAMPLES.glob("torch*")) if re.match(r"torch\d+\.\d+_", p.name)]
    trace = next((p for p in real if p.name.endswith("_cpu_train.pt.trace.json.gz")), None)
    table = next((p for p in real if p.name.endswith("_key_averages.txt")), None)
    assert trace is not None and table is not None, "the shipped torch2.13 samples are missing"
    ingest_files([trace, table])
    rows = query("""
        WITH t AS (SELECT regexp_replace(name, '^ProfilerStep#[0-9]+$', 'ProfilerStep*') AS name,
                          sum(self_ns) AS self_ns FROM trace_ops GROUP BY 1)
        SELECT k.name, k.self_ns, t.self_ns, k.cells['Self CPU'] FROM profiler_tables k
        LEFT JOIN t ON t.name = k.name OR (k.name_truncated AND starts_with(t.name, left(k.name, length(k.name) - 3)))""")
    assert len(rows) > 30
    for name, table_ns, trace_ns, cell in rows:
        assert trace_ns is not None, name
        # the table prints 3 decimals of us, ms or s: allow half a unit of its last digit
        unit = {"us": 1, "ms": 1_000, "s": 1_000_000}[cell.lstrip("0123456789.")]
        assert abs(table_ns - trace_ns) <= 500 * unit, (name, table_ns, trace_ns)


def test_flavour_guessed_wrong_from_the_head_is_corrected(ingest_files, query, monkeypatch):
    """The flavour is guessed from the first MiBs; when all categories say otherwise the
    roles are recomputed (MXNet C API spans must not become operators)."""
    from loganalyze.importers import trace_json

    monkeypatch.setattr(trace_json, "head_categories", lambda source, prefix: [])
    (res,) = ingest_files([SAMPLES / "mxnet_style_profile.json"])
    assert res.source["dialect"] == "mxnet"
    assert query("SELECT count(*) FROM trace_ops WHERE cat = 'MXNET_C_API'")[0][0] == 0
    assert ops(query)["Convolution"] == (1, 150_000, 150_000)
