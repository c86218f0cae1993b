"""Loading the elements of a trace-event array into the workspace table ``_ev``: DuckDB's
``read_json`` over the staged array when it can, the exact Python reader
(:func:`grammars.trace_event.iter_events`) otherwise.  The CNTK detail importer fills the
same raw table from its CSV rows.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import NamedTuple

import pyarrow as pa

from ..grammars import trace_container as tc
from ..grammars import trace_event as te
from ..grammars import trace_reader as tr
from ..inputs import InputError
from ..signals import is_interrupt
from ..store import temporary_setting
from ..trace_stage import READ_BLOCK, Stage
from .arrow_arrays import arrow_array
from .base import IngestContext, insert_arrow, sql_string
from .trace_workspace import Workspace

#: largest JSON element DuckDB is asked to read (a larger one sends the file to the exact
#: reader, which skips it without holding it)
MAX_OBJECT_BYTES = tr.MAX_EVENT_BYTES
STREAM_BATCH = 50_000


@dataclass
class LoadResult:
    reader: str  # duckdb | stream
    complete: bool
    trailing_metadata: dict = field(default_factory=dict)
    trailing_keys: list = field(default_factory=list)
    #: the element cut off at the end: (event_no, reason, text)
    cut_event: tuple | None = None


def _raw_columns_sql() -> str:
    return "{" + ", ".join(f"{c}: '{t}'" for c, t in te.EVENT_COLUMNS.items()) + "}"


#: the reason an event over :data:`MAX_OBJECT_BYTES` is skipped (both readers)
TOO_BIG = tr.too_big_reason(tr.MAX_EVENT_BYTES)


def _bounded_sql(source_sql: str, numbered: bool) -> str:
    """``source_sql`` with ``oversized`` added (the event's fields hold more than
    MAX_OBJECT_BYTES); the fields of such an event are cut to their first characters (JSON
    ones dropped), so that it is neither copied nor shown whole.  (DuckDB's own
    ``maximum_object_size`` is not enforced on small files, so the reader cannot be relied on.)"""
    cols = list(te.EVENT_COLUMNS)
    size = " + ".join(f"coalesce(strlen({c}), 0)" for c in cols)
    cut = ", ".join(f"CASE WHEN oversized THEN NULL ELSE {c} END AS {c}" if t == "JSON"
                    else f"CASE WHEN oversized THEN left({c}, 100) ELSE {c} END AS {c}"
                    for c, t in te.EVENT_COLUMNS.items())
    return f"""SELECT {_NUMBERS if numbered else ''}oversized, {cut}
               FROM (SELECT *, ({size}) > {MAX_OBJECT_BYTES} AS oversized FROM ({source_sql}))"""


def _kept_text_sql(text: str, ns: str) -> str:
    """SQL: the time text ``text`` where it may be needed after the read, else NULL: for a
    row with a problem (its reason and text show it), and for a fraction whose ns are
    unknown or at least EXACT_FRACTIONAL_US_LIMIT us (what the precision check of the span
    engine looks at: a double of at least the limit reads as ns of at least the limit
    times 1000).  The others are not kept (2.5 M texts: 2-3% of a 500 MB trace's ingest);
    a duplicate shows its times from its ns."""
    beyond = te.EXACT_FRACTIONAL_US_LIMIT * te.NS_PER_US
    return (f"CASE WHEN problem IS NOT NULL OR ({te.is_fractional_sql(text)} "
            f"AND ({ns} IS NULL OR abs({ns}) >= {beyond})) THEN {text} END")


#: the columns that number the rows of ``_ev``: ``r`` (0, 1, ... in order) and the element
#: number in the file (the same for DuckDB's read, whose parts keep neither: their row ids
#: are their places, see :class:`EventPart`)
_NUMBERS = "r, event_no, "


def ev_select_sql(source_sql: str, flavour: str, numbered: bool = True) -> str:
    """The SELECT that makes ``_ev`` (one row per element read: exact ns times, ids from
    args, role, and the reason a row cannot be used) from ``source_sql``, a relation with
    EVENT_COLUMNS as text (and ``r`` and ``event_no`` when ``numbered``).  The time texts
    are kept only where they may be needed (:func:`_kept_text_sql`)."""
    return f"""
        SELECT * REPLACE ({_kept_text_sql('ts_text', 'ts_ns')} AS ts_text,
                          {_kept_text_sql('dur_text', 'dur_ns')} AS dur_text)
        FROM (
        WITH v AS (
            SELECT {_NUMBERS if numbered else ''}ph, cat, name, pid, tid,
                   coalesce(id, CAST(id2 AS VARCHAR)) AS id, bp, s AS scope,
                   ts AS ts_text, dur AS dur_text,
                   {te.us_text_to_ns_sql('ts')} AS ts_ns,
                   CASE WHEN ph = 'X' THEN {te.us_text_to_ns_sql('dur')} END AS dur_ns,
                   json_extract_string(args, ['$.correlation', '$."External id"']) AS ids,
                   args, oversized
            FROM ({_bounded_sql(source_sql, numbered)})
        )
        SELECT * EXCLUDE (ids, oversized), try_cast(ids[1] AS BIGINT) AS correlation, try_cast(ids[2] AS BIGINT) AS external_id,
            {te.role_sql(flavour)} AS role,
            CASE
                WHEN oversized THEN {sql_string(TOO_BIG)}
                WHEN ph IS NULL OR ph = '' THEN 'missing ph'
                WHEN ts_ns IS NULL AND NOT (ph = 'M' AND ts_text IS NULL) THEN {te.time_problem_sql('ts_text', 'ts')}
                WHEN ph = 'X' AND dur_ns IS NULL THEN {te.time_problem_sql('dur_text', 'dur')}
                WHEN ph = 'X' AND dur_ns < 0 THEN 'negative dur (' || dur_text || ')'
            END AS problem
        FROM v)"""


def load_events(ctx: IngestContext, ws: Workspace, prefix: tc.Prefix, flavour: str,
                force_stream: bool = False) -> LoadResult:
    """Fill ``_ev`` in the workspace (see :func:`ev_select_sql`) with the elements of the
    event array, reading them with DuckDB when it can and with the exact reader otherwise;
    elements that cannot be read are reported through ``ctx.skip``."""
    drop_events(ws.con)
    if not force_stream and os.environ.get("LOGANALYZE_TRACE_READER") != "stream":
        res = _load_duckdb(ctx, ws, prefix, flavour)
        if res is not None:
            return res
        drop_events(ws.con)
    return _load_stream(ctx, ws, prefix, flavour)


def _event_tables(con) -> dict[str, str]:
    """``_ev`` and its parts in the current schema: name -> ``VIEW`` or ``BASE TABLE``."""
    return dict(con.execute(
        """SELECT table_name, table_type FROM information_schema.tables
            WHERE table_catalog = current_database() AND table_schema = current_schema()
              AND (table_name = '_ev' OR starts_with(table_name, '_ev_part'))""").fetchall())


def drop_events(con) -> None:
    """Drop ``_ev``: a table, or a view over the parts read at the same time (dropped too)."""
    for name, kind in sorted(_event_tables(con).items()):  # _ev (a view over the parts) first
        con.execute(f"DROP {'VIEW' if kind == 'VIEW' else 'TABLE'} {name}")


class EventPart(NamedTuple):
    """One of the tables ``_ev`` is made of: ``rows`` rows, numbered from ``offset`` in
    ``_ev``.  ``numbered``: it has ``r`` and ``event_no`` columns of its own (the rows the
    exact reader or the CNTK importer added); else it is a part DuckDB read, whose row
    ids are its rows' places in the part and its events' numbers too (storing them took
    4% of a part's load)."""
    table: str
    offset: int
    rows: int
    numbered: bool

    def place(self, alias: str | None = None) -> str:
        """SQL: a row's place in this table (``alias``: the table's name in the query)."""
        return f"{alias + '.' if alias else ''}{'r' if self.numbered else 'rowid'}"

    def row_sql(self, alias: str | None = None) -> str:
        """SQL: a row's ``r`` in ``_ev``."""
        return f"{self.place(alias)} + {self.offset}"

    def event_sql(self, alias: str | None = None) -> str:
        """SQL: a row's event number in ``_ev``."""
        if self.numbered:
            return f"{alias + '.' if alias else ''}event_no + {self.offset}"
        return self.row_sql(alias)

    def rows_sql(self, where: str = "TRUE") -> str:
        """The rows of this table that match ``where`` as ``_ev`` gives them: ``r`` and
        ``event_no`` first, numbered in ``_ev``."""
        if self.numbered:
            return (f"SELECT * REPLACE (r + {self.offset} AS r, event_no + {self.offset} AS event_no) "
                    f"FROM {self.table} WHERE {where}")
        return f"SELECT {self.row_sql()} AS r, {self.event_sql()} AS event_no, * FROM {self.table} WHERE {where}"


def event_parts(con) -> list[EventPart]:
    """The tables ``_ev`` is made of, in order: its parts when it is a view over them, else
    ``_ev`` itself."""
    tables = _event_tables(con)
    if tables.get("_ev") == "VIEW":
        names = sorted((n for n in tables if n != "_ev"), key=lambda n: int(n[len("_ev_part"):]))
    else:
        names = ["_ev"]
    return _one_after_another(con, names)


def _one_after_another(con, tables: list[str]) -> list[EventPart]:
    """The parts ``tables`` put one after another."""
    numbered = {t for (t,) in con.execute(
        """SELECT table_name FROM information_schema.columns
            WHERE table_catalog = current_database() AND table_schema = current_schema() AND column_name = 'r'""").fetchall()}
    out, offset = [], 0
    for table in tables:
        n = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        out.append(EventPart(table, offset, n, table in numbered))
        offset += n
    return out


#: rows of ``_ev`` sorted at once by :func:`ordered_rows`: under the workspace's memory
#: budget DuckDB ran out of memory sorting a 300 MB trace's 4 M begin/end events with their
#: text columns (the sort of the row numbers alone was fine)
ORDERED_CHUNK = 200_000


def ordered_rows(con, columns: str, where: str, table: str | None = None, rows: int = 0):
    """The rows of ``_ev`` (or of ``table``, whose ``r`` are row numbers of ``_ev`` below
    ``rows``) that match ``where``, in the order of ``r``, with ``columns``; read a range of
    :data:`ORDERED_CHUNK` row numbers at a time (each range sorted on its own, the stored
    row numbers' ranges skipping the rest), so that neither DuckDB nor Python holds them all.
    No other statement may run on ``con`` until every row is read."""
    parts = event_parts(con) if table is None else [EventPart(table, 0, rows, True)]
    for part in parts:
        for lo in range(0, part.rows, ORDERED_CHUNK):
            chunk = part.rows_sql(f"{part.place()} >= {lo} AND {part.place()} < {lo + ORDERED_CHUNK}")
            yield from con.execute(f"SELECT {columns} FROM ({chunk}) WHERE {where} ORDER BY r").fetchall()


def update_events(con, update_sql) -> None:
    """Update each table ``_ev`` is made of (rarely: duplicates, roles made again) with
    ``update_sql(table, row)``, the UPDATE of ``table``, whose rows' ``r`` in ``_ev`` is the
    SQL ``row``."""
    for part in event_parts(con):
        con.execute(update_sql(part.table, part.row_sql(part.table)))


def _load_duckdb(ctx: IngestContext, ws: Workspace, prefix: tc.Prefix,
                 flavour: str) -> LoadResult | None:
    con = ws.con
    for split in (True, False):
        stage = Stage(ctx.file, prefix, ctx.progress, ws.dir, split=split, pipe=not ws.on_disk)
        try:
            stage.start()
            ok = True
            try:
                _read_arrays(ws, stage.paths, flavour)
            except Exception as exc:  # duckdb.Error: not readable by DuckDB -> exact reader
                if is_interrupt(exc):  # SIGINT/SIGTERM inside the query: not a reason to read again
                    raise
                ok = False
            result = stage.finish()
        finally:
            stage.cleanup()
        if ok or len(stage.paths) == 1 or result.error is not None:
            break
        # a part DuckDB could not read: the array is damaged, or (rarely) was cut inside an
        # event; read it whole, as one array, to tell
        drop_events(con)
    if result.error is not None:
        if isinstance(result.error, InputError):
            raise result.error
        return None
    tail = result.tail
    if not ok or tail is None or tail.status not in ("complete", "truncated"):
        return None
    n = con.execute("SELECT count(*) FROM _ev").fetchall()[0][0]
    res = LoadResult("duckdb", tail.status == "complete", tail.metadata, tail.keys)
    if tail.status == "truncated" and tail.incomplete_bytes:
        res.cut_event = (n, "truncated: the file ends inside this event", tail.incomplete_text)
    if ctx.file.damage:
        res.complete = False
    return res


def _array_sql(path: str) -> str:
    """The elements of the staged array ``path`` as :func:`ev_select_sql`'s source (not
    numbered: a part's row ids are its elements' places, see :class:`EventPart`)."""
    return f"""SELECT * FROM read_json({sql_string(path)}, format = 'array', columns = {_raw_columns_sql()},
                                      maximum_object_size = {MAX_OBJECT_BYTES}, compression = 'none')"""


def create_events_sql(con, sources: list[tuple[str, str]], flavour: str, numbered: bool = True) -> list[str]:
    """SQL that makes each ``table`` of ``sources`` ((table, source_sql) pairs: ``_ev`` or its
    parts) from its ``source_sql`` (see :func:`ev_select_sql`), its ``args`` stored with ZSTD
    rather than DuckDB's automatic choice (dict_fsst), as ``trace_events.args`` is: 7% less
    of a staged part's load (0.18 of 2.6 CPU-s on 250 MB of short events,
    docs/benchmarks.md).  The column types, the same for every table, are those of the same
    SELECT over no rows (a source itself is not bound twice: it may read a pipe).
    ``numbered``: the sources have ``r`` and ``event_no`` (see :func:`ev_select_sql`)."""
    empty = ", ".join((["CAST(NULL AS BIGINT) AS r", "CAST(NULL AS BIGINT) AS event_no"] if numbered else [])
                      + [f"CAST(NULL AS {t}) AS {c}" for c, t in te.EVENT_COLUMNS.items()])
    columns = con.execute(f"DESCRIBE {ev_select_sql(f'SELECT {empty} LIMIT 0', flavour, numbered)}").fetchall()
    ddl = ", ".join(f'"{name}" {kind}' + (" USING COMPRESSION zstd" if name == "args" else "")
                    for name, kind, *_ in columns)
    return [f"CREATE TABLE {table} ({ddl}); INSERT INTO {table} {ev_select_sql(source_sql, flavour, numbered)}"
            for table, source_sql in sources]


def _read_arrays(ws: Workspace, paths: list[str], flavour: str) -> None:
    """``_ev`` from the staged arrays ``paths`` (the parts of one event array, in order): the
    first is read on this thread (where a signal interrupts it), the others at the same time
    on their own connections.  ``_ev`` is a view that puts the parts one after another, their
    rows and events numbered from their row ids (:class:`EventPart`; copying them into one
    table took 0.4 s of one core on a 500 MB trace).  A part keeps the array's order: DuckDB
    inserts its rows in the order read (``preserve_insertion_order``, on for the read
    whatever the caller set)."""
    con = ws.con
    tables = [f"_ev_part{k}" for k in range(len(paths))]
    cursors = [con.cursor() for _ in paths[1:]]
    try:
        statements = create_events_sql(
            con, [(f"{ws.qualified}.{table}", _array_sql(path)) for path, table in zip(paths, tables)], flavour,
            numbered=False)
        with temporary_setting(con, "preserve_insertion_order", True), ThreadPoolExecutor(max(1, len(cursors))) as pool:
            futures = [pool.submit(cur.execute, sql) for cur, sql in zip(cursors, statements[1:])]
            try:
                con.execute(statements[0])
                for f in futures:
                    f.result()
            except BaseException:  # the pool waits for the others as the block ends
                for cur in cursors:
                    cur.interrupt()
                raise
    except Exception as exc:
        if not is_interrupt(exc):  # the workspace connection is still usable
            drop_events(con)
        raise
    finally:
        for cur in cursors:
            cur.close()
    con.execute(f"CREATE VIEW _ev AS {' UNION ALL '.join(p.rows_sql() for p in _one_after_another(con, tables))}")


def _load_stream(ctx: IngestContext, ws: Workspace, prefix: tc.Prefix,
                 flavour: str) -> LoadResult:
    sres = tr.StreamResult()
    res = LoadResult("stream", True)
    raw = RawEvents(ws.con)
    for ev in tr.iter_events(ctx.file.chunks(READ_BLOCK, offset=prefix.events_at, progress=ctx.progress),
                             prefix.container, sres):
        if ev.values is None:
            if ev.problem.startswith("truncated"):
                res.cut_event = (ev.event_no, ev.problem, ev.text)
            else:
                ctx.skip(ev.event_no, ev.problem, ev.text)
            continue
        raw.add(ev.event_no, ev.values)
    raw.finish(flavour)
    res.complete = sres.status == "complete" and not ctx.file.damage
    res.trailing_metadata = sres.trailing_metadata
    res.trailing_keys = sres.trailing_keys
    if sres.status == "garbage_after":
        ctx.warnings.append(f"{ctx.file.path}: data after the end of the trace object was ignored")
    return res


class RawEvents:
    """Events read in Python (the exact JSON reader, the CNTK detail CSV) into the workspace
    table ``_raw`` (every field as text, numbered ``r`` in order), then :meth:`finish` makes
    ``_ev`` from it."""

    def __init__(self, con):
        self.con = con
        self.cols = list(te.EVENT_COLUMNS)
        con.execute("CREATE TABLE _raw (r BIGINT, event_no BIGINT, "
                    + ", ".join(f"{c} {t}" for c, t in te.EVENT_COLUMNS.items()) + ")")
        self._batch: dict[str, list] = {c: [] for c in ["r", "event_no"] + self.cols}
        self._done = 0

    def add(self, event_no: int, values: dict) -> None:
        """One event: its number and its fields (EVENT_COLUMNS, text or None)."""
        batch = self._batch
        batch["r"].append(len(batch["r"]) + self._done)
        batch["event_no"].append(event_no)
        for c in self.cols:
            batch[c].append(values.get(c))
        if len(batch["event_no"]) >= STREAM_BATCH:
            self._flush()

    def _flush(self) -> None:
        batch = self._batch
        if not batch["event_no"]:
            return
        insert_arrow(self.con, "_raw", _string_table(batch, self.cols))
        self._done += len(batch["r"])
        for v in batch.values():
            v.clear()

    def finish(self, flavour: str) -> None:
        """``_ev`` from every event added (``_raw`` is dropped)."""
        self._flush()
        self.con.execute(create_events_sql(self.con, [("_ev", "SELECT * FROM _raw")], flavour)[0])
        self.con.execute("DROP TABLE _raw")


def _clean(s):
    if s is None:
        return None
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _string_table(batch: dict, cols: list) -> pa.Table:
    arrays = {"r": arrow_array(batch["r"], pa.int64()), "event_no": arrow_array(batch["event_no"], pa.int64())}
    for c in cols:
        try:
            arrays[c] = arrow_array(batch[c], pa.string())
        except (pa.ArrowInvalid, UnicodeEncodeError):
            arrays[c] = arrow_array([_clean(v) for v in batch[c]], pa.string())
    return pa.table(arrays)
