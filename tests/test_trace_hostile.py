"""Hostile trace-event JSON: elements that are not events, nesting past any sane depth, huge
events, and valid traces shaped to make matching and nesting quadratic.  Every file is
generated here; bigger versions of the same shapes are in scripts/trace_hostile.py."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammars.json_text import MAX_DEPTH, TooDeep, ValueScanner, decode_bounded, exact_number

from test_trace_json import assert_invariants

#: events of each adversarial shape (the issue: 40k of them took 30-45 s)
N = 100_000
#: seconds one adversarial file may take to ingest on a loaded 2-core CI machine
SHAPE_SECONDS = 40


def event(ph: str, name: str, ts: int, tid: int = 1, **extra) -> str:
    fields = {"ph": ph, "name": name, "cat": "cpu_op", "ts": ts, "pid": 1, "tid": tid, **extra}
    return json.dumps(fields, separators=(",", ":"))


def write_trace(tmp_path, name: str, elements) -> str:
    path = tmp_path / name
    with open(path, "w") as f:
        f.write('{"traceEvents":[\n' + ",\n".join(elements) + "\n]}")
    return str(path)


def skipped(query) -> dict:
    return dict(query("SELECT line_no, reason FROM skipped_lines"))


# =========================================================================== elements
@pytest.mark.parametrize("reader", ["duckdb", "stream"])
def test_elements_that_are_not_events_are_skipped_with_reason_and_position(tmp_path, monkeypatch, ingest_files,
                                                                            query, reader):
    monkeypatch.setenv("LOGANALYZE_TRACE_READER", reader)
    path = write_trace(tmp_path, "odd.json", [
        event("X", "a", 0, dur=5), "null", "3", '"text"', "[1, 2]", "true", "{}", '{"foo": 1}',
        event("X", "b", 10, dur=5)])
    (res,) = ingest_files([path])
    assert res.status == "ingested"
    assert [r[0] for r in query("SELECT name FROM trace_events ORDER BY event_no")] == ["a", "b"]
    assert skipped(query) == {1: "not a JSON object (null)", 2: "not a JSON object (number)",
                              3: "not a JSON object (string)", 4: "not a JSON object (array)",
                              5: "not a JSON object (boolean)", 6: "missing ph", 7: "missing ph"}
    assert query("SELECT reader FROM trace_files") == [("stream",)]  # DuckDB cannot read non-objects
    assert_invariants(query)


def test_null_elements_alone_stay_on_the_fast_reader(tmp_path, ingest_files, query):
    path = write_trace(tmp_path, "nulls.json", [event("X", "a", 0, dur=5), "null", event("X", "b", 10, dur=5)])
    (res,) = ingest_files([path])
    assert res.status == "ingested"
    assert skipped(query) == {1: "missing ph"}  # DuckDB reads null as an event without fields
    assert_invariants(query)


def test_a_file_of_nulls_says_so(tmp_path, cli):
    path = write_trace(tmp_path, "allnull.json", ["null", "null", "5"])
    res = cli("ingest", "--db", str(tmp_path / "t.duckdb"), path)
    assert res.exit_code == 2
    assert "none of the 3 trace events could be read (first problem: event 0: not a JSON object (null))" in res.stderr


# =========================================================================== depth
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("reader", ["duckdb", "stream"])
def test_deep_array_beside_valid_events(tmp_path, monkeypatch, ingest_files, query, reader):
    monkeypatch.setenv("LOGANALYZE_TRACE_READER", reader)
    path = write_trace(tmp_path, "deep.json", [event("X", "a", 0, dur=5), DEEP, event("X", "b", 10, dur=5),
                                                '{"ph": "X", "args": ' + "{\"k\": " * 5000 + "1" + "}" * 5001])
    (res,) = ingest_files([path])
    assert res.status == "ingested"
    assert [r[0] for r in query("SELECT name FROM trace_events ORDER BY event_no")] == ["a", "b"]
    assert skipped(query) == {1: f"nested deeper than {MAX_DEPTH} levels", 3: f"nested deeper than {MAX_DEPTH} levels"}
    assert_invariants(query)


@pytest.mark.parametrize("reader", ["duckdb", "stream"])
def test_event_with_deep_args_beside_valid_events(tmp_path, monkeypatch, ingest_files, query, reader):
    """DuckDB reads JSON without recursion and keeps a deep ``args`` as text; Python's reader
    skips the event (it would recurse).  Either way the events beside it are kept."""
    monkeypatch.setenv("LOGANALYZE_TRACE_READER", reader)
    args = '{"k": ' * 5000 + "1" + "}" * 5000
    path = write_trace(tmp_path, "deepargs.json", [event("X", "a", 0, dur=5),
                                                    event("X", "b", 10, dur=5)[:-1] + ',"args":' + args + "}",
                                                    event("X", "c", 20, dur=5)])
    (res,) = ingest_files([path])
    assert res.status == "ingested"
    names = [r[0] for r in query("SELECT name FROM trace_events ORDER BY event_no")]
    if reader == "duckdb":
        assert names == ["a", "b", "c"]
        kept = query("SELECT length(CAST(args AS VARCHAR)) FROM trace_events WHERE name = 'b'")
        assert kept == [(len(args.replace(" ", "")),)]
    else:
        assert names == ["a", "c"]
        assert skipped(query) == {1: f"nested deeper than {MAX_DEPTH} levels"}


def test_cut_off_inside_a_deep_array(tmp_path, ingest_files, query):
    path = tmp_path / "cut.json"
    path.write_text('[' + event("X", "a", 0, dur=5) + ",\n" + "[" * 50_000)
    (res,) = ingest_files([path])
    assert res.status == "ingested"
    assert query("SELECT name FROM trace_events") == [("a",)]
    assert query("SELECT complete FROM trace_files") == [(False,)]


def test_deep_metadata_member_is_one_clear_line(tmp_path, cli):
    path = tmp_path / "meta.json"
    path.write_text('{"otherData": ' + DEEP + ', "traceEvents": [' + event("X", "a", 0, dur=5) + "]}")
    res = cli("ingest", "--db", str(tmp_path / "t.duckdb"), str(path))
    assert res.exit_code == 2
    assert f"top-level member 'otherData' is nested deeper than {MAX_DEPTH} levels" in res.stderr


def test_bounded_decoding_and_scanning():
    dec = json.JSONDecoder()
    text = ' {"a": [1, {"b": "]]\\"[["}]}, 5'
    assert decode_bounded(dec, text, 1) == ({"a": [1, {"b": ']]"[['}]}, len(text) - 3)
    assert decode_bounded(dec, "[" * MAX_DEPTH + "]" * MAX_DEPTH + ",1")[1] == 2 * MAX_DEPTH
    with pytest.raises(TooDeep):
        decode_bounded(dec, "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    with pytest.raises(TooDeep):  # too deep is known before the end is read
        decode_bounded(dec, '{"a": ' + "[" * 1000)
    many = '{"x": [' + "[1]," * 5000 + "2]}"  # many brackets, shallow: decoded exactly
    assert decode_bounded(dec, many + ", 7")[1] == len(many)
    scan = ValueScanner()  # fed piece by piece: strings, escapes and numbers across pieces
    assert [scan.feed(p) for p in ('[{"a": "x\\', '"]}', '"}', "], 1")] == [None, None, None, 1]
    assert scan.max_depth == 2
    number = ValueScanner()
    assert (number.feed(" 12"), number.feed("34, 5")) == (None, 2)


# =========================================================================== size
def test_event_larger_than_the_limit_is_skipped_in_bounded_memory(tmp_path):
    """A 24 MiB string (the limit is 16 MiB) is skipped with its reason, read piece by piece;
    peak RSS of the ingest process is measured in a child (scripts/trace_hostile.py: 200 MB)."""
    path = tmp_path / "big.json"
    with open(path, "w") as f:
        f.write('[' + event("X", "a", 0, dur=5) + ',\n{"ph": "X", "name": "big", "ts": 1, "dur": 1, "args": {"s": "')
        for _ in range(24 * 1024):
            f.write("x" * 1020 + '\\",]')
        f.write('"}},\n' + event("X", "b", 10, dur=5) + "]")
    db = tmp_path / "t.duckdb"
    probe = ("import resource, subprocess, sys; "
             "p = subprocess.run([sys.executable, '-m', 'loganalyze', 'ingest', '--db', sys.argv[1], sys.argv[2]], "
             "capture_output=True, text=True); "
             "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); print(p.stdout, p.stderr)")
    out = subprocess.run([sys.executable, "-c", probe, str(db), str(path)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}).stdout
    rc, peak_kib = map(int, out.split("\n", 1)[0].split())
    assert rc == 0, out
    assert "event(s) skipped (first: event 1, larger than 16 MiB)" in out
    assert peak_kib < 700 * 1024, out


# =========================================================================== quadratic shapes
def _shape(name: str) -> list:
    """The events of one adversarial shape (each built only when its test runs)."""
    half = N // 2
    shapes = {
        # B1 .. Bn, then E1 .. En: each E closes the outermost open B
        "fifo": lambda: ([event("B", f"op{i}", i) for i in range(half)]
                         + [event("E", f"op{i}", half + i) for i in range(half)]),
        # n open B, then n E of names never opened
        "unmatched": lambda: ([event("B", f"op{i}", i) for i in range(half)]
                              + [event("E", f"zz{i}", half + i) for i in range(half)]),
        # B within B within B ..., closed last-in-first-out
        "deep": lambda: ([event("B", f"op{i}", i) for i in range(half)]
                         + [event("E", f"op{half - 1 - i}", half + i) for i in range(half)]),
        # X within X ...; a kernel at the bottom (its time goes up the whole chain)
        "deep_x": lambda: ([event("X", f"op{i}", i, dur=2 * (N - i)) for i in range(N - 2)]
                           + [event("X", "cudaLaunchKernel", N, cat="cuda_runtime", dur=1, args={"correlation": 1}),
                              event("X", "k", N, tid=9, cat="kernel", dur=7, args={"correlation": 1})]),
        # a long chain of closed operators, then many spans after all of them
        "closed_chain": lambda: ([event("X", f"op{i}", i, dur=half - i) for i in range(half)]
                                 + [event("X", f"late{i}", N + i, cat="cuda_runtime", dur=1) for i in range(half)]),
        # async b/e of one id, first-in-first-out
        "async_fifo": lambda: ([event("b", f"t{i}", i, id=1) for i in range(half)]
                               + [event("e", f"t{i}", half + i, id=1) for i in range(half)]),
        # flow ends on many threads, each after a run of closed slices
        "flows": lambda: ([event("X", f"op{i}", 2 * i, tid=i % 1000, dur=1) for i in range(half)]
                          + [event("f" if i % 2 else "s", "flow", N + i, tid=i % 1000, id=i // 2, bp="e", cat="ac2g")
                             for i in range(half)]),
    }
    return shapes[name]()


def _check_fifo(q):
    assert q("SELECT count(*), min(dur_ns), max(dur_ns) FROM trace_events WHERE ph = 'B'") == [
        (N // 2, N // 2 * 1000, N // 2 * 1000)]


def _check_unmatched(q):
    assert q("SELECT unmatched_e, unclosed_b FROM trace_files") == [(N // 2, N // 2)]


def _check_deep(q):
    assert q("SELECT max(depth), count(*) FILTER (WHERE self_ns = 2000) FROM trace_events") == [
        (N // 2 - 1, N // 2 - 1)]


def _check_deep_x(q):
    assert q("SELECT max(depth), min(gpu_total_ns), max(gpu_self_ns) FROM trace_events WHERE role = 'op'") == [
        (N - 3, 7000, 7000)]


def _check_closed_chain(q):
    assert q("SELECT count(*) FROM trace_events WHERE name LIKE 'late%' AND parent IS NULL") == [(N // 2,)]


def _check_async_fifo(q):
    assert q("SELECT async_unmatched_e, async_unclosed_b FROM trace_files") == [(0, 0)]


def _check_flows(q):
    assert q("SELECT count(*), count(from_event), count(to_event) FROM trace_flows") == [(N // 4, 0, 0)]


@pytest.mark.parametrize("shape", ["fifo", "unmatched", "deep", "deep_x", "closed_chain", "async_fifo", "flows"])
def test_adversarial_shapes_are_not_quadratic(tmp_path, ingest_files, query, shape):
    path = write_trace(tmp_path, f"{shape}.json", _shape(shape))
    started = time.perf_counter()
    (res,) = ingest_files([path])
    took = time.perf_counter() - started
    assert res.status == "ingested"
    globals()[f"_check_{shape}"](query)
    assert took < SHAPE_SECONDS, f"{shape}: {took:.1f} s"


@pytest.mark.parametrize("seed", range(5))
def test_vectorised_parents_equal_the_stack_sweep(seed, monkeypatch):
    """The nesting answer does not depend on which of its two ways computes it (improper
    nesting and equal starts included); depth by pointer doubling equals the walk up."""
    import numpy as np

    from loganalyze.importers import trace_nesting as tn

    rng = np.random.default_rng(seed)
    n = 3000
    thr = np.sort(rng.integers(0, 4, n))
    ts = rng.integers(0, 500, n)
    dur = rng.integers(0, 80, n)
    order = np.lexsort((np.arange(n), -dur, ts, thr))
    thr, ts, end = thr[order], ts[order], (ts + dur)[order]
    is_op = rng.random(n) < 0.7
    monkeypatch.setattr(tn, "VECTOR_ROUNDS", n)  # never falls back
    par = tn._parents(thr, ts, end, is_op)
    assert (par == tn._stack_parents(thr, ts, end, is_op)).all()
    depth = tn._depths(par)
    for i in rng.integers(0, n, 200).tolist():
        walked, p = 0, par[i]
        while p >= 0:
            walked, p = walked + 1, par[p]
        assert depth[i] == walked
    ops = np.nonzero(is_op)[0]
    ops = ops[np.isin(par[ops], ops) | (par[ops] < 0)]
    place = np.full(n, -1)
    place[ops] = np.arange(len(ops))
    op_parent = np.where(par[ops] >= 0, place[np.maximum(par[ops], 0)], -1)
    own = rng.integers(0, 5, len(ops))
    by_level = tn._inclusive(op_parent, depth[ops], own)
    monkeypatch.setattr(tn, "VECTOR_LEVELS", 0)
    assert (tn._inclusive(op_parent, depth[ops], own) == by_level).all()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(-5, 5), st.integers(0, 4)), max_size=60),
       st.sampled_from([0, 1, -(2**62), 2**62 - 10, 2**40]))
def test_span_order_equals_lexsort(spans, offset):
    """The span order (thread, start, longer first, file order) equals the four-key lexsort
    it replaces: many equal starts, and starts whose range does not fit the packed key."""
    import numpy as np

    from loganalyze.importers import trace_nesting as tn

    thr = np.array([s[0] for s in spans], dtype=np.int64)
    ts = np.array([s[1] for s in spans], dtype=np.int64) * (2**59 if offset == 1 else 1) + (0 if offset == 1 else offset)
    dur = np.array([s[2] for s in spans], dtype=np.int64)
    r = np.random.default_rng(len(spans)).permutation(len(spans)).astype(np.int64)
    assert tn.span_order(thr, ts, dur, r).tolist() == np.lexsort((r, -dur, ts, thr)).tolist()


def test_duplicates_need_equal_args(tmp_path, ingest_files, query):
    """An X event equal to an earlier one in every field, args included, is a duplicate; one
    that differs only in its args is not (the first check leaves args out)."""
    x = '{"ph":"X","name":"k","cat":"c","pid":1,"tid":1,"ts":10,"dur":5,"args":%s}'
    path = write_trace(tmp_path, "dups.json", [x % '{"a":1}', x % '{"a":2}', x % '{"a":1}', x % "{}"])
    (res,) = ingest_files([path])
    assert res.status == "ingested"
    assert skipped(query) == {2: "duplicate of event 0"}
    assert query("SELECT event_no FROM trace_events ORDER BY event_no") == [(0,), (1,), (3,)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 4), st.integers(0, 3)), max_size=60))
def test_duplicate_candidates_are_the_spans_sharing_thread_start_and_end(spans):
    """The rows checked for duplicates are exactly the spans whose thread, start and end
    another span has (so every complete event that repeats another is among them)."""
    from collections import Counter

    import numpy as np

    from loganalyze.importers import trace_nesting as tn
    from loganalyze.importers.trace_matching import duplicate_candidates

    thr = np.array([s[0] for s in spans], dtype=np.int64)
    ts = np.array([s[1] for s in spans], dtype=np.int64)
    dur = np.array([s[2] for s in spans], dtype=np.int64)
    r = np.random.default_rng(len(spans)).permutation(len(spans)).astype(np.int64)
    order = tn.span_order(thr, ts, dur, r)
    sorted_spans = {"thr": thr[order], "ts": ts[order], "end": (ts + dur)[order], "r": r[order]}
    keys = Counter(spans)
    assert duplicate_candidates(sorted_spans).tolist() == sorted(
        int(r[i]) for i, s in enumerate(spans) if keys[s] > 1)


@pytest.mark.parametrize("kept", [0, 1 << 16])
def test_duplicates_among_spans_alike(tmp_path, monkeypatch, ingest_files, query, kept):
    """Duplicates among other spans with the same thread, start and end (a begin/end pair,
    an event of another name) are found, with the spans kept through the check or made
    again after it, and leave no trace in the nesting (as before the check used the spans:
    the same rows and nesting)."""
    from loganalyze.importers import trace_spans

    monkeypatch.setattr(trace_spans, "SPANS_KEPT_FOR_CANDIDATES", kept)
    x = '{"ph":"X","name":"%s","cat":"cpu_op","pid":1,"tid":1,"ts":%d,"dur":%d}'
    path = write_trace(tmp_path, "alike.json", [
        x % ("outer", 0, 100), x % ("a", 10, 5), event("B", "a", 10), x % ("b", 10, 5), event("E", "a", 15),
        x % ("a", 10, 5), x % ("c", 20, 5), x % ("c", 20, 5), x % ("outer", 0, 100)])
    (res,) = ingest_files([path])
    assert res.status == "ingested", res.message
    assert skipped(query) == {5: "duplicate of event 1", 7: "duplicate of event 6", 8: "duplicate of event 0"}
    assert query("SELECT event_no, ph, name, depth, parent FROM trace_events ORDER BY event_no") == [
        (0, "X", "outer", 0, None), (1, "X", "a", 1, 0), (2, "B", "a", 2, 1), (3, "X", "b", 3, 2),
        (4, "E", "a", None, None), (6, "X", "c", 1, 0)]


def test_skipped_events_reported_in_batches_are_all_reported(tmp_path, monkeypatch, ingest_files, query):
    """Duplicates, events with a problem and begin/end pairs are read a few rows at a time,
    in order: every skipped one is reported, with its reason and text, and every pair is
    matched, across the edges of the row ranges."""
    from loganalyze.importers import trace_load

    monkeypatch.setattr(trace_load, "ORDERED_CHUNK", 3)
    x = '{"ph":"X","name":"k%d","cat":"c","pid":1,"tid":1,"ts":%d,"dur":5}'
    events = []
    for i in range(10):
        events += [x % (i, 10 * i), x % (i, 10 * i), '{"ph":"X","name":"bad%d","pid":1,"tid":1}' % i]
    events += [event("B", "outer", 0, tid=2), event("B", "inner", 1, tid=2), event("E", "inner", 2, tid=2),
               event("E", "nobody", 3, tid=2), event("E", "outer", 9, tid=2)]
    path = write_trace(tmp_path, "batches.json", events)
    (res,) = ingest_files([path])
    assert res.status == "ingested", res.message
    assert skipped(query) == {**{3 * i + 1: f"duplicate of event {3 * i}" for i in range(10)},
                              **{3 * i + 2: "missing ts" for i in range(10)},
                              33: "unmatched E: no open B named 'nobody' on pid 1 tid 2"}
    texts = dict(query("SELECT line_no, text FROM skipped_lines"))
    assert texts[4] == '{"ph": "X", "name": "k1", "cat": "c", "ts": 10, "dur": 5, "pid": 1, "tid": 1}'
    assert texts[29] == '{"ph": "X", "name": "bad9", "pid": 1, "tid": 1}'
    assert query("SELECT name, dur_ns, end_event FROM trace_events WHERE ph = 'B' ORDER BY event_no") == [
        ("outer", 9000, 34), ("inner", 1000, 32)]


# =========================================================================== numbers
@pytest.mark.parametrize("reader", ["duckdb", "stream"])
def test_numbers_beyond_any_exponent(tmp_path, monkeypatch, ingest_files, query, reader):
    """A JSON number whose exponent no Decimal holds (10^18 and more) reads as a double reads
    it, infinite or zero (it was an internal error of the exact reader, found by
    scripts/fuzz.py): the event whose time is infinite is skipped with the time's reason,
    the one whose args hold such numbers is kept."""
    monkeypatch.setenv("LOGANALYZE_TRACE_READER", reader)
    path = write_trace(tmp_path, "exponents.json", [
        event("X", "a", 0, dur=5),
        '{"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 11e111111111111111118799, "dur": 5}',
        event("X", "c", 10, dur=5)[:-1] + ', "args": {"big": 1e99999999999999999999, "tiny": -1e-99999999999999999999}}'])
    (res,) = ingest_files([path])
    assert res.status == "ingested", res.message
    assert [r[0] for r in query("SELECT name FROM trace_events ORDER BY event_no")] == ["a", "c"]
    assert skipped(query) == {1: "ts is not a finite number (Infinity)"}
    assert query("SELECT CAST(args AS VARCHAR) FROM trace_events WHERE name = 'c'") == [('{"big":Infinity,"tiny":-0.0}',)]
    assert query("SELECT reader FROM trace_files") == [("stream",)]  # DuckDB's reader refuses such numbers
    assert_invariants(query)


def test_top_level_member_beyond_any_exponent(tmp_path, ingest_files, query):
    path = tmp_path / "member.json"
    path.write_text('{"baseTimeNanoseconds": 1e99999999999999999999, "traceEvents": [' + event("X", "a", 0, dur=5) + "]}")
    (res,) = ingest_files([path])
    assert res.status == "ingested", res.message
    assert query("SELECT base_time_ns, CAST(metadata AS VARCHAR) FROM trace_files") == [
        (None, '{"baseTimeNanoseconds": Infinity}')]


@pytest.mark.parametrize("text,value", [
    ("1.5e3", "1.5E+3"), ("11e111111111111111118799", "Infinity"), ("-1e99999999999999999999", "-Infinity"),
    ("1e-99999999999999999999", "0.0"), ("-1e-99999999999999999999", "-0.0")])
def test_exact_number_beyond_decimals_exponents(text, value):
    assert str(exact_number(text)) == value
