"""The trace JSON path's memory bounds (issue 10): DuckDB's memory limit is lowered while a
trace file goes into a database file and restored afterwards, the workspace is then a
database file of its own (gone afterwards), the per-event arrays are gone before the rows
are copied into the store, and the rows are the same whatever the limit."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path

import duckdb
import pytest

from loganalyze.importers import trace_spans
from loganalyze.importers.trace_workspace import MEMORY_FLOOR, Workspace, memory_budget
from loganalyze.ingest import ingest_file
from loganalyze.memory_limit import keep_block_memory, lowered_memory_limit, release_cached_blocks, setting_bytes
from loganalyze.store import Store

BENCH = Path(__file__).resolve().parents[1] / "scripts" / "bench_trace.py"


def _generator():
    spec = importlib.util.spec_from_file_location("bench_trace", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def small_trace(tmp_path_factory) -> tuple[Path, dict]:
    """A 1 MB Kineto-like trace from the benchmark's generator, and its per-operator tally."""
    path = tmp_path_factory.mktemp("speed") / "rank0.pt.trace.json"
    return path, _generator().generate(path, 1)


def _limit(con) -> float:
    return setting_bytes(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])


def _spy_limit(monkeypatch) -> list[float]:
    """The memory limit in force while the span engine builds and publishes its tables."""
    seen: list[float] = []
    run = trace_spans.SpanEngine.run

    def spying(self):
        seen.append(_limit(self.con))
        return run(self)

    monkeypatch.setattr(trace_spans.SpanEngine, "run", spying)
    return seen


def test_budget_scales_with_the_file_and_has_a_floor():
    assert memory_budget(0) == MEMORY_FLOOR
    assert memory_budget(10 << 20) == MEMORY_FLOOR
    assert memory_budget(8 << 30) == 2 << 30


def test_lowered_limit_never_raises_and_is_restored():
    con = duckdb.connect()
    con.execute("SET memory_limit = '1GB'")
    gb = pytest.approx(1e9, rel=1e-3)
    with lowered_memory_limit(con, "2GB"):
        assert _limit(con) == gb
    with lowered_memory_limit(con, "100MB"):
        assert _limit(con) == pytest.approx(1e8, rel=1e-3)
    assert _limit(con) == gb
    with pytest.raises(RuntimeError):
        with lowered_memory_limit(con, "100MB"):
            raise RuntimeError("boom")
    assert _limit(con) == gb
    shown = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    for _ in range(3):  # a value someone set is shown the same after every use
        with lowered_memory_limit(con, "100MB"):
            pass
        assert con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == shown


def test_lowered_limit_after_a_failed_statement_shows_its_error_and_is_restored():
    """A statement that fails inside the block aborts the transaction, where the restoring
    SET fails too: the error seen is the statement's, and the limit still comes back."""
    con = duckdb.connect()
    con.execute("SET memory_limit = '1GB'")
    con.execute("BEGIN TRANSACTION")
    with pytest.raises(duckdb.InvalidInputException, match="boom"):
        with lowered_memory_limit(con, "100MB"):
            con.execute("SELECT error('boom')")
    con.execute("ROLLBACK")
    assert _limit(con) == pytest.approx(1e9, rel=1e-3)


def test_file_store_ingest_runs_under_the_budget_and_restores_it(tmp_path, small_trace, monkeypatch):
    seen = _spy_limit(monkeypatch)
    path, _ = small_trace
    with Store(str(tmp_path / "db.duckdb")) as store:
        store.con.execute("SET memory_limit = '8GB'")  # above the budget on any machine
        before = _limit(store.con)
        res = ingest_file(store, str(path))
        assert res.status == "ingested", res.message
        assert seen and seen[0] == pytest.approx(memory_budget(path.stat().st_size), rel=1e-3) and seen[0] < before
        assert _limit(store.con) == before


def _block_memory(con) -> float:
    return setting_bytes(con.execute("SELECT current_setting('block_allocator_memory')").fetchall()[0][0])


