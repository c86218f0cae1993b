"""The cut of oneDNN verbose lines (importers/onednn_cut.py: the pieces' positions from
importers/onednn_positions.py, interpreted or compiled by numba, Arrow views, polars) gives
exactly what the former per-line SQL cut gave, both ways: the same lines kept, keys, shape ids (DuckDB's ``hash(key)``),
timestamps, last fields and times, on hostile lines, random lines and a generated log."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loganalyze.grammars import onednn_verbose as g
from loganalyze.importers import onednn, onednn_cut, onednn_positions
from loganalyze.importers.base import sql_string
from loganalyze.ingest import ingest_file
from loganalyze.inputs import InputFile
from loganalyze.lines import LineStats, iter_line_batches
from loganalyze.memory_limit import setting_bytes
from loganalyze.store import Store

REPO = Path(__file__).resolve().parent.parent

# The former cut, kept here as the reference: regex for the leading fields, last comma by
# reverse/instr, key substring, DuckDB casts.
_IS_VERBOSE_SQL = " OR ".join(
    [f"starts_with(line, {sql_string(m + ',')})" for m in g.MARKERS]
    + ["line IN (" + ", ".join(sql_string(m + end) for end in ("\n", "\r\n") for m in g.MARKERS) + ")"]
)
REFERENCE_SQL = f"""
WITH v AS (
    SELECT line_no, line,
           regexp_extract(line, {sql_string(g.LEADING_CUT_PATTERN)}, ['pre', 'ts']) AS m
    FROM _arrow WHERE {_IS_VERBOSE_SQL}
), p AS (
    SELECT line_no, line, m.pre AS pre, m.ts AS ts,
           length(m.pre) + length(m.ts) + 1 AS body_at,
           length(line) - instr(reverse(line), ',') + 1 AS lastc,
           CASE WHEN ends_with(line, chr(13) || chr(10)) THEN 2 ELSE 1 END AS eol
    FROM v
), c AS (
    SELECT line_no,
           CASE WHEN lastc >= body_at AND lastc <= length(line) THEN pre || substr(line, body_at, lastc - body_at)
                ELSE pre END AS key,
           CASE WHEN ts <> '' THEN substr(ts, 2) END AS ts,
           CASE WHEN lastc >= body_at AND lastc <= length(line) THEN substr(line, lastc + 1, length(line) - lastc - eol)
                END AS tail
    FROM p
)
SELECT line_no, hash(key) AS shape_id, key, try_cast(ts AS DOUBLE) AS ts_ms, tail,
       CASE WHEN isfinite(try_cast(tail AS DOUBLE)) THEN try_cast(tail AS DOUBLE) END AS time_ms
