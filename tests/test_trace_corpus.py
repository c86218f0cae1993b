"""Every trace-event JSON file and MXNet dumps() table of the public corpus, against the
independently computed answers in ``../shared/corpus/expected`` (rules: corpus README,
"Chrome trace JSON" and "MXNet tables").  Skips cleanly without the corpus."""
from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from pathlib import Path

import pytest

from conftest import CORPUS

TRACE_FILES = sorted(p.name for p in (CORPUS / "trace_json").glob("*")) if CORPUS.is_dir() else []
TABLE_FILES = sorted(p.name for p in (CORPUS / "mxnet_stats").glob("*")) if CORPUS.is_dir() else []


def _expected(corpus: Path, folder: str, name: str) -> dict:
    path = corpus / folder / name
    exp = json.loads((corpus / "expected" / f"{name}.expected.json").read_text())
    if hashlib.sha256(path.read_bytes()).hexdigest() != exp["sha256"]:
        pytest.skip(f"{name} differs from the file the expected answers were computed for")
    return exp


@pytest.fixture(scope="module")
def trace_db(tmp_path_factory):
    """All corpus traces and tables ingested once into one database."""
    if not CORPUS.is_dir():
        pytest.skip("public corpus ../shared/corpus not present")
    from loganalyze.ingest import ingest_paths
    from loganalyze.store import Store

    db = str(tmp_path_factory.mktemp("trace_corpus") / "corpus.duckdb")
    paths = [str(CORPUS / "trace_json" / n) for n in TRACE_FILES] + [str(CORPUS / "mxnet_stats" / n) for n in TABLE_FILES]
    with Store(db) as store:
        results = list(ingest_paths(store, paths))
    for r in results:
        assert r.status == "ingested", r.message
    return db


def _rows(db, sql, params=()):
    from loganalyze.store import Store

    with Store(db, read_only=True) as store:
        return store.con.execute(sql, list(params)).fetchall()


def _sid(db, name):
    return _rows(db, "SELECT source_id FROM sources WHERE name = ?", [name])[0][0]


# =========================================================================== traces
@pytest.mark.parametrize("name", TRACE_FILES)
def test_trace_per_operator(trace_db, corpus, name):
    exp = _expected(corpus, "trace_json", name)
    sid = _sid(trace_db, name)
    got = {n: (c, t, s) for n, c, t, s in _rows(
        trace_db, """SELECT name, count(*), sum(dur_ns), sum(self_ns) FROM trace_events
                     WHERE source_id = ? AND role = 'op' AND dur_ns IS NOT NULL GROUP BY name""", [sid])}
    want = {n: (e["count"], e["total_ns"], e["self_ns"]) for n, e in exp["per_name"].items()}
    assert got == want
    assert sum(t for _, t, _ in got.values()) == exp["sum_total_ns_all_ops"]
    assert sum(s for _, _, s in got.values()) == exp["sum_self_ns_all_ops"]
    (improper,) = _rows(trace_db, "SELECT improper_nesting FROM trace_files WHERE source_id = ?", [sid])[0]
    assert improper == exp["improper_nesting"]


@pytest.mark.parametrize("name", TRACE_FILES)
def test_trace_summary_by_op_json(trace_db, corpus, cli, name):
    """The acceptance contract: summary --by op --format json, one object per operator."""
    exp = _expected(corpus, "trace_json", name)
    from loganalyze.store import Store

    # one file per database, as the acceptance check runs it
    db = str(Path(trace_db).with_name(f"one_{abs(hash(name))}.duckdb"))
    res = cli("ingest", "--db", db, str(corpus / "trace_json" / name))
    assert res.exit_code == 0, res.output
    res = cli("summary", "--db", db, "--by", "op", "--format", "json")
    assert res.exit_code == 0, res.output
    objs = res.json()
    assert len(objs) == len({o["op"] for o in objs}) == len(exp["per_name"])
    for o in objs:
        e = exp["per_name"][o["op"]]
        assert o["count"] == e["count"]
        assert o["total_us"] == pytest.approx(e["total_us"], rel=1e-9, abs=1e-9)
        assert o["self_us"] == pytest.approx(e["self_us"], rel=1e-9, abs=1e-9)
    with Store(db, read_only=True) as store:
        assert store.con.execute("SELECT count(*) FROM sources").fetchall()[0][0] == 1