def test_sizes_in_bytes_as_duckdb_shows_them():
    assert setting_bytes("0 bytes") == 0 and setting_bytes("1 byte") == 1
    assert setting_bytes("192.0 MiB") == 192 << 20 and setting_bytes("100MB") == 1e8
    assert setting_bytes("unlimited") == float("inf")


def _has_block_memory() -> bool:
    return bool(duckdb.connect().execute(
        "SELECT count(*) FROM duckdb_settings() WHERE name = 'block_allocator_memory'").fetchall()[0][0])


needs_block_memory = pytest.mark.skipif(not _has_block_memory(), reason="a DuckDB release without block_allocator_memory")


@needs_block_memory
def test_block_memory_is_only_ever_raised():
    con = duckdb.connect()
    assert _block_memory(con) == 0
    keep_block_memory(con, 64 << 20)
    assert _block_memory(con) == 64 << 20
    keep_block_memory(con, 32 << 20)  # DuckDB refuses to lower it: not asked to
    assert _block_memory(con) == 64 << 20
    keep_block_memory(con, 96 << 20)
    assert _block_memory(con) == 96 << 20


@needs_block_memory
def test_file_store_ingest_keeps_the_budget_of_block_memory(tmp_path, small_trace):
    path, _ = small_trace
    with Store(str(tmp_path / "db.duckdb")) as store:
        store.con.execute("SET memory_limit = '8GB'")
        assert ingest_file(store, str(path)).status == "ingested"
        assert _block_memory(store.con) == memory_budget(path.stat().st_size)
    with Store(":memory:") as store:  # no budget there: nothing kept
        assert ingest_file(store, str(path)).status == "ingested"
        assert _block_memory(store.con) == 0


def test_memory_store_keeps_its_limit(small_trace, monkeypatch):
    seen = _spy_limit(monkeypatch)
    path, _ = small_trace
    with Store(":memory:") as store:
        before = _limit(store.con)
        assert ingest_file(store, str(path)).status == "ingested"
        assert seen == [before] and _limit(store.con) == before


def test_release_of_cached_blocks_keeps_the_limit_and_frees_them(tmp_path):
    """The blocks a query read stay in DuckDB's memory until released; the limit in force
    is the same afterwards (given, or as shown before)."""
    con = duckdb.connect(str(tmp_path / "db.duckdb"))
    con.execute("SET memory_limit = '300MB'")
    con.execute("CREATE TABLE t AS SELECT range AS a, md5(range::VARCHAR) AS b FROM range(2000000)")
    used = "SELECT sum(memory_usage_bytes) FROM duckdb_memory()"
    con.execute("SELECT sum(a), max(b) FROM t").fetchall()
    cached = con.execute(used).fetchall()[0][0]
    shown = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    release_cached_blocks(con)
    assert con.execute(used).fetchall()[0][0] < cached / 4
    assert con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == shown
    release_cached_blocks(con, "200MB")
    assert _limit(con) == pytest.approx(2e8, rel=1e-3)


def test_workspace_is_a_file_of_its_own_into_a_file_store_and_gone_after(tmp_path):
    """Into a database file the workspace is a database file in a temporary folder, in
    memory into an in-memory store; either is detached and its folder removed at close."""
    for db, on_disk in ((str(tmp_path / "db.duckdb"), True), (":memory:", False)):
        with Store(db) as store:
            ctx = type("Ctx", (), {"con": store.con, "file": type("File", (), {"size": 1 << 20})()})()
            with Workspace(ctx) as ws:
                path = store.con.execute("SELECT path FROM duckdb_databases() WHERE database_name = ?",
                                         [ws.database]).fetchall()[0][0]
                assert bool(path) is on_disk and (not path or Path(path).parent == Path(ws.dir))
                ws.con.execute("CREATE TABLE x AS SELECT 1 AS a")
            assert not Path(ws.dir).exists()
            assert store.con.execute("SELECT count(*) FROM duckdb_databases() "
                                     "WHERE starts_with(database_name, 'loganalyze_ws')").fetchall()[0][0] == 0