FROM c ORDER BY line_no
"""

HOSTILE = [
    "onednn_verbose\n", "onednn_verbose\r\n", "onednn_verbose\r\r\n", "dnnl_verbose,v1\n",
    "onednn_verbose,v1,12.5\n", "onednn_verbose,12.5\n", "onednn_verbose,12.5,x\n", "onednn_verbose,v1x,a,b\n",
    "onednn_verbose,v1,primitive\n", "mkldnn_verbose,exec,é,ü,1.5\r\n", "onednn_verbose,v2,3.,exec,x, 1.5 \n",
    "onednn_verbose,a,b,inf\n", "onednn_verbose,a,b,1e999\n", "onednn_verbose,a,b,.5\n", "onednn_verbose,a,b,nan\n",
    "onednn_verbose,a,b,\n", "onednn_verbose,,\n", "onednn_verbose,\n", "onednn_verbosex,1\n", "xonednn_verbose,1\n",
    "onednn_verbose,v1,1.5,\r\n", "onednn_verbose,a,b,1.5\r\r\n", "onednn_verbose,١٢.5,a,1\n", "onednn_verbose,v١,a,1\n",
    "onednn_verbose,a\rb,c\r,2\n", "onednn_verbose,v1,2.5\r\n", "onednn_verbose,v1,,\n", "dnnl_verbose,info,oneDNN v1.0\n",
    "onednn_verbose,a,b,1E+05\n", "onednn_verbose,a,b,+1\n", "onednn_verbose,a,b,0x10\n", "onednn_verbose,a,b, 2\n",
    "onednn_verbose,v1,1.5,primitive,exec,cpu,convolution,jit:avx2,forward_training,"
    "src:f32::blocked:aBcd8b::f0,,alg:convolution_direct,mb2_ic3oc8_ih5oh5kh3sh1dh0ph1,0.0625\n",
    "onednn_verbose,v1,primitive,exec,cpu,reorder,simple:any,undef,src:f32::blocked:abcd::f0,,,2x3,0\r\n",
    "plain app output, with commas, 1.5\n", "\n", "onednn_verbose,v1,1.,x,1.\n", "onednn_verbose,v12,00.5,x,1e-3\n",
    # the edges of the compiled pass's own reading of numbers (mantissa 2^53, 10^+-22)
    *(f"onednn_verbose,v1,{ts},exec,x,{t}\n" for ts, t in [
        ("9007199254740993.5", "9007199254740993"), ("900719925474099.1", "9007199254740992"),
        ("0.0000000000000000000001", "1e22"), ("0.00000000000000000000001", "1e23"),
        ("1234567890123.4567890", "1.5e-22"), ("00000000000000000000001.5", "123e-25"),
        ("1.0", "0e400"), ("2.5", "4.9e-324"), ("3.5", "1e-400"), ("4.5", "1.7976931348623157e308"),
        ("5.5", "2e308"), ("6.5", "0.0000000000000000000001e+0"), ("7.5", "100000000000000000000000e-2"),
        ("8.5", "1e00000000000000000000005"), ("9.5", "9007199254740991e-22"), ("1.5", "9007199254740991e22"),
        # where whole + fraction / 10^decimals, rounded twice, is not the nearest double
        ("161.68819477761933", "1"), ("56.652036239079866", "1"), ("431.915306034378176", "1"),
        ("10.922201160692830", "1"),
    ]),
]


@pytest.fixture(autouse=True, scope="module", params=["interpreted", "compiled"])
def way(request):
    """Every test of this module runs with the pieces found by the interpreter and by the
    compiled kernel (a process uses the interpreter for its first lines, then numba)."""
    saved = onednn_positions.INTERPRETED_LINES, onednn_positions._compiled
    if request.param == "interpreted":
        onednn_positions.INTERPRETED_LINES, onednn_positions._compiled = 10 ** 12, None
    else:
        onednn_positions.INTERPRETED_LINES = 0
    yield request.param
    onednn_positions.INTERPRETED_LINES = saved[0]
    if request.param == "interpreted":
        onednn_positions._compiled = saved[1]


def batch(lines: list[str]) -> pa.Table:
    return pa.table({
        "line_no": pa.array(range(1, len(lines) + 1), pa.int64()),
        "line": pa.array(lines, pa.large_string()),
    })


def reference(con, table: pa.Table) -> pl.DataFrame:
    _arrow = table  # noqa: F841 - read by REFERENCE_SQL
    return pl.from_arrow(con.sql(REFERENCE_SQL).to_arrow_table())


def polars_cut(con, table: pa.Table) -> pl.DataFrame:
    cuts = onednn_cut.cut_lines(con, table)
    keys = onednn_cut.with_shape_ids(con, onednn_cut.keys_of(cuts))
    events = onednn_cut.with_events(cuts, onednn_cut.ShapeIds().with_added(keys))
    return events.select("line_no", "shape_id", onednn_cut.key_text(), "ts_ms", onednn_cut.tail_text(), "time_ms").sort("line_no")


def assert_same_cut(table: pa.Table) -> None:
    con = duckdb.connect()
    want, got = reference(con, table), polars_cut(con, table)
    assert got.schema == want.schema
    assert got.equals(want), got.join(want, on="line_no", how="full", suffix="_want").to_dicts()[:5]


def test_hostile_lines_cut_as_before():
    assert_same_cut(batch(HOSTILE))


def test_hostile_lines_keep_their_shape_ids():
    """Shape ids are DuckDB's hash of the key, as databases written before hold them."""
    con = duckdb.connect()
    got = polars_cut(con, batch(HOSTILE))
    for shape_id, key in got.select("shape_id", "key").iter_rows():
        assert shape_id == con.execute("SELECT hash(?)", [key]).fetchone()[0]


