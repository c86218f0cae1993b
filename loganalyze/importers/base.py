"""What every importer shares: the context it writes through, how skipped input is kept, how a
source is finished, and the one hand-off of Arrow data to DuckDB.

An importer reads one :class:`~loganalyze.inputs.InputFile` and writes its family's tables
through ``ctx.con`` inside the transaction the caller opened; it reports lines it could not
use with :meth:`IngestContext.skip`, fills the ``ctx.source`` fields it knows, and ends with
:meth:`IngestContext.finish`.  The caller (``loganalyze.ingest``) writes the ``sources`` row
and commits, or rolls everything back.

Arrow reaches DuckDB only through :func:`insert_arrow` (DuckDB's replacement scan of a local
variable: ``register()`` inside a transaction would keep the data alive until COMMIT), and
rows built in Python go through :class:`RowBuffer`, whose Arrow types come from the database
schema (:func:`arrow_types`), which is defined once, in ``loganalyze/schema/*.sql``, and whose
columns :mod:`.arrow_arrays` builds (``pa.array`` would import pandas).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Protocol, Union

import duckdb
import pyarrow as pa

from ..inputs import InputError, InputFile
from ..store import restored_after
from .arrow_arrays import arrow_array

if TYPE_CHECKING:
    import polars as pl

#: skipped lines held in memory before they are written to ``skipped_lines``
SKIP_FLUSH_ROWS = 50_000
#: rows a :class:`RowBuffer` holds before it inserts them
ROW_BUFFER_ROWS = 100_000
#: characters of a skipped line kept in ``skipped_lines.text``
SKIP_TEXT_CHARS = 200
#: the least by which :meth:`IngestContext.widen_memory_limit` raises DuckDB's limit
MEMORY_STEP = 16 << 20

ArrowData = Union[pa.Table, pa.RecordBatch, pa.RecordBatchReader]


def insert_arrow(con: duckdb.DuckDBPyConnection, table: str, data: ArrowData, select: str | None = None,
                 stage: bool = False) -> None:
    """Insert Arrow ``data`` (a Table, RecordBatch or RecordBatchReader) into ``table``.

    Without ``select`` the columns go in by name (``INSERT INTO table BY NAME SELECT * FROM
    data``).  With ``select`` that SELECT runs instead, reading the data as ``_arrow`` (for
    joins and conversions).  ``stage=True`` first copies the data into a temporary table
    ``_arrow`` (one columnar pass): DuckDB cannot know a stream's size, and joining a stream
    to other tables made it build its hash tables on the big side.
    """
    query = select if select is not None else "SELECT * FROM _arrow"
    if not stage:
        _run_over_arrow(con, f"INSERT INTO {table} BY NAME {query}", data)
        return
    with dropped_after(con, "temp._arrow"):
        create_arrow_table(con, "_arrow", data, temp=True)
        con.execute(f"INSERT INTO {table} BY NAME {query}")


def skipped_text(text: pl.Expr) -> pl.Expr:
    """A column of skipped lines' texts cut as :meth:`IngestContext.skip` cuts one: the line
    end stripped, the first :data:`SKIP_TEXT_CHARS` characters."""
    return text.str.strip_chars_end("\r\n").str.slice(0, SKIP_TEXT_CHARS)


def dropped_after(con: duckdb.DuckDBPyConnection, *tables: str):
    """The working ``tables`` (names as a DROP takes them: ``temp._arrow``) dropped when the
    block ends (:func:`~loganalyze.store.restored_after`: after an error, as far as that can
    be done, and the error reported is the block's, not the aborted transaction's refusal of
    the DROP)."""

    def drop(c) -> None:
        for table in tables:
            c.execute(f"DROP TABLE IF EXISTS {table}")

    return restored_after(con, drop)


def _insert_each(con: duckdb.DuckDBPyConnection, inserts: list[tuple[str, ArrowData, str | None]]) -> None:
    """:func:`insert_arrow` of each (table, data, select) of ``inserts``, in order."""
    for table, data, select in inserts:
        insert_arrow(con, table, data, select)


def create_arrow_table(con: duckdb.DuckDBPyConnection, table: str, data: ArrowData, temp: bool = False) -> None:
    """(Re)create ``table`` holding Arrow ``data`` (or any other object DuckDB scans, such as
    a dict of numpy arrays; a working table: a temporary one with ``temp``), through the same
    hand-off as :func:`insert_arrow`."""
    kind = "TEMP TABLE" if temp else "TABLE"
    _run_over_arrow(con, f"CREATE OR REPLACE {kind} {table} AS SELECT * FROM _arrow", data)


def write_parquet(con: duckdb.DuckDBPyConnection, path: str, data: ArrowData) -> None:
    """Write Arrow ``data`` into the Parquet file ``path``, in order, through the same
    hand-off as :func:`insert_arrow`, for DuckDB to read back soon: a working file, neither
    compressed nor dictionary-encoded (half the CPU of a compressed table's store:
    docs/benchmarks.md, "Twenty-first session").  No HUGEINT columns: Parquet has no 128-bit
    integers, and DuckDB writes them as DOUBLE."""
    _run_over_arrow(con, f"COPY (SELECT * FROM _arrow) TO {sql_string(path)} "
                         "(FORMAT parquet, COMPRESSION uncompressed, DICTIONARY_SIZE_LIMIT 1)", data)


def _run_over_arrow(con: duckdb.DuckDBPyConnection, sql: str, data: ArrowData) -> None:
    """Run ``sql``, in which ``_arrow`` names ``data``: DuckDB's replacement scan finds the
    local variable (``register()`` inside a transaction would keep the data until COMMIT)."""
    _arrow = data  # noqa: F841 - read by DuckDB's replacement scan
    con.execute(sql)


def sql_string(text: str) -> str:
    """``text`` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def arrow_table(rel: duckdb.DuckDBPyRelation) -> pa.Table:
    """The rows of a DuckDB relation as one Arrow table (DuckDB 2's ``to_arrow_table``, 1.x's ``arrow``)."""
    return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()