def test_gzip_trace_staged_through_a_file_into_a_file_store(tmp_path, small_trace, monkeypatch):
    """Into a database file a gzip trace is decompressed into a temp file (DuckDB keeps what
    it reads from a pipe in memory), into an in-memory store through a FIFO; the rows are
    the same."""
    import gzip

    from loganalyze import trace_stage

    path, _ = small_trace
    gz = tmp_path / "rank0.pt.trace.json.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    fifos, mkfifo = [], os.mkfifo
    monkeypatch.setattr(trace_stage.os, "mkfifo", lambda p, *a: (fifos.append(p), mkfifo(p, *a)))
    with Store(":memory:") as mem:
        assert ingest_file(mem, str(gz)).status == "ingested"
        expected = _rows(mem.con)
    assert len(fifos) == 1
    with Store(str(tmp_path / "db.duckdb")) as store:
        assert ingest_file(store, str(gz)).status == "ingested"
        assert _rows(store.con) == expected
    assert len(fifos) == 1


def test_limit_restored_when_the_file_is_refused(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": 5}')
    with Store(str(tmp_path / "db.duckdb")) as store:
        before = _limit(store.con)
        assert ingest_file(store, str(bad)).status == "error"
        assert _limit(store.con) == before


def _rows(con) -> list[tuple]:
    return con.execute("SELECT * EXCLUDE (source_id) FROM trace_events ORDER BY event_no").fetchall()


def test_same_rows_under_a_tiny_limit_as_in_memory(tmp_path, small_trace, monkeypatch):
    """Spilling changes nothing: a file store under a limit far below the data gives the
    rows an in-memory store gives, and the per-operator totals are the generator's."""
    path, tally = small_trace
    with Store(":memory:") as mem:
        assert ingest_file(mem, str(path)).status == "ingested"
        expected = _rows(mem.con)
        ops = dict(mem.con.execute("SELECT name, [count(*), sum(dur_ns) // 1000] FROM trace_events "
                                   "WHERE role = 'op' GROUP BY name").fetchall())
    assert {k: list(v) for k, v in json.loads(json.dumps(tally)).items()} == ops
    monkeypatch.setattr("loganalyze.importers.trace_workspace.MEMORY_FLOOR", 16 << 20)
    with Store(str(tmp_path / "db.duckdb")) as store:
        assert ingest_file(store, str(path)).status == "ingested"
        assert _rows(store.con) == expected


def test_per_event_arrays_are_released_before_publishing(tmp_path, small_trace, monkeypatch):
    """The engine holds no per-event array while the rows are copied into the store."""
    path, _ = small_trace
    held: list[list[str]] = []
    from loganalyze.importers.trace_workspace import Workspace

    publish = Workspace.publish

    def spying(self):
        import gc

        import numpy as np

        engines = [o for o in gc.get_referrers(self) if isinstance(o, dict) and "m" in o]
        assert engines and engines[0]["m"] > 1000  # the span engine's attributes
        held.append([k for d in engines for k, v in d.items() if isinstance(v, np.ndarray) and v.size > 1000])
        return publish(self)

    monkeypatch.setattr(Workspace, "publish", spying)
    with Store(str(tmp_path / "db.duckdb")) as store:
        assert ingest_file(store, str(path)).status == "ingested"
    assert held == [[]]


def test_row_numbers_in_32_bits_below_2_to_the_31_rows():
    import numpy as np

    assert trace_spans.row_index_type(0) is np.int32
    assert trace_spans.row_index_type((1 << 31) - 2) is np.int32
    assert trace_spans.row_index_type((1 << 31) - 1) is np.int64
    assert trace_spans.row_index_type(1 << 40) is np.int64


def test_64_bit_row_numbers_give_the_rows_of_32_bit_ones(small_trace, monkeypatch):
    """Traces of 2^31 rows and more keep their row numbers in 64 bits: the same rows."""
    import numpy as np

    path, _ = small_trace
    with Store(":memory:") as store:
        assert ingest_file(store, str(path)).status == "ingested"
        narrow = _all_rows(store.con)
    monkeypatch.setattr(trace_spans, "row_index_type", lambda rows: np.int64)
    with Store(":memory:") as store:
        assert ingest_file(store, str(path)).status == "ingested"
        assert _all_rows(store.con) == narrow


def test_event_numbers_apart_from_row_numbers_link_the_right_events(tmp_path, small_trace):
    """Where the exact reader skips an event, row and event numbers part (the engine keeps
    the event numbers then): every link still names the events it names when the event
    is there but unusable (a bad ph), in the same places."""
    path, _ = small_trace
    doc = json.loads(path.read_text())
    events = [json.dumps(e) for e in doc.pop("traceEvents")]
    at = len(events) // 3
    head = json.dumps(doc)[:-1] + ', "traceEvents": [\n'

    def trace(name: str, element: str) -> Path:
        out = tmp_path / name
        out.write_text(head + ",\n".join(events[:at] + [element] + events[at:]) + "]}")
        return out

    unreadable = trace("unreadable.json", '{"ph": "X" "name": 1}')  # the exact reader skips it
    unusable = trace("unusable.json", '{"ph": ""}')  # read, then skipped for its problem
    rows = {}
    for f in (unreadable, unusable):
        with Store(":memory:") as store:
            res = ingest_file(store, str(f))
            assert res.status == "ingested", res.message
            assert store.con.execute("SELECT DISTINCT reader FROM trace_files").fetchall() == [
                ("stream" if f is unreadable else "duckdb",)]
            assert store.con.execute("SELECT line_no FROM skipped_lines").fetchall() == [(at,)]
            rows[f] = {t: v for t, v in _all_rows(store.con).items() if t not in ("skipped_lines", "trace_files")}
            linked = store.con.execute(
                f"SELECT count(*) FROM trace_events WHERE event_no > {at} AND (parent > {at} OR op_event > {at})"
            ).fetchall()[0][0]
            assert linked > 100
    assert rows[unreadable] == rows[unusable]


@pytest.mark.parametrize("seed", range(3))
def test_sweep_of_a_prefix_of_threads_equals_the_sweep_of_a_selection(seed):
    """Threads with operators numbered first make the swept spans a prefix (no copy); any
    other numbering selects them: both give every array the same values."""
    import numpy as np

    from loganalyze.importers import trace_nesting as tn

    rng = np.random.default_rng(seed)
    n, m = 4000, 5000
    thr = rng.integers(0, 6, n)
    is_op = rng.random(n) < 0.5
    is_op[thr >= 4] = False  # threads 4 and 5: device streams, no operators
    r = rng.permutation(m)[:n]
    ts, dur = rng.integers(0, 800, n), rng.integers(0, 90, n)
    op_index = np.full(m, -1)
    op_index[r[is_op]] = np.arange(is_op.sum())
    results = []
    for code in (np.arange(6), np.array([4, 0, 5, 1, 2, 3])):  # op threads first; op threads apart
        t = code[thr]
        order = tn.span_order(t, ts, dur, r)
        spans = {"thr": t[order], "is_op": is_op[order], "r": r[order], "ts": ts[order], "end": (ts + dur)[order]}
        out = [np.full(m, -1), np.full(m, -1, dtype=np.int32), np.zeros(is_op.sum(), np.int64)]
        improper = tn._nest_threads(tn._thread_nesting(spans), *out, op_index)
        parent = out[0]
        results.append((improper, [a.tolist() for a in out]))
        assert (parent >= 0).sum() > 1000 and (out[2] > 0).sum() > 500
    assert results[0] == results[1]


def test_a_trace_without_begin_end_pairs_gives_the_rows_it_gives_with_one(tmp_path, small_trace):
    """Without B/E or async pairs the engine keeps no arrays for them (the Kineto case): the
    rows are those of the same trace with one B/E pair added on a thread of its own."""
    path, _ = small_trace
    doc = json.loads(path.read_text())
    pair = [{"ph": "B", "name": "extra", "pid": 999, "tid": 999, "ts": 1},
            {"ph": "E", "name": "extra", "pid": 999, "tid": 999, "ts": 5}]
    paired = tmp_path / "paired.json"
    paired.write_text(json.dumps({**doc, "traceEvents": doc["traceEvents"] + pair}))
    rows = []
    for f in (path, paired):
        with Store(":memory:") as store:
            assert ingest_file(store, str(f)).status == "ingested"
            rows.append(store.con.execute("SELECT * EXCLUDE (source_id) FROM trace_events WHERE pid <> '999' "
                                          "ORDER BY event_no").fetchall())
            if f is paired:
                assert store.con.execute("SELECT dur_ns, end_event FROM trace_events WHERE ph = 'B'").fetchall() == [
                    (4000, len(doc["traceEvents"]) + 1)]
    assert rows[0] == rows[1]
    assert sum(1 for row in rows[0] if row[-1] is not None) > 100


def test_minimal_events_link_device_work_through_the_launch_calls(tmp_path):
    """The benchmark's trace of minimal events (``--args minimal``: no External id, the
    density of issue 10's trace): each device event gets its launch call by correlation and
    its operator from the launch call's parent; the per-operator totals are the generator's."""
    gen = _generator()
    gen.LAYOUT, gen.ARGS = "compact", "minimal"
    path = tmp_path / "minimal.json"
    tally = gen.generate(path, 1)
    assert b"External id" not in path.read_bytes()
    with Store(":memory:") as store:
        assert ingest_file(store, str(path)).status == "ingested"
        con = store.con
        ops = dict(con.execute("SELECT name, [count(*), sum(dur_ns) // 1000] FROM trace_events "
                               "WHERE role = 'op' GROUP BY name").fetchall())
        device, linked, same = con.execute(
            """SELECT count(*), count(l.event_no), count(*) FILTER (WHERE d.op_event = l.parent)
               FROM trace_events d LEFT JOIN trace_events l ON l.event_no = d.launch_event
               WHERE d.role IN ('kernel', 'memcpy', 'memset')""").fetchall()[0]
    assert {k: list(v) for k, v in json.loads(json.dumps(tally)).items()} == ops
    assert device > 1000 and device == linked == same


# ----------------------------------------------------------------- the event array in parts
#: every table a trace file writes rows into, compared whole
TRACE_TABLES = ("trace_events", "trace_counters", "trace_flows", "gpu_kernels", "gpu_memops", "gpu_api_calls",
                "gpu_kernel_ops", "skipped_lines", "trace_files")


def _all_rows(con) -> dict:
    return {t: con.execute(f"SELECT * EXCLUDE (source_id) FROM {t} ORDER BY ALL").fetchall() for t in TRACE_TABLES}


def _ingest_rows(path: Path, monkeypatch, part_min: int | None) -> tuple[dict, list[int]]:
    """The rows of ``path`` ingested with parts of at least ``part_min`` bytes (None: one
    array), and the number of arrays each read of the file was given."""
    from loganalyze import trace_stage
    from loganalyze.importers import trace_load

    reads: list[int] = []
    read = trace_load._read_arrays

    def spying(ws, paths, flavour):
        reads.append(len(paths))
        return read(ws, paths, flavour)

    with monkeypatch.context() as m:
        m.setattr(trace_load, "_read_arrays", spying)
        m.setattr(trace_stage, "PART_MIN_BYTES", part_min or (1 << 62))
        m.setattr(trace_stage, "usable_cores", lambda: 4)
        m.setattr(trace_stage, "TAIL_WINDOW", 64 << 10)  # the end is looked for past any damage
        with Store(":memory:") as store:
            res = ingest_file(store, str(path))
            assert res.status == "ingested", res.message
            return _all_rows(store.con), reads


def test_element_boundary_cuts_between_events_only():
    from grammars.trace_container import element_boundary

    events = [{"ph": "X", "name": f"op{i}", "ts": i, "dur": 1, "args": {"s": "},{\"ph\": \"X\"}", "l": [1, 2]}}
              for i in range(50)]
    text = json.dumps(events).encode()
    at = len(text) // 2
    comma = element_boundary(text[at:], at)
    assert comma is not None and text[comma:comma + 1] == b","
    head, tail = json.loads(text[:comma] + b"]"), json.loads(b"[" + text[comma + 1:])
    assert head + tail == events and head and tail
    # inside a string the quotes are escaped: no comma there decodes as the start of events
    inside = text.index(b'\\"ph')
    assert element_boundary(text[inside - 3:inside + 40], inside - 3) is None
    # events nested too deep to decode are no boundary, never a RecursionError
    deep = b',{"ph": "X", "args": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    assert element_boundary(deep * 5, 0) is None
    assert element_boundary(deep * 2 + text[at:], 0) == len(deep) * 2 + comma - at


def test_split_read_gives_the_rows_of_one_read(tmp_path, small_trace, monkeypatch):
    """The 1 MB trace cut into four arrays read at the same time: the same rows, events
    numbered as in the file."""
    path, _ = small_trace
    whole, reads = _ingest_rows(path, monkeypatch, None)
    assert reads == [1]
    parts, reads = _ingest_rows(path, monkeypatch, 64 << 10)
    assert reads == [4]
    assert parts == whole


def test_parts_keep_the_array_order_whatever_the_caller_set(tmp_path, small_trace, monkeypatch):
    """A part's rows are numbered by their row ids: the read keeps the array's order even
    when the caller's DuckDB does not preserve insertion order, and that setting is theirs
    again after."""
    from loganalyze import trace_stage

    path, _ = small_trace
    whole, _ = _ingest_rows(path, monkeypatch, None)
    monkeypatch.setattr(trace_stage, "PART_MIN_BYTES", 64 << 10)
    monkeypatch.setattr(trace_stage, "usable_cores", lambda: 4)
    with Store(str(tmp_path / "s.duckdb")) as store:
        store.con.execute("SET preserve_insertion_order = false")
        res = ingest_file(store, str(path))
        assert res.status == "ingested", res.message
        assert _all_rows(store.con) == whole
        assert store.con.execute("SELECT current_setting('preserve_insertion_order')").fetchall() == [(False,)]


@pytest.mark.parametrize("change", ["duplicates", "flavour"])
def test_parts_updated_after_the_read_give_the_rows_of_one_read(tmp_path, monkeypatch, change):
    """Two changes to the events read, in parts: duplicates found across parts, and roles
    made again when the categories past the first bytes change the flavour (generic ->
    Kineto).  Each updates the events, in each part."""
    from loganalyze import trace_stage
    from loganalyze.importers import trace_json, trace_load, trace_matching, trace_spans

    later = "cpu_op" if change == "flavour" else "user"
    events = [{"ph": "X", "cat": "user", "name": f"a{i}", "pid": 1, "tid": 1, "ts": 10 * i, "dur": 5,
               "args": {"pad": "x" * 200}} for i in range(600)]
    events += [{"ph": "X", "cat": later, "name": f"op{i}", "pid": 1, "tid": 2, "ts": 10 * i, "dur": 5,
                "args": {"pad": "y" * 200}} for i in range(600)]
    if change == "duplicates":
        events += [dict(events[3]), dict(events[900])]  # in the last part
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(events))
    monkeypatch.setattr(trace_json, "head_categories",
                        lambda file, prefix: trace_stage.head_categories(file, prefix, limit=4096))
    updated = []

    def spying(con, update_sql):
        updated.append([part.table for part in trace_load.event_parts(con)])
        return trace_load.update_events(con, update_sql)

    monkeypatch.setattr(trace_matching, "update_events", spying)
    monkeypatch.setattr(trace_spans, "update_events", spying)
    whole, reads = _ingest_rows(path, monkeypatch, None)
    assert reads == [1] and updated == [["_ev_part0"]]
    parts, reads = _ingest_rows(path, monkeypatch, 64 << 10)
    assert reads == [4] and updated[1:] == [[f"_ev_part{k}" for k in range(4)]]
    assert parts == whole
    if change == "duplicates":
        assert [r[:2] for r in whole["skipped_lines"]] == [(1200, "duplicate of event 3"),
                                                           (1201, "duplicate of event 900")]
    else:
        assert [r[1] for r in whole["trace_files"]] == ["kineto"]  # the flavour, seen past the head