def test_batch_without_verbose_lines():
    con = duckdb.connect()
    assert onednn_cut.cut_lines(con, batch(["hello\n", "world, 1\n"])).height == 0


_FRAGMENTS = st.sampled_from([
    *g.MARKERS, ",", ",", ",", "v1", "v", "12", "3.25", ".", "1e5", "inf", "nan", "x", " ", "\r", "é", "١",
    "primitive", "exec", "cpu", "0.0625", "-", "+",
])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(g.MARKERS), st.lists(_FRAGMENTS, max_size=12),
                          st.sampled_from(["\n", "\r\n", "\r\r\n"])), min_size=1, max_size=20))
def test_random_lines_cut_as_before(parts):
    lines = [marker + "".join(body) + end for marker, body, end in parts]
    assert_same_cut(batch(lines))


_DIGITS = st.text("0123456789", min_size=1, max_size=24)
_NUMBER = st.one_of(
    st.builds(lambda a, b: f"{a}.{b}", _DIGITS, st.text("0123456789", max_size=24)),
    _DIGITS,
    st.builds(lambda a, b, e, x: f"{a}.{b}{e}{x}", _DIGITS, st.text("0123456789", max_size=8),
              st.sampled_from(["e", "E", "e+", "e-", "E-"]), st.text("0123456789", min_size=1, max_size=6)),
    st.floats(min_value=0, allow_nan=False, allow_infinity=False).map(repr),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_NUMBER, _NUMBER), min_size=1, max_size=12))
def test_timestamps_and_times_read_as_duckdb_reads_them(pairs):
    """Long and short decimals, exponents, subnormals and numbers beyond a double: polars
    reads the plain ones to the same double as DuckDB's cast, and DuckDB reads the others."""
    lines = [f"onednn_verbose,v1,{ts if '.' in ts and 'e' not in ts.lower() else ts + '.5'},exec,cpu,x,{t}\n"
             for ts, t in pairs]
    assert_same_cut(batch(lines))


_TIMESTAMP = st.builds(lambda a, b: f"{a}.{b}", st.integers(0, 10 ** 16).map(str),
                       st.text("0123456789", min_size=1, max_size=16))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_TIMESTAMP, _NUMBER), min_size=1, max_size=40))
def test_long_timestamps_read_as_duckdb_reads_them(pairs):
    """Timestamps of more digits than 2^53 holds (oneDNN's are milliseconds since 1970 with
    six decimals), which the compiled pass reads in two parts: the same doubles as DuckDB's
    cast, near ties included (those it leaves to polars)."""
    lines = [f"onednn_verbose,v1,{ts},exec,cpu,x,{t}\n" for ts, t in pairs]
    assert_same_cut(batch(lines))


@pytest.mark.parametrize("ts", ["1747511821674.984863", "1747511821675.068604", "1732620000000.000001",
                                "450359962737049.5"])
def test_long_timestamps_read_by_the_compiled_pass(ts):
    """The real timestamps of oneDNN v3 logs are read by the pass itself (TS_READ), to the
    double Python's float() (correctly rounded) gives: text parsing is the slow path."""
    data = f"onednn_verbose,v1,{ts},exec,cpu,x,0.5\n".encode()
    _, _, flags, values = onednn_positions.find_pieces(data, onednn_positions.np.array([0, len(data)]))
    assert flags[0] & onednn_positions.TS_READ and flags[0] & onednn_positions.TIME_READ
    assert values[0, 0] == float(ts) and values[1, 0] == 0.5


