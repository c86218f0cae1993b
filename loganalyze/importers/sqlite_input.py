"""SQLite profile inputs (Nsight Systems exports, nvprof databases): opened read-only, read as Arrow.

:class:`SqliteFile` opens an export read-only (never writing, never locking it for others;
a gzipped one is first unpacked to a temporary file), lists its tables and columns, and
streams a SELECT as Arrow record batches: with the ADBC SQLite driver when it is installed
(C++, about 5x faster), else with the standard ``sqlite3`` module in big ``fetchmany``
batches.  DuckDB consumes the stream in one INSERT per table; no row goes in one by one.
With the driver, a table whose rows are all small is read without a check per cell, in two
rowid ranges at once, into one Arrow table that DuckDB reads as it is (:meth:`SqliteFile.copy_into`;
:mod:`.sqlite_arrow`).

:func:`head_flavour` and :func:`sqlite_flavour` tell which profiler wrote a database, from
its first bytes (sniffing) and from its table list (once open).
"""
from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import ExitStack, contextmanager
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa

from ..grammars import nsys as nsys_grammar
from ..grammars import nvprof_sqlite as nvprof_grammar
from .. import tempfiles
from ..inputs import InputError
from .base import IngestContext, create_arrow_table, dropped_after, insert_arrow
from .sqlite_arrow import adbc_ready, adbc_stream, read_parts_typed
from .sqlite_guard import (MAX_CELL_BYTES, StatementClock, base_tables, open_readonly, quote_ident, sqlite_uri,
                           statement_seconds)

SQLITE_MAGIC = b"SQLite format 3\x00"
ARROW_TYPES = {"INTEGER": pa.int64(), "TEXT": pa.string(), "REAL": pa.float64()}
#: the two profilers that write SQLite databases, and what their databases are called
NSYS, NVPROF = "nsys", "nvprof"
FLAVOUR_NAMES = {NSYS: "an Nsight Systems export", NVPROF: "an nvprof database"}
#: a table is read in this many rowid ranges at once (one thread each; two per core of this
#: 2-core host: equal rowid ranges do not take equal time, and with one part per core a core
#: sat idle while the slower part finished) ...
READ_PARTS = 4
#: ... when it has at least twice this many rows
READ_PART_ROWS = 100_000


def is_sqlite(head: bytes) -> bool:
    """Whether ``head`` starts an SQLite database."""
    return head.startswith(SQLITE_MAGIC)


def head_flavour(head: bytes) -> str | None:
    """Which profiler's database ``head`` starts, as far as its first bytes show: ``nsys``,
    ``nvprof``, ``sqlite`` (a database whose schema is not in ``head``: its tables will
    tell), or None (no SQLite database)."""
    if not is_sqlite(head):
        return None
    if any(m.encode() in head for m in nsys_grammar.HEAD_MARKERS):
        return NSYS
    if all(m.encode() in head for m in nvprof_grammar.HEAD_MARKERS):
        return NVPROF
    return "sqlite"


def sqlite_flavour(db: "SqliteFile") -> str | None:
    """``nsys``, ``nvprof`` or None: which profiler wrote the open database ``db``."""
    tables = set(db.tables)
    if nsys_grammar.is_export(tables):
        return NSYS
    if nvprof_grammar.is_database(tables):
        return NVPROF
    return None


class SqliteProfileImporter:
    """An importer of one profiler's SQLite databases (``flavour``).  It claims a file whose
    first bytes show that flavour at 95, and one whose first bytes do not show its tables at
    ``unsure_score`` (the importers try in score order); once open, the tables decide, and
    it declines a database of the other flavour, which the next candidate then reads."""

    format: str
    flavour: str
    unsure_score: int

    def sniff(self, head: bytes, name: str) -> int:
        """How sure this importer is that ``head`` starts one of its databases (0-100)."""
        return {self.flavour: 95, "sqlite": self.unsure_score}.get(head_flavour(head), 0)

    def ingest(self, ctx: IngestContext) -> None:
        """Read the database; an InputError when it is not one of this flavour."""
        with profile_database(ctx, self.flavour) as db:
            self.read(ctx, db)

    def read(self, ctx: IngestContext, db: "SqliteFile") -> None:
        """Read the open database ``db`` into the store."""
        raise NotImplementedError