def test_computed_columns_out_of_step_with_the_parts_stop_the_ingest(tmp_path, small_trace, monkeypatch):
    """The computed columns are placed next to each part's rows by position: were a part's
    rows counted wrong, the copy stops (nothing stored) instead of pairing rows wrongly."""
    from loganalyze import trace_stage
    from loganalyze.importers import trace_load, trace_tables

    path, _ = small_trace

    def miscounted(con):
        parts = trace_load.event_parts(con)
        return [part._replace(rows=part.rows - 1) if k == 0 else part for k, part in enumerate(parts)]

    monkeypatch.setattr(trace_tables, "event_parts", miscounted)
    monkeypatch.setattr(trace_stage, "PART_MIN_BYTES", 64 << 10)
    monkeypatch.setattr(trace_stage, "usable_cores", lambda: 4)
    with Store(":memory:") as store:
        res = ingest_file(store, str(path))
        assert res.status == "error" and "trace rows out of step" in res.message
        assert store.con.execute("SELECT count(*) FROM sources").fetchall() == [(0,)]
        # the settings of the rows' copy are given back, after a failure too
        assert store.con.execute("SELECT current_setting('preserve_insertion_order')").fetchall() == [(True,)]
        monkeypatch.undo()
        assert ingest_file(store, str(path)).status == "ingested"
        assert store.con.execute("SELECT current_setting('preserve_insertion_order')").fetchall() == [(True,)]