def test_generated_log_cut_as_before(tmp_path):
    log = tmp_path / "gen.log"
    subprocess.run([sys.executable, str(REPO / "scripts" / "gen_onednn_log.py"), "--size", "3M", "--seed", "7",
                    "--out", str(log), "--quiet"], check=True)
    with InputFile(str(log)) as f:
        batches = list(iter_line_batches(f, LineStats()))
    assert batches
    for lines in batches:
        assert_same_cut(lines.table)


@pytest.mark.parametrize("size", [1, 3])
def test_multi_batch_tables_cut_as_before(size):
    """A line batch arrives as a table of several record batches."""
    lines = HOSTILE * (size * 700)
    table = batch(lines)
    table = pa.Table.from_batches(table.to_batches(max_chunksize=1000))
    assert_same_cut(table)


def test_line_batches_cut_from_their_bytes(tmp_path):
    """The importer hands the cut a LineBatch (its bytes and offsets, rejected lines blanked),
    not a table: the same lines come out as from the batch's table through the reference."""
    log = tmp_path / "mixed.log"
    log.write_bytes("".join(HOSTILE).encode() + b"onednn_verbose,v1,\xff\xfe,1.5\n" + "".join(HOSTILE).encode()
                    + b"onednn_verbose,v1,primitive,exec,cpu,x,1.25")  # no final newline
    con = duckdb.connect()
    with InputFile(str(log)) as f:
        batches = list(iter_line_batches(f, LineStats()))
    for lines in batches:
        want = reference(con, lines.table)
        cuts = onednn_cut.cut_lines(con, lines)
        keys = onednn_cut.with_shape_ids(con, onednn_cut.keys_of(cuts))
        got = onednn_cut.with_events(cuts, onednn_cut.ShapeIds().with_added(keys)).select(
            "line_no", "shape_id", onednn_cut.key_text(), "ts_ms", onednn_cut.tail_text(), "time_ms").sort("line_no")
        assert got.equals(want)
    assert sum(len(b.rejected) for b in batches) == 1


def _stored(tmp_path, log: Path, name: str) -> tuple[list, list]:
    with Store(str(tmp_path / f"{name}.duckdb")) as store:
        assert ingest_file(store, str(log)).status == "ingested"
        events = store.con.execute(
            "SELECT line_no, shape_id, ts_ms, time_ms FROM onednn_events ORDER BY line_no").fetchall()
        skipped = store.con.execute("SELECT line_no, reason, text FROM skipped_lines ORDER BY line_no").fetchall()
    return events, skipped


def test_small_batches_store_what_one_batch_stores(tmp_path, monkeypatch):
    """The cut workers look shape ids up in what the file had shown when they started, two
    batches ahead of the main thread, which fills in the keys found since (the same key in
    batches 1 and 2: unknown to batch 2's worker, known when batch 2 is stored)."""
    import loganalyze.lines as lines_module

    log = tmp_path / "hostile.log"
    log.write_text("".join(HOSTILE * 3), encoding="utf-8")
    whole = _stored(tmp_path, log, "whole")
    monkeypatch.setattr(lines_module, "MAX_LINES_PER_BATCH", 7)
    small = _stored(tmp_path, log, "small")
    assert small == whole and len(whole[0]) > 60 and None not in {row[1] for row in whole[0]}