@contextmanager
def profile_database(ctx: IngestContext, flavour: str) -> Iterator["SqliteFile"]:
    """The input opened as the ``flavour`` profiler's database, closed after use; an
    InputError when another profiler wrote it, or none did (naming the tables it has)."""
    db = SqliteFile(ctx)
    try:
        found = sqlite_flavour(db)
        if found is None:
            shown = ", ".join(sorted(db.tables)[:8]) or "no tables"
            raise InputError(
                f"{db.display}: SQLite database, but not an Nsight Systems export (no StringIds "
                f"and CUPTI_ACTIVITY_KIND_*/NVTX_EVENTS tables) nor an nvprof database (no StringTable); "
                f"it has: {shown}" + (f"; not read: {db.not_read}" if db.not_read else "")
            )
        if found != flavour:
            raise InputError(f"{db.display}: {FLAVOUR_NAMES[found]}, not {FLAVOUR_NAMES[flavour]}")
        yield db
    finally:
        db.close()


class SqliteFile:
    """An SQLite input opened read-only through :mod:`.sqlite_guard`; ``close()`` when done."""

    def __init__(self, ctx: IngestContext):
        self.ctx = ctx
        self.display = ctx.file.path
        self._tmp: str | None = None
        self.con: sqlite3.Connection | None = None
        self.stream_error: InputError | None = None
        self._prefetched: dict = {}
        ours = ctx.file.compression == "gzip"
        if not ours:  # SQLite reads the file itself: its sha256 is computed meanwhile
            ctx.file.hash_in_background()
        path = self._gunzip() if ours else ctx.file.local_path
        self.path = path
        self.uri = sqlite_uri(path, ours=ours)
        self.clock = StatementClock(statement_seconds(os.path.getsize(path)))
        try:
            self.con = open_readonly(self.uri, self.clock)
            self.tables, others = base_tables(self.con, self.clock)
        except sqlite3.DatabaseError as exc:
            error = self._error(exc, "reading its table list", locked_hint=True)
            self.close()
            raise error from None
        #: "view X, trigger Y (only base tables are read ...)", or "" when it has neither
        self.not_read = ""
        if others:
            shown = ", ".join(f"{kind} {name}" for kind, name in others[:8])
            self.not_read = (f"{shown}{' ...' if len(others) > 8 else ''} "
                             "(only base tables are read, never views or triggers)")
            ctx.warnings.append(f"{self.display}: not read: {self.not_read}")

    def _error(self, exc: sqlite3.Error, what: str, locked_hint: bool = False) -> InputError:
        """The one-line InputError for an sqlite3 error while ``what``."""
        text = " ".join(str(exc).split())[:300]
        if "interrupted" in text:
            return InputError(self.clock.message(self.display, what))
        if "too big" in text:
            return InputError(f"{self.display}: {what}: a cell holds more than {MAX_CELL_BYTES} bytes; "
                              "not an export loganalyze can read")
        if locked_hint and ("locked" in text or "busy" in text):
            return InputError(f"{self.display}: database is locked by another process (is it still being written?)")
        if locked_hint and "readonly" in text:  # a hot journal: a writer died or is at work; we never roll back
            return InputError(f"{self.display}: database has an unfinished write (a -journal file); "
                              "not read (is it still being written?)")
        if "not authorized" in text:
            return InputError(f"{self.display}: {what}: refused ({text}); not an export loganalyze can read")
        if locked_hint:
            return InputError(f"{self.display}: not a readable SQLite database ({text})")
        return InputError(f"{self.display}: cannot read {what} ({text})")

    def _gunzip(self) -> str:
        """The decompressed database in a temporary file, through the one input layer.  An
        SQLite file cut short is no database: a damaged gzip stream is an error here."""
        fd, tmp = tempfiles.new_file("sqlite", ".sqlite")
        self._tmp = tmp
        file = self.ctx.file
        try:
            with os.fdopen(fd, "wb") as out:
                for chunk in file.chunks(progress=self.ctx.progress):
                    out.write(chunk)
            if file.truncated:
                raise InputError(f"{self.display}: gzip stream is cut off or corrupt ({file.damage})")
        except BaseException:
            self.close()
            raise
        return tmp

    def close(self) -> None:
        """Wait for prefetching threads, close the connection, remove a temporary copy."""
        for t, _box in getattr(self, "_prefetched", {}).values():
            t.join()
        con = getattr(self, "con", None)
        if con is not None:
            con.close()
            self.con = None
        if self._tmp:
            tempfiles.remove(self._tmp)
            self._tmp = None

    # ------------------------------------------------------------------ queries
    def has(self, table: str) -> bool:
        return table in self.tables

    def first(self, *tables: str) -> str | None:
        return next((t for t in tables if t in self.tables), None)

    def columns(self, table: str) -> set[str]:
        return set(self.tables.get(table, ()))

    def count(self, table: str) -> int:
        """The number of rows of base table ``table``."""
        return self.fetchall(f"SELECT count(*) FROM {quote_ident(table)}", what=f"table {table}")[0][0]

    def fetchall(self, sql: str, params=(), what: str = "") -> list[tuple]:
        """Every row of ``sql`` (a statement over base tables only), under the time limit."""
        try:
            self.clock.start()
            return self.con.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._error(exc, what or "the database") from None

    def table_select(self, table: str, cols: list, rowid: str = "rowid") -> tuple[str, list[str], list[str]]:
        """(SQL, names, types) reading the mapped columns ``cols`` (:class:`~loganalyze.grammars.nsys.Col`)
        of ``table``, after one typed dummy row (``_d = 1``; :func:`~loganalyze.grammars.nsys.select_sql`)."""
        sql, names = nsys_grammar.select_sql(table, cols, self.columns(table), rowid=rowid,
                                             max_cell=MAX_CELL_BYTES if adbc_ready() else None)
        return sql, names, nsys_grammar.select_types(cols)

    def small_rows(self, table: str) -> bool:
        """Whether no row of ``table`` holds more than :data:`MAX_CELL_BYTES` bytes, so that
        no cell can (the largest row in SQLite's ``dbstat`` table, one row per page: the time
        limit holds; False where the table or ``dbstat`` is missing or cannot be read)."""
        try:
            top = self.fetchall("SELECT max(mx_payload) FROM dbstat WHERE name = ?", (table,))[0][0]
        except InputError:
            return False
        return isinstance(top, int) and top <= MAX_CELL_BYTES

    def _parts(self, table: str, rowid: str, parts: int) -> list[str | None]:
        """``parts`` WHERE clauses cutting ``table`` into rowid ranges of about equal size, in
        order ([None]: one part)."""
        if parts < 2 or rowid != "rowid":
            return [None]
        t = quote_ident(table)  # two subqueries: SQLite finds each end in the b-tree, without a scan
        lo, hi = self.fetchall(f"SELECT (SELECT min(rowid) FROM {t}), (SELECT max(rowid) FROM {t})",
                               what=f"table {table}")[0]
        if not isinstance(lo, int) or not isinstance(hi, int) or hi - lo < 2 * READ_PART_ROWS:
            return [None]
        step = (hi - lo) // parts + 1
        cuts = [lo + i * step for i in range(parts)] + [hi + 1]
        return [f"rowid >= {a} AND rowid < {b}" for a, b in zip(cuts, cuts[1:])]

    def _plain_table(self, table: str, cols: list, rowid: str, wheres: list[str | None]) -> pa.Table | None:
        """``cols`` of ``table`` without a check per cell
        (:func:`~loganalyze.grammars.nsys.plain_select_sql`), part by part on as many threads,
        with the columns :meth:`table_select` adds (``_d``, ``_bad``, ``_big``: 0, '', 0);
        None when a value needs the checks (a time that is not an integer) or the read fails.
        Only for a table whose rows are all small (:meth:`small_rows`)."""
        selects = [nsys_grammar.plain_select_sql(table, cols, self.columns(table), rowid=rowid, where=w)
                   for w in wheres]
        schema = _schema(selects[0][1], ["INTEGER"] + [c.type for c in cols])
        data = read_parts_typed(self.uri, [sql for sql, _ in selects], schema)
        if data is None:
            return None
        n = data.num_rows
        zeros = pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(np.zeros(n, np.int64))])
        empty = pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(np.zeros(n + 1, np.int32)), pa.py_buffer(b"")])
        return data.append_column("_d", zeros).append_column("_bad", empty).append_column("_big", zeros)

    def _read_whole(self, table: str, cols: list, rowid: str, plain: bool, wheres: list[str | None]) -> pa.Table:
        """All of ``cols`` of ``table`` in memory (on a helper thread): plainly when ``plain``
        and the values allow it, else with the checks."""
        data = self._plain_table(table, cols, rowid, wheres) if plain else None
        if data is not None:
            return data
        sql, names, types = self.table_select(table, cols, rowid)
        with self._reader(sql, _schema(names, types)) as rdr:
            return rdr.read_all()

    def copy_into(self, con, target: str, table: str, cols: list, select: str, rowid: str = "rowid",
                  times: str | None = "span", checked: str = "TRUE", tally: str | None = None,
                  when_read: Callable[[], None] | None = None, prepare: str | None = None) -> list[tuple]:
        """The mapped columns ``cols`` of ``table`` into DuckDB table ``target`` through
        ``select``, which reads them as ``_arrow`` and leaves out the dummy row (``_d = 0``).
        The rows are in memory first: ``select`` may join them.  The rows of ``checked`` (SQL
        over ``_arrow``) whose times are unusable (:func:`~loganalyze.grammars.nsys.time_problem_sql`;
        ``times``: "span", "order" or None) are skipped with their reason before ``select`` runs.
        Returns the rows of ``tally`` (SQL over ``_arrow``, run before any row is skipped), or [].
        ``when_read`` is called once the rows are read, before DuckDB works on them;
        ``prepare`` (a statement over ``_arrow``: a lookup table ``select`` joins) runs after
        the rows to skip are gone, before ``select``.

        With the ADBC driver, a table whose rows are all small is read without a check per
        cell, in parts on both cores, and DuckDB reads the Arrow table as it is; a time that is
        not an integer sends it through the checked SELECT, whose answers are the same."""
        data = self._take_prefetched((table, tuple(cols), rowid))
        if data is None and adbc_ready() and self.small_rows(table):
            data = self._plain_table(table, cols, rowid, self._parts(table, rowid, READ_PARTS))
        if data is None:  # staged as temporary table _arrow
            with self.reader(*self.table_select(table, cols, rowid), what=f"table {table}") as rdr:
                create_arrow_table(con, "_arrow", rdr, temp=True)
        if when_read is not None:
            when_read()
        with dropped_after(con, "temp._arrow"):
            big = _rows(con, "SELECT min(row_no) FROM _arrow WHERE _d = 0 AND _big <> 0", data)[0][0]
            if big is not None:
                raise InputError(f"{self.display}: table {table} row {big}: a cell holds more than {MAX_CELL_BYTES} "
                                 "bytes; not an export loganalyze can read")
            counts = _rows(con, tally, data) if tally else []
            problem = nsys_grammar.time_problem_sql([c.name for c in cols], times)
            if problem is not None:
                data = self._skip_rows(con, data, table, problem, checked)
            if prepare is not None:
                _rows(con, prepare, data)
            if data is None:
                con.execute(f"INSERT INTO {target} BY NAME {select}")
            else:
                insert_arrow(con, target, data, select=select)
            return counts

    def _skip_rows(self, con, data: pa.Table | None, table: str, problem: str, checked: str) -> pa.Table | None:
        """Skip (with the reason) and drop from ``_arrow`` the rows whose ``problem`` is not NULL;
        ``_arrow`` is ``data``, or the temporary table when None.  Returns where the rows left are:
        ``data``, or None when they had to be staged to drop some."""
        rows = _rows(con, f"""SELECT row_no, why FROM (SELECT row_no, {problem} AS why FROM _arrow
                              WHERE _d = 0 AND ({checked})) WHERE why IS NOT NULL ORDER BY row_no""", data)
        if not rows:
            return data
        for row_no, why in rows:
            self.ctx.skip(row_no, why, f"{table} row {row_no}")
        if data is not None:
            create_arrow_table(con, "_arrow", data, temp=True)
        con.execute(f"DELETE FROM _arrow WHERE _d = 0 AND ({checked}) AND {problem} IS NOT NULL")
        return None

    def prefetch(self, table: str, cols: list, rowid: str = "rowid") -> None:
        """Start reading ``cols`` of ``table`` into memory on a helper thread (the ADBC driver
        reads in C without the GIL, so this overlaps with DuckDB working on another table);
        a later :meth:`copy_into` of the same columns takes the result."""
        key = (table, tuple(cols), rowid)
        if not adbc_ready() or key in self._prefetched:
            return
        plain = self.small_rows(table)  # here: the guarded connection serves this thread only
        wheres = self._parts(table, rowid, READ_PARTS) if plain else [None]
        box: dict = {}

        def run() -> None:
            try:
                box["table"] = self._read_whole(table, cols, rowid, plain, wheres)
            except BaseException as exc:  # handed to the reader
                box["error"] = exc

        t = threading.Thread(target=run, daemon=True)
        t.start()
        self._prefetched[key] = (t, box)

    def _take_prefetched(self, key: tuple) -> pa.Table | None:
        """The table :meth:`prefetch` read for ``key`` (None when it was not asked for)."""
        if key not in self._prefetched:
            return None
        t, box = self._prefetched.pop(key)
        t.join()
        if "error" in box:
            err = box["error"]
            raise err if isinstance(err, InputError) else InputError(
                f"{self.display}: cannot read ({' '.join(str(err).split())[:300]})")
        return box["table"]

    @contextmanager
    def reader(self, sql: str, names: list[str], types: list[str], what: str = "") -> Iterator[pa.RecordBatchReader]:
        """The rows of ``sql`` as an Arrow record batch stream (``types``: INTEGER/TEXT/REAL);
        ``what`` names what it reads in messages."""
        schema = _schema(names, types)
        self.stream_error = None
        try:
            with self._reader(sql, schema, what) as rdr:
                yield rdr
        except InputError:
            raise
        except Exception as exc:
            # a read error inside the stream reaches us wrapped by DuckDB: say it plainly
            if self.stream_error is not None:
                raise self.stream_error from None
            import duckdb

            if isinstance(exc, duckdb.Error) and ("SQLite" in str(exc) or "stream" in str(exc)):
                raise InputError(f"{self.display}: cannot read ({' '.join(str(exc).split())[:300]})") from None
            raise

    @contextmanager
    def _reader(self, sql: str, schema: pa.Schema, what: str = "") -> Iterator[pa.RecordBatchReader]:
        if adbc_ready():
            with ExitStack() as stack:
                try:
                    rdr = stack.enter_context(adbc_stream(self.uri, sql))
                except Exception as exc:
                    raise InputError(f"{self.display}: cannot read ({' '.join(str(exc).split())})") from None
                # the driver's stream goes to DuckDB as it is (C to C, no Python per batch) when its
                # schema is the one asked for, which the typed dummy row makes the rule
                yield rdr if rdr.schema.equals(schema) else _checked(rdr, schema, self)
            return
        cur = self.con.cursor()
        try:
            try:
                self.clock.start()
                cur.execute(sql)
            except sqlite3.DatabaseError as exc:
                raise self._error(exc, what or "the database") from None
            yield pa.RecordBatchReader.from_batches(schema, _fetch_batches(cur, schema, self, what))
        finally:
            cur.close()