def test_a_cut_inside_an_event_is_read_again_whole(tmp_path, monkeypatch):
    """Events whose args hold lists of event-like objects: the boundary search can only find
    commas inside args, DuckDB rejects the cut parts, and the array is read whole."""
    nested = [{"ph": "X", "name": f"n{j}", "ts": j} for j in range(400)]
    events = [{"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": 1, "ts": 100_000 * i, "dur": 5,
               "args": {"inner": nested}} for i in range(20)]
    path = tmp_path / "nested.json"
    path.write_text(json.dumps({"traceEvents": events}))
    whole, _ = _ingest_rows(path, monkeypatch, None)
    parts, reads = _ingest_rows(path, monkeypatch, 64 << 10)
    assert reads == [4, 1]  # the parts rejected, then one array
    assert parts == whole and len(whole["trace_events"]) == 20


def test_a_damaged_array_in_parts_reads_as_it_does_whole(tmp_path, small_trace, monkeypatch):
    """An unescaped quote inside a name (torch ``with_stack`` exports): the parts fail, the
    whole array fails, the exact reader skips that one event, as without parts."""
    path, _ = small_trace
    text = path.read_text()
    at = text.index('"name": "aten::relu"', len(text) * 3 // 4)
    damaged = tmp_path / "damaged.pt.trace.json"
    damaged.write_text(text[:at] + '"name": "aten::relu "quoted" x"' + text[at + len('"name": "aten::relu"'):])
    whole, _ = _ingest_rows(damaged, monkeypatch, None)
    parts, reads = _ingest_rows(damaged, monkeypatch, 64 << 10)
    assert reads == [4, 1]
    assert parts == whole and len(whole["skipped_lines"]) == 1


# =========================================================================== staged ahead
def _stage_small(monkeypatch) -> None:
    from loganalyze import trace_stage

    monkeypatch.setattr(trace_stage, "STAGE_AHEAD_MIN_BYTES", 64 << 10)
    monkeypatch.setattr(trace_stage, "PART_MIN_BYTES", 64 << 10)
    monkeypatch.setattr(trace_stage, "usable_cores", lambda: 4)


def _spy_copies(monkeypatch) -> list:
    """The Stage objects that copy an array (the ahead staging's included)."""
    from loganalyze import trace_stage

    copies: list = []
    copy = trace_stage.Stage._copy
    monkeypatch.setattr(trace_stage.Stage, "_copy", lambda self: (copies.append(self), copy(self)))
    return copies


@pytest.mark.parametrize("given", ["file", "folder"])
def test_cli_stages_a_large_trace_ahead_and_hashes_it_after_the_read(tmp_path, small_trace, monkeypatch, given):
    """``loganalyze ingest`` of one large trace file (or of a folder holding only it, as HTA
    takes traces) stages its array before the imports (not hashed ahead); the importer
    takes the parts (no copy of its own), the rows are those of an ingest without it, the
    file's sha256 is right, and the parts and their folder are gone after."""
    from typer.testing import CliRunner

    from loganalyze import inputs, tempfiles, trace_stage
    from loganalyze.cli import app

    path, _ = small_trace
    whole, _ = _ingest_rows(path, monkeypatch, None)
    _stage_small(monkeypatch)
    copies = _spy_copies(monkeypatch)
    hashed_ahead = []
    monkeypatch.setattr(inputs, "hash_ahead", lambda p: hashed_ahead.append(p))
    db = str(tmp_path / "t.duckdb")
    res = CliRunner().invoke(app, ["ingest", "-q", str(path if given == "file" else path.parent), "--db", db])
    assert res.exit_code == 0, res.output
    assert hashed_ahead == [] and trace_stage._STAGED_AHEAD == {}
    assert len(copies) == 1 and os.path.basename(os.path.dirname(copies[0].paths[0])).startswith("trace-ahead")
    assert not os.path.exists(os.path.dirname(copies[0].paths[0]))
    assert not [n for n in os.listdir(tempfiles.process_folder()) if n.startswith("trace")]
    with duckdb.connect(db, read_only=True) as con:
        assert _all_rows(con) == whole
        assert con.execute("SELECT sha256 FROM sources").fetchone()[0] == \
            hashlib.sha256(path.read_bytes()).hexdigest()


def test_parts_staged_ahead_of_a_file_changed_since_are_not_taken(tmp_path, small_trace, monkeypatch):
    """A file written to after its array was staged ahead is staged again from what it
    holds now (the parts staged ahead are removed)."""
    from loganalyze import trace_stage

    path, _ = small_trace
    copy = tmp_path / "rank0.pt.trace.json"
    copy.write_bytes(path.read_bytes())
    _stage_small(monkeypatch)
    assert trace_stage.stage_ahead(str(copy))
    ahead = trace_stage._STAGED_AHEAD[os.path.realpath(copy)]
    ahead.thread.join()
    text = copy.read_text()
    at = text.index('"name": "aten::relu"')
    copy.write_text(text[:at] + '"name": "aten::RELU"' + text[at + len('"name": "aten::relu"'):])
    copies = _spy_copies(monkeypatch)
    with Store(":memory:") as store:
        res = ingest_file(store, str(copy))
        assert res.status == "ingested", res.message
        assert store.con.execute("SELECT count(*) FROM trace_events WHERE name = 'aten::RELU'").fetchone()[0] == 1
    assert len(copies) == 1 and trace_stage._STAGED_AHEAD == {} and not os.path.exists(ahead.folder)


def test_only_large_plain_traces_are_staged_ahead(tmp_path, small_trace, monkeypatch):
    """Small files, gzip files, files that are not surely traces, folders, missing files
    and standard input are not staged ahead (the CLI hashes them ahead instead)."""
    import gzip

    from loganalyze import trace_stage

    path, _ = small_trace
    monkeypatch.setattr(trace_stage, "STAGE_AHEAD_MIN_BYTES", 64 << 10)
    small = tmp_path / "small.json"
    small.write_text('{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}]}')
    zipped = tmp_path / "t.json.gz"
    zipped.write_bytes(gzip.compress(path.read_bytes()))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"rows": list(range(100_000))}))
    for p in (str(small), str(zipped), str(other), str(tmp_path), str(tmp_path / "missing.json"), "-"):
        assert not trace_stage.stage_ahead(p), p
    assert trace_stage._STAGED_AHEAD == {}