@pytest.mark.parametrize("cut_off", [False, True])
def test_lines_keyed_whole_again_are_done_by_the_cut_workers(tmp_path, monkeypatch, cut_off):
    """A line keyed whole (its last field is no time) that the file has shown before is
    keyed on the cut worker (with a good whole-line shape) or skipped there (cut off): the
    main thread keys lines whole only for the batches cut before it had seen them (at most
    one per worker and the one it takes), and the rows are those of one batch."""
    import loganalyze.lines as lines_module

    batch = ["dnnl_verbose,info,oneDNN v1.0\n", "onednn_verbose,v1,info,cpu,isa:Intel AVX2\n",
             "onednn_verbose,v1,1.5,primitive,exec,cpu,reorder,simple:any,undef,src:f32::blocked:abcd::f0,,,"
             "2x3,0.25\n"] + (["onednn_verbose,v1,primitive,exec,cpu,reorder\n"] if cut_off else [])
    log = tmp_path / "headers.log"
    log.write_text("".join(batch * 40), encoding="utf-8")
    whole = _stored(tmp_path, log, "whole")
    monkeypatch.setattr(lines_module, "MAX_LINES_PER_BATCH", len(batch))
    rekeyed = []
    rekey = onednn.OneDNNVerboseImporter._rekey
    monkeypatch.setattr(onednn.OneDNNVerboseImporter, "_rekey",
                        lambda self, *args: rekeyed.append(1) or rekey(self, *args))
    small = _stored(tmp_path, log, "small")
    assert small == whole and len(whole[0]) == 120 and len(whole[1]) == (40 if cut_off else 0)
    assert 1 <= len(rekeyed) <= onednn.CUT_WORKERS + 1


@pytest.mark.parametrize("content, size, loads", [
    ("".join(HOSTILE), 1, True),                                         # verbose lines, large enough
    ("".join(HOSTILE), 1 << 40, False),                                  # too small to need the kernel
    ("epoch 1 loss 0.5\n" * 50, 1, False),                               # no verbose line at its start
    ("some app output\n" + "".join(HOSTILE), 1, True),                   # a verbose line after others
])
def test_the_compiled_cut_is_loaded_ahead_for_large_verbose_logs_only(tmp_path, monkeypatch, content, size, loads):
    """What the CLI asks for before its imports (:func:`onednn_positions.compile_for`)."""
    calls = []
    monkeypatch.setattr(onednn_positions, "compiled", lambda: calls.append(1))
    monkeypatch.setattr(onednn_positions, "COMPILE_AHEAD_MIN_BYTES", size)
    log = tmp_path / "v.log"
    log.write_text(content, encoding="utf-8")
    onednn_positions.compile_for(str(log))
    onednn_positions.compile_for(str(tmp_path / "missing.log"))  # (nothing, no error)
    assert calls == ([1] if loads else [])


def test_one_compiled_kernel_for_every_kind_of_buffer():
    """Batches come as bytes or bytearray; numba compiles a kernel per kind of array, and
    only the one loaded ahead (``_load``) should be needed: a second one was compiled in the
    middle of a machine's first large ingest of another kind of input."""
    from numba import njit

    kernel = njit(cache=True, nogil=True)(onednn_positions._pieces)  # (from the cache: fast)
    lines = [text.encode() for text in HOSTILE]
    batch, offsets = b"".join(lines), np.cumsum([0] + [len(b) for b in lines], dtype=np.int64)
    got = [onednn_positions.find_pieces(data, offsets, kernel) for data in (batch, bytearray(batch))]
    assert len(kernel.signatures) == 1
    assert all((a == b).all() for a, b in zip(got[0], got[1]))


# --------------------------------------------------------------------------- memory
def _limit(con) -> float:
    return setting_bytes(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])


@pytest.mark.parametrize("where", ["file", "memory"])
def test_lines_are_stored_under_the_memory_limit_into_a_file_only(tmp_path, monkeypatch, where):
    """Into a database file, a log is stored (its COMMIT included) under the importer's
    lowered memory limit (so that DuckDB's cache of written blocks, and the peak RSS, stop
    growing with the log); an in-memory store keeps its own (it cannot spill); both get
    their limit back."""
    seen = []
    step = onednn.OneDNNVerboseImporter._ingest_cut

    def spying(self, ctx, *args):
        seen.append(_limit(ctx.con))
        return step(self, ctx, *args)

    monkeypatch.setattr(onednn.OneDNNVerboseImporter, "_ingest_cut", spying)
    with Store(str(tmp_path / "db.duckdb") if where == "file" else ":memory:") as store:
        before = _limit(store.con)
        assert ingest_file(store, str(REPO / "samples" / "onednn" / "torch2.13_onednn_v3_exec.log")).status == "ingested"
        want = setting_bytes(onednn.OneDNNVerboseImporter.memory_limit) if where == "file" else before
        assert seen and all(abs(v - want) <= want * 0.01 for v in seen), (seen, want)  # (shown to 0.1 MiB)
        assert _limit(store.con) == before