def numpy_columns(con: duckdb.DuckDBPyConnection, sql: str) -> dict:
    """The columns of the rows of ``sql`` as numpy arrays (masked where a column has NULLs),
    as ``fetchnumpy`` gives them, through a relation rather than a DB-API result: DuckDB's
    conversion of a DB-API result grows each array as the rows come (numpy zero-fills and
    copies every enlarged buffer), a relation's makes them at their final size.  2.5 M rows
    of seven columns: 12-32 k page faults instead of 29-64 k, 0.04-0.07 s instead of
    0.08-0.13 s (docs/benchmarks.md, "Twenty-third session")."""
    return con.sql(sql).fetchnumpy()


def arrow_types(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, pa.DataType]:
    """Arrow type of every column of ``table``, as DuckDB hands that table to Arrow."""
    return {f.name: f.type for f in arrow_table(con.sql(f"SELECT * FROM {table} LIMIT 0")).schema}


@dataclass
class MemoryRoom:
    """DuckDB's memory limit the ingest set for a file (``limit``, bytes), the one it lowered
    from (``ceiling``), and the one in force (``applied``, raised by
    :meth:`IngestContext.widen_memory_limit`)."""

    limit: float
    ceiling: float
    applied: float = field(init=False)

    def __post_init__(self) -> None:
        self.applied = self.limit