@pytest.mark.parametrize("name", TRACE_FILES)
def test_trace_events_and_categories(trace_db, corpus, name):
    exp = _expected(corpus, "trace_json", name)
    sid = _sid(trace_db, name)
    total, parsed, other, skipped = _rows(
        trace_db, "SELECT lines_total, lines_parsed, lines_non_verbose, lines_skipped FROM sources WHERE source_id = ?",
        [sid])[0]
    assert total == exp["events"] and parsed == exp["events"] and other == 0 and skipped == 0
    by_ph = dict(_rows(trace_db, "SELECT ph, count(*) FROM trace_events WHERE source_id = ? GROUP BY ph", [sid]))
    assert by_ph == exp["events_by_ph"]
    by_ph_cat = {f"{ph}/{cat}": n for ph, cat, n in _rows(
        trace_db, "SELECT ph, coalesce(cat, 'None'), count(*) FROM trace_events WHERE source_id = ? GROUP BY ALL", [sid])}
    assert by_ph_cat == exp["events_by_ph_cat"]
    # complete events (X and matched B/E) per category
    got = {c: (n, t) for c, n, t in _rows(
        trace_db, """SELECT cat, count(*), sum(dur_ns) FROM trace_events
                     WHERE source_id = ? AND ph IN ('X', 'B') AND dur_ns IS NOT NULL GROUP BY cat""", [sid])}
    assert got == {c: (e["count"], e["total_ns"]) for c, e in exp["complete_events_by_cat"].items()}
    for cat, names in exp["per_cat_name"].items():
        for n, e in names.items():
            row = _rows(trace_db, """SELECT count(*), sum(dur_ns), min(dur_ns), max(dur_ns) FROM trace_events
                                     WHERE source_id = ? AND cat = ? AND name = ? AND ph IN ('X', 'B')""", [sid, cat, n])[0]
            assert row == (e["count"], e["total_ns"], e["min_ns"], e["max_ns"]), (cat, n)
    unmatched, unclosed = _rows(trace_db, "SELECT unmatched_e, unclosed_b FROM trace_files WHERE source_id = ?", [sid])[0]
    assert (unmatched, unclosed) == (exp["unmatched_E"], exp["unclosed_B"])
    n_instant = _rows(trace_db, "SELECT count(*) FROM trace_events WHERE source_id = ? AND role = 'instant'", [sid])[0][0]
    assert n_instant == exp["instant_events"]
    flows = dict(_rows(trace_db, "SELECT ph, count(*) FROM trace_events WHERE source_id = ? AND role = 'flow' GROUP BY ph", [sid]))
    assert flows == exp["flow_events"]


@pytest.mark.parametrize("name", TRACE_FILES)
def test_trace_kernels(trace_db, corpus, name):
    exp = _expected(corpus, "trace_json", name)["kernels"]
    sid = _sid(trace_db, name)
    n, total, distinct = _rows(
        trace_db, "SELECT count(*), coalesce(sum(dur_ns), 0), count(DISTINCT name) FROM trace_events WHERE source_id = ? AND cat = 'kernel'",
        [sid])[0]
    assert (n, total, distinct) == (exp["count"], exp["total_ns"], exp["distinct_names"])
    per = {k: (c, t, lo, hi) for k, c, t, lo, hi in _rows(
        trace_db, """SELECT name, count(*), sum(duration_ns), min(duration_ns), max(duration_ns) FROM gpu_kernels
                     WHERE source_id = ? GROUP BY name""", [sid])}
    assert per == {k: (e["count"], e["total_ns"], e["min_ns"], e["max_ns"]) for k, e in exp["per_name"].items()}
    if n:
        # every kernel found its launch call and operator (correlation ids)
        linked = _rows(trace_db, """SELECT count(launch_event), count(op_event) FROM trace_events
                                    WHERE source_id = ? AND role = 'kernel'""", [sid])[0]
        assert linked == (n, n)


@pytest.mark.parametrize("name", TRACE_FILES)
def test_trace_names_ids_and_metadata(trace_db, corpus, name):
    exp = _expected(corpus, "trace_json", name)
    sid = _sid(trace_db, name)
    procs = dict(_rows(trace_db, "SELECT pid, name FROM trace_process_names WHERE source_id = ?", [sid]))
    assert procs == exp["process_names"]
    threads = {f"{p}/{t}": n for p, t, n in _rows(trace_db, "SELECT pid, tid, name FROM trace_thread_names WHERE source_id = ?", [sid])}
    assert threads == exp["thread_names"]
    ids = {v for (v,) in _rows(trace_db, """SELECT pid FROM trace_events WHERE source_id = ? UNION SELECT tid FROM trace_events
                                            WHERE source_id = ? UNION SELECT id FROM trace_events WHERE source_id = ?""",
                                [sid, sid, sid]) if v is not None}
    for big in exp["distinct_int_ids_above_2^53"]:
        assert big in ids  # exact, as text
    above63 = {v for v in ids if v.isdigit() and int(v) >= 2 ** 63}
    assert above63 == set(exp["int_ids_above_2^63"])
    base, unit = _rows(trace_db, "SELECT base_time_ns, display_time_unit FROM trace_files WHERE source_id = ?", [sid])[0]
    assert (str(base) if base is not None else None) == exp["baseTimeNanoseconds"]
    assert unit == exp["displayTimeUnit"]
    keys = _rows(trace_db, "SELECT top_level_keys FROM trace_files WHERE source_id = ?", [sid])[0][0]
    assert sorted(keys) == exp["top_level_keys"]