def _rows(con, sql: str, data: pa.Table | None) -> list[tuple]:
    """The rows of ``sql``, in which ``_arrow`` is ``data`` (DuckDB's replacement scan of this
    frame's local variable), or the temporary table ``_arrow`` when ``data`` is None."""
    if data is None:
        return con.execute(sql).fetchall()
    _arrow = data  # noqa: F841 - read by DuckDB's replacement scan
    return con.execute(sql).fetchall()


def _schema(names: list[str], types: list[str]) -> pa.Schema:
    """The Arrow schema of a SELECT's columns ``names`` of SQLite ``types``."""
    return pa.schema([(n, ARROW_TYPES[t]) for n, t in zip(names, types)])


def _checked(rdr: pa.RecordBatchReader, schema: pa.Schema, src: "SqliteFile") -> pa.RecordBatchReader:
    """Cast the driver's batches to ``schema`` and turn read errors into one-line InputErrors."""
    def gen():
        while True:
            try:
                batch = rdr.read_next_batch()
            except StopIteration:
                return
            except Exception as exc:
                src.stream_error = InputError(f"{src.display}: cannot read ({' '.join(str(exc).split())})")
                raise src.stream_error from None
            if batch.schema != schema:
                batch = pa.RecordBatch.from_arrays(
                    [c.cast(t.type) for c, t in zip(batch.columns, schema)], schema=schema
                )
            yield batch

    return pa.RecordBatchReader.from_batches(schema, gen())


def _fetch_batches(cur, schema: pa.Schema, src: "SqliteFile", what: str, size: int = 100_000):
    while True:
        try:
            rows = cur.fetchmany(size)
        except sqlite3.DatabaseError as exc:
            src.stream_error = src._error(exc, what or "the database")
            raise src.stream_error from None
        if not rows:
            return
        cols = list(zip(*rows))
        yield pa.RecordBatch.from_arrays(
            [pa.array(c, f.type, from_pandas=False) for c, f in zip(cols, schema)], schema=schema
        )