def test_threads_lowered_for_the_batches_then_restored(tmp_path, monkeypatch):
    """A oneDNN ingest runs its batches with one DuckDB thread (inserts of one Arrow chunk
    gain nothing from more), each full row group written as it fills (not five at a time,
    the last of them by the COMMIT), and gives the settings back, also after a failure."""
    from loganalyze import store as store_mod

    threads = lambda con: int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])  # noqa: E731
    con = duckdb.connect()
    con.execute("SET threads = 3")
    with store_mod.threads_at_most(con, 1):
        assert threads(con) == 1
    with store_mod.threads_at_most(con, 8):
        assert threads(con) == 3
    with pytest.raises(RuntimeError):
        with store_mod.threads_at_most(con, 2):
            raise RuntimeError("boom")
    assert threads(con) == 3

    seen = []
    buffered = lambda con: con.execute("SELECT current_setting('write_buffer_row_group_count')").fetchall()[0][0]  # noqa: E731
    ingest_cut = onednn.OneDNNVerboseImporter._ingest_cut  # (on the main thread)
    monkeypatch.setattr(onednn.OneDNNVerboseImporter, "_ingest_cut",
                        lambda self, ctx, done, known: (ctx.settle(), seen.append((threads(ctx.con), buffered(ctx.con))),
                                                        ingest_cut(self, ctx, done, known))[2])
    log = tmp_path / "v.log"
    log.write_text("".join(HOSTILE))
    with Store(str(tmp_path / "t.duckdb")) as store:
        store.con.execute("SET threads = 2")
        before = buffered(store.con)
        assert ingest_file(store, str(log)).status == "ingested"
        assert seen and set(seen) == {(1, 1)} and threads(store.con) == 2 and buffered(store.con) == before != 1


def test_shapes_written_when_their_buffer_fills_and_at_the_end(tmp_path, monkeypatch):
    """New shapes wait in one row buffer for the whole file; a full buffer is written on
    the way (the context settled first): every event's shape is stored, once."""
    import functools

    from loganalyze.importers import base

    monkeypatch.setattr(onednn, "RowBuffer", functools.partial(base.RowBuffer, limit=3))
    monkeypatch.setattr(onednn_positions, "INTERPRETED_LINES", 10 ** 12)
    log = tmp_path / "many.log"
    log.write_text("".join(f"onednn_verbose,v1,{i}.5,primitive,exec,cpu,reorder,simple:any,undef,"
                           f"src:f32::blocked:ab::f0,,,{i}x3,0.25\n" for i in range(40)) + "".join(HOSTILE))
    with Store(str(tmp_path / "m.duckdb")) as store:
        assert ingest_file(store, str(log)).status == "ingested"
        con = store.con
        orphans = con.execute("SELECT count(*) FROM onednn_events LEFT JOIN onednn_shapes USING (shape_id) "
                              "WHERE onednn_shapes.shape_id IS NULL").fetchone()[0]
        shapes, distinct = con.execute("SELECT count(*), count(DISTINCT shape_id) FROM onednn_shapes").fetchone()
    assert orphans == 0 and shapes == distinct >= 40