@pytest.mark.parametrize("name", [n for n in TRACE_FILES if n.startswith("mxnet")])
def test_mxnet_async_and_counters(trace_db, corpus, name):
    exp = _expected(corpus, "trace_json", name)
    sid = _sid(trace_db, name)
    got = {f"{c}/{n}": (k, t, lo, hi) for c, n, k, t, lo, hi in _rows(
        trace_db, """SELECT cat, name, count(*), sum(dur_ns), min(dur_ns), max(dur_ns) FROM trace_async
                     WHERE source_id = ? GROUP BY ALL""", [sid])}
    assert got == {k: (e["count"], e["total_ns"], e["min_ns"], e["max_ns"]) for k, e in exp["async_b_e_per_cat_name"].items()}
    assert _rows(trace_db, "SELECT async_unmatched_e FROM trace_files WHERE source_id = ?", [sid])[0][0] == exp["async_unmatched"]
    by_name = dict(_rows(trace_db, "SELECT name, count(DISTINCT event_no) FROM trace_counters WHERE source_id = ? GROUP BY name", [sid]))
    assert by_name == exp["counter_events_by_name"]
    for key, e in exp["counter_series"].items():
        counter, series = next((key[:i], key[i + 1:]) for i in range(len(key)) if key[:i] in by_name and key[i] == "/")
        row = _rows(trace_db, """SELECT count(*), min(value), max(value), arg_min(value, event_no), arg_max(value, event_no)
                                 FROM trace_counters WHERE source_id = ? AND name = ? AND series = ?""", [sid, counter, series])[0]
        assert row == (e["count"], e["min"], e["max"], e["first"], e["last"]), key
    # each operator recorded twice: same counts in the B/E and async recordings
    counts = _rows(trace_db, """SELECT count(*) FROM (
        SELECT name, count(*) AS n FROM trace_ops WHERE source_id = ? GROUP BY name) o
        JOIN (SELECT name, count(*) AS n FROM trace_async WHERE source_id = ? AND cat = 'operator' GROUP BY name) a
        USING (name) WHERE o.n <> a.n""", [sid, sid])[0][0]
    assert counts == len(exp["op_B_E_vs_async"]["count_mismatches"])


# =========================================================================== MXNet tables
@pytest.mark.parametrize("name", TABLE_FILES)
def test_mxnet_table(trace_db, corpus, name):
    exp = _expected(corpus, "mxnet_stats", name)
    sid = _sid(trace_db, name)
    assert _rows(trace_db, "SELECT lines_total FROM sources WHERE source_id = ?", [sid])[0][0] == exp["lines_total"]
    rows = _rows(trace_db, """SELECT section, name, line_no, calls, cells, is_counter, total_ns, min_ns, max_ns, avg_ns
                              FROM profiler_tables WHERE source_id = ? ORDER BY line_no""", [sid])
    sections = {}
    for section, rname, line_no, calls, cells, counter, total, lo, hi, avg in rows:
        sections.setdefault(section, {})[rname] = (line_no, calls, cells, counter, total, lo, hi, avg)
    assert set(sections) == set(exp["sections"])
    for title, sec in exp["sections"].items():
        got = sections[title]
        assert list(got) == list(sec["rows"]), title
        assert len(got) == sec["row_count"]
        assert sum(v[1] for v in got.values()) == sec["sum_total_count"]
        assert sum(Decimal(v[2]["Time (ms)"]) for v in got.values()) == Decimal(sec["sum_time_ms_exact"])
        for rname, e in sec["rows"].items():
            line_no, calls, cells, counter, total, lo, hi, avg = got[rname]
            assert line_no == e["line"]
            assert calls == e["total_count"]
            assert bool(counter) == bool(e.get("counter_row", False)), rname
            for col, label in (("time_ms", "Time (ms)"), ("min_time_ms", "Min Time (ms)"),
                               ("max_time_ms", "Max Time (ms)"), ("avg_time_ms", "Avg Time (ms)")):
                assert cells[label] == e[f"{col}_exact"]
            if not counter:
                assert total == int(Decimal(e["time_ms_exact"]) * 1_000_000)
                assert (lo, hi, avg) == tuple(int(Decimal(e[f"{c}_exact"]) * 1_000_000)
                                              for c in ("min_time_ms", "max_time_ms", "avg_time_ms"))
            else:
                assert total is None


@pytest.mark.parametrize("name", TABLE_FILES)
def test_mxnet_table_summary(trace_db, corpus, cli, name):
    exp = _expected(corpus, "mxnet_stats", name)
    db = str(Path(trace_db).with_name(f"tbl_{abs(hash(name))}.duckdb"))
    assert cli("ingest", "--db", db, str(corpus / "mxnet_stats" / name)).exit_code == 0
    res = cli("summary", "--db", db, "--by", "op", "--format", "json")
    assert res.exit_code == 0, res.output
    objs = {o["op"]: o for o in res.json()}
    ops = exp["sections"]["operator"]["rows"]
    for rname, e in ops.items():
        assert objs[rname]["count"] == e["total_count"]
        assert objs[rname]["total_us"] == pytest.approx(float(Decimal(e["time_ms_exact"]) * 1000))
    counters = [n for sec in exp["sections"].values() for n, e in sec["rows"].items() if e.get("counter_row")]
    assert not set(counters) & set(objs)