@dataclass
class IngestContext:
    """What an importer works with: the store connection, its source id, the input file,
    the ``sources`` fields it fills, its warnings and its skipped lines."""

    con: duckdb.DuckDBPyConnection
    source_id: int
    file: InputFile
    #: columns of the ``sources`` row the importer fills (dialect, library_version, ...)
    source: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    progress: Any = None  # callable(bytes_done) or None
    _skipped: list[tuple[int, str, str | None]] = field(default_factory=list)
    skipped_count: int = 0
    _first_skip: tuple[int, str] | None = None
    #: the helper thread of :meth:`insert_behind`, and its insert in progress
    _writer: Any = None
    _writing: Any = None
    #: DuckDB's memory limit the ingest lowered for this file (None where it did not)
    memory: MemoryRoom | None = None

    def widen_memory_limit(self, extra: int) -> None:
        """Let DuckDB use ``extra`` bytes more than the importer's limit (:class:`MemoryRoom`)
        for what grows with the file's content rather than its size: the oneDNN shapes, whose
        key index and working queries passed a 100 MB limit at some 600,000 distinct shapes.
        Set through a cursor of its own, since an :meth:`insert_behind` may be running."""
        room = self.memory
        if room is None:
            return
        want = min(room.ceiling, room.limit + extra)
        if want <= room.applied or (want < room.ceiling and want < room.applied + MEMORY_STEP):
            return
        with self.con.cursor() as cur:
            cur.execute(f"SET memory_limit = '{int(want)}B'")
        room.applied = want

    def insert_behind(self, table: str, data: ArrowData, select: str | None = None, skipped=None) -> None:
        """:func:`insert_arrow` of ``data`` into ``table`` (through ``select``) on a helper
        thread, while the caller goes on (DuckDB lets go of the GIL while it inserts): one
        insert at a time, in the order given, each after the one before has ended.  Until
        :meth:`settle`, the caller must not use ``con`` itself (:meth:`skip` and
        :meth:`flush_skipped` settle first).  ``skipped``: lines skipped at once (a frame as
        :meth:`_skipped_rows` takes), counted now, written by the same helper right after."""
        inserts = [(table, data, select)]
        if skipped is not None and skipped.height:
            inserts.append(self._skipped_rows(skipped))
        self.settle()
        if self._writer is None:
            from concurrent.futures import ThreadPoolExecutor

            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="loganalyze-insert")
        self._writing = self._writer.submit(_insert_each, self.con, inserts)

    def settle(self) -> None:
        """Wait for the :meth:`insert_behind` in progress, if any; raise what it raised."""
        writing, self._writing = self._writing, None
        if writing is not None:
            writing.result()

    def close(self) -> None:
        """Wait for the insert in progress (whether or not it failed: the caller is
        on its way out, and the connection must be free for its ROLLBACK) and stop the
        helper thread.  The ingest calls this after the importer, whatever happened."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.shutdown(wait=True)
        self._writing = None

    def skip(self, line_no: int, reason: str, text: str | bytes | None = None) -> None:
        """Report one line (or event) that could not be used, with why and its first bytes."""
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        if text is not None:  # (skipped_text cuts a whole column so)
            text = text.rstrip("\r\n")[:SKIP_TEXT_CHARS]
        self._skipped.append((line_no, reason, text))
        self.skipped_count += 1
        if self._first_skip is None or line_no < self._first_skip[0]:
            self._first_skip = (line_no, reason)
        if len(self._skipped) >= SKIP_FLUSH_ROWS:
            self.flush_skipped()

    def _skipped_rows(self, rows) -> tuple[str, pa.Table, str]:
        """The insert of many lines skipped at once (:meth:`insert_behind`), counted as
        skipped: ``rows``, a polars frame of ``line_no``, ``reason`` and ``text`` (cut by
        :func:`skipped_text`; a log with a cut-off line every ten lines skipped 1.3 M of them
        per GiB, 3 us each through :meth:`skip`)."""
        first = rows.row(int(rows["line_no"].arg_min()), named=True)
        if self._first_skip is None or first["line_no"] < self._first_skip[0]:
            self._first_skip = (first["line_no"], first["reason"])
        self.skipped_count += rows.height
        return ("skipped_lines", rows.select("line_no", "reason", "text").to_arrow(),
                f"SELECT {int(self.source_id)} AS source_id, * FROM _arrow")

    def first_skip(self) -> tuple[int, str] | None:
        """The first skipped (line_no, reason) by line number, pending or already flushed."""
        return self._first_skip

    def clear_skipped(self) -> None:
        """Forget every line skipped so far (written or not), for a retry with another reader."""
        self.settle()
        self.con.execute("DELETE FROM skipped_lines WHERE source_id = ?", [self.source_id])
        self._skipped.clear()
        self.skipped_count = 0
        self._first_skip = None

    def flush_skipped(self) -> None:
        """Write the pending skipped lines to ``skipped_lines``."""
        if not self._skipped:
            return
        self.settle()
        nums, reasons, texts = zip(*self._skipped)
        types = arrow_types(self.con, "skipped_lines")
        insert_arrow(self.con, "skipped_lines", pa.table({
            "source_id": arrow_array([self.source_id] * len(nums), types["source_id"]),
            "line_no": arrow_array(list(nums), types["line_no"]),
            "reason": arrow_array(list(reasons), types["reason"]),
            "text": arrow_array(list(texts), types["text"]),
        }))
        self._skipped.clear()

    def finish(self, total: int, parsed: int, non_data: int | None = None, what: str = "record", *,
               unit: str = "line", hint: str = "", empty: str | None = None, warn: bool = True,
               none_is_error: bool = True) -> None:
        """The one way to finish a source: flush the skipped lines, fill the ``sources``
        counters (``non_data`` defaults to total - parsed - skipped) and warn about skipped
        lines (``warn``); raise InputError naming the file when nothing was read.

        ``what`` names one record ("trace event"), ``unit`` what a skipped line number counts
        ("line", "event", "row"); when nothing was read and nothing skipped the message is
        ``empty`` when given, else "no <what> found (<hint>)".  ``none_is_error=False`` keeps a
        source whose records were all skipped (the oneDNN reader: its lines are in the file,
        and the caller already failed a file with none).
        """
        self.flush_skipped()
        path = self.file.path
        skipped = self.skipped_count
        if parsed == 0 and (none_is_error or not skipped):
            first = self.first_skip()
            if first is not None:
                msg = (f"none of the {skipped} {what}s could be read "
                       f"(first problem: {unit} {first[0]}: {first[1]})")
            else:
                msg = empty or f"no {what} found" + (f" ({hint})" if hint else "")
            damage = f" ({self.file.damage})" if self.file.damage else ""
            raise InputError(f"{path}: {msg}{damage}")
        self.source.update(
            lines_total=total,
            lines_parsed=parsed,
            lines_skipped=skipped,
            lines_non_verbose=total - parsed - skipped if non_data is None else non_data,
        )
        self.note_damage(parsed, what)
        if warn and skipped:
            first = self.first_skip()
            self.warnings.append(f"{path}: {skipped} {unit}(s) skipped (first: {unit} {first[0]}, {first[1]}; "
                                 "see 'loganalyze skipped')")

    def note_damage(self, kept: int | None = None, what: str = "record") -> None:
        """The one policy for damaged compressed input: when ``file.damage`` is set, flag the
        source as truncated and warn, naming the file and what was kept (``kept`` complete
        ``what``s).  Called by :meth:`finish`, and by the caller after every importer (once)."""
        if self.file.damage is None or self.source.get("truncated"):
            return
        self.source["truncated"] = True
        kept_text = f"the {kept} complete {what}(s) before it were kept" if kept is not None else \
            "the complete records before it were kept"
        self.warnings.append(f"{self.file.path}: partial data: {self.file.damage}; {kept_text}")


class RowBuffer:
    """Rows built in Python (or given as Arrow columns: :meth:`add_table`), inserted into
    ``table`` every ``limit`` rows through :func:`insert_arrow`; the column types are the
    table's own (:func:`arrow_types`).

    Given an :class:`IngestContext`, ``source_id`` is filled from it when the table has
    that column and ``columns`` does not name it, and each insert first waits for the
    context's :meth:`~IngestContext.insert_behind` in progress (both use its connection).
    ``select`` is passed to
    :func:`insert_arrow` (a SELECT over ``_arrow``).  Columns are built by :func:`arrow_array`.
    """

    def __init__(self, ctx_or_con: IngestContext | duckdb.DuckDBPyConnection, table: str,
                 columns: Iterable[str], limit: int = ROW_BUFFER_ROWS, select: str | None = None):
        if isinstance(ctx_or_con, IngestContext):
            self.ctx, self.con, self.source_id = ctx_or_con, ctx_or_con.con, ctx_or_con.source_id
        else:
            self.ctx, self.con, self.source_id = None, ctx_or_con, None
        self.table, self.limit, self.select = table, limit, select
        types = arrow_types(self.con, table)
        self.columns = list(columns)
        unknown = [c for c in self.columns if c not in types]
        if unknown:
            raise ValueError(f"{table} has no column(s) {', '.join(unknown)}")
        self.types = {c: types[c] for c in self.columns}
        if "source_id" in self.types or "source_id" not in types:
            self.source_id = None  # the rows carry it, or the table has none
        self._source_id_type = types.get("source_id")
        self._cols: dict[str, list] = {c: [] for c in self.columns}
        self._tables: list[pa.Table] = []  # rows given as Arrow columns (add_table)
        self.count = 0  # rows waiting
        self.total = 0  # rows taken out to be inserted

    def add(self, **values: Any) -> None:
        """One row (columns by name; those left out are NULL)."""
        for c, lst in self._cols.items():
            lst.append(values.get(c))
        self.count += 1
        if self.count >= self.limit:
            self.flush()

    def extend(self, rows: Iterable[dict]) -> None:
        """Several rows, as dicts keyed by column."""
        for row in rows:
            self.add(**row)

    def add_columns(self, n: int, **columns: list) -> None:
        """``n`` rows given column by column (lists of ``n`` values; columns left out are
        NULL): no dict per row, for many rows built at once."""
        for c, lst in self._cols.items():
            values = columns.get(c)
            lst.extend([None] * n if values is None else values)
        self.count += n
        if self.count >= self.limit:
            self.flush()

    def add_table(self, rows: pa.Table) -> None:
        """Rows already made as Arrow columns (the buffer's ``columns``, of their types)."""
        self._tables.append(rows.select(self.columns))
        self.count += rows.num_rows
        if self.count >= self.limit:
            self.flush()

    def flush(self) -> None:
        """Insert the waiting rows."""
        self.insert(self.take())

    def take(self) -> pa.Table | None:
        """The waiting rows as Arrow columns (those added one by one first), taken out of
        the buffer (None when there are none), for :meth:`insert` later: the columns can be
        built while ``con`` is busy."""
        if not self.count:
            return None
        tables = self._tables
        if self.count > sum(t.num_rows for t in tables):  # rows added one by one
            tables.insert(0, pa.table({c: arrow_array(v, self.types[c]) for c, v in self._cols.items()}))
        rows = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
        if self.source_id is not None:
            rows = rows.append_column("source_id", arrow_array([self.source_id] * self.count, self._source_id_type))
        self.total += self.count
        self._cols = {c: [] for c in self.columns}
        self._tables = []
        self.count = 0
        return rows

    def insert(self, rows: pa.Table | None) -> None:
        """Insert rows from :meth:`take` (nothing for None)."""
        if rows is not None:
            if self.ctx is not None:
                self.ctx.settle()
            insert_arrow(self.con, self.table, rows, self.select)


class Importer(Protocol):
    #: value of ``sources.format``
    format: str
    # An importer may also have ``memory_limit`` (a DuckDB size, ``"100MB"``): DuckDB's
    # memory limit is lowered to it (never raised) while a file is stored into a database
    # file, its COMMIT included (``ingest._ingest_with``); without it the store's own holds.

    def sniff(self, head: bytes, name: str) -> int:
        """How sure this importer is that it reads a file starting with ``head`` (0-100)."""

    def ingest(self, ctx: IngestContext) -> None:
        """Read ``ctx.file`` into the store; raise InputError when nothing usable is in it."""