def test_the_cut_reads_times_and_hashes_on_cursors_of_its_own_thread(tmp_path):
    """The cut workers read odd times and hash keys on a cursor each (store.ThreadCursors)
    while the connection inserts in its transaction: the same answers as on the connection,
    nothing of the transaction seen or changed, each thread its own cursor, all closed."""
    import threading

    from loganalyze.store import ThreadCursors

    con = duckdb.connect(str(tmp_path / "c.duckdb"))
    con.execute("CREATE TABLE t (x INTEGER)")
    con.execute("BEGIN")
    con.execute("INSERT INTO t VALUES (1)")
    cursors = ThreadCursors(con)
    sql = "SELECT hash('onednn_verbose,exec'), try_cast('nthr:2' AS DOUBLE), try_cast('1e3' AS DOUBLE), count(*) FROM t"
    seen = {}

    def ask(name):
        cursor = cursors.get()
        seen[name] = (id(cursor), cursor is cursors.get(), cursor.execute(sql).fetchall())

    threads = [threading.Thread(target=ask, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    here = con.execute(sql).fetchall()
    assert seen["a"][0] != seen["b"][0] and seen["a"][1] and seen["b"][1]
    assert seen["a"][2] == seen["b"][2] == [(*here[0][:3], 0)] and here[0][3] == 1
    mine = cursors.get()
    cursors.close()
    con.execute("COMMIT")
    with pytest.raises(duckdb.ConnectionException):
        mine.execute("SELECT 1")
    assert cursors.get() is not mine  # a new one after close
    cursors.close()


def _shape_ids_checked(groups: list[list[int]], asked: list[int]) -> onednn_cut.ShapeIds:
    """``ShapeIds`` grown by ``groups`` of hashes finds, after each group, the id of each hash
    added so far and none for the others (of ``asked`` and the hashes added): as a dict of
    every id would.  Returns the last set."""
    ids, every = onednn_cut.ShapeIds(), {}
    for group in groups:
        fresh = [h for h in dict.fromkeys(group) if h not in every]
        frame = pl.DataFrame({"key_hash": fresh, "shape_id": [h ^ 0x5555 for h in fresh]},
                             schema={"key_hash": pl.UInt64, "shape_id": pl.UInt64})
        ids = ids.with_added(frame)
        every.update(zip(frame["key_hash"], frame["shape_id"]))
        question = asked + list(every)[-7:] + group[:3]
        got = ids.of_keys(pl.Series(question, dtype=pl.UInt64)).to_list()
        assert got == [every.get(h) for h in question]
    everything = asked + list(every)
    assert ids.of_keys(pl.Series(everything, dtype=pl.UInt64)).to_list() == [every.get(h) for h in everything]
    assert len(ids) == len(every) and ids.added["key_hash"].to_list() == list(every)
    return ids


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2 ** 64 - 1), max_size=20), max_size=6), st.lists(st.integers(0, 2 ** 64 - 1), max_size=30))
def test_shape_ids_found_as_a_lookup_of_every_id_finds_them(added, asked):
    """``ShapeIds`` (sorted arrays grown by inserts, an index of their hashes' top bits)
    finds the ids of the hashes added, in any order of adding."""
    _shape_ids_checked(added, asked)


def test_shape_ids_found_through_indexes_made_again_as_they_grow_and_without_one():
    """Thousands of ids added a few hundred at a time (the index of an earlier set shared,
    then made again; the hashes added since it found by binary search), hashes at both ends
    of the range, and hashes sharing their top bits (one bucket too full for the index: the
    binary search for all) all find their ids."""
    rng = np.random.default_rng(7)
    groups = [rng.integers(0, 2 ** 64, size=int(k), dtype=np.uint64).tolist() for k in rng.integers(1, 600, 40)]
    groups[3] += [0, 1, 2 ** 64 - 1, 2 ** 64 - 2]
    asked = rng.integers(0, 2 ** 64, size=500, dtype=np.uint64).tolist() + [2 ** 63, 3]
    assert _shape_ids_checked(groups, asked)._index().usable
    crowded = [[(7 << 40) + k for k in range(j, 1000, 3)] for j in range(3)]  # one top-bit bucket
    ids = _shape_ids_checked(crowded + [[2 ** 64 - 1 - k for k in range(100)]], asked[:50] + [(7 << 40) + 1000])
    assert not ids._index().usable
