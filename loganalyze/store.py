"""The DuckDB store: schema, connections and one-transaction-per-file ingest.

Every importer writes into the shared tables (``sources``, ``skipped_lines``) plus its own
family's tables; the query layer reads the documented tables and views only.  The DDL lives
in ``loganalyze/schema/*.sql`` (one file per format family) and is documented in
docs/schema.md; keep the two in step.
"""
from __future__ import annotations

import os
import re
import threading
from contextlib import contextmanager, nullcontext
from pathlib import Path

DEFAULT_DB = "loganalyze.duckdb"
SCHEMA_VERSION = 1


class StoreError(Exception):
    """A database problem worth one line to the user."""


def default_db_path() -> str:
    return os.environ.get("LOGANALYZE_DB") or DEFAULT_DB


def _schema_sql() -> str:
    """Every ``schema/*.sql`` file in name order: one per format family, tables then views."""
    from importlib import resources

    files = sorted(
        (f for f in resources.files("loganalyze.schema").iterdir() if f.name.endswith(".sql")),
        key=lambda f: f.name,
    )
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


#: how long opening a database waits for another process's lock (seconds)
DEFAULT_WAIT_S = 60.0
#: DuckDB settings of every connection: never download or load an extension (a database
#: argument naming a SQLite or Postgres file must not make the engine reach for the network)
CONNECT_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


class Store:
    """One DuckDB database file.

    Opening waits up to ``wait`` seconds for a lock another process holds (an ingest running,
    or a reader while we want to write), calling ``on_wait(message)`` once when it starts
    waiting.  A file that is not a loganalyze database is refused, never changed.

    ``engine_only=True`` opens the connection through DuckDB's compiled module alone (see
    :func:`duckdb_engine`): for callers that only run SQL (``execute``/``fetchall``) and want
    to start fast; ``import duckdb`` still completes the connection's Python API later."""

    def __init__(self, path: str | os.PathLike | None = None, read_only: bool = False,
                 wait: float = DEFAULT_WAIT_S, on_wait=None, engine_only: bool = False):
        self.path = str(path or default_db_path())
        existed = self.path != ":memory:" and Path(self.path).exists()
        if read_only and self.path != ":memory:" and not existed:
            raise StoreError(f"{self.path}: no database here; run 'loganalyze ingest' first")
        if existed and not Path(self.path).is_file():
            raise StoreError(f"{self.path}: not a database file")
        self.con = _connect(self.path, read_only, wait, on_wait, engine_only)
        self.read_only = read_only
        #: the last COMMIT left partly filled row groups unmerged (:meth:`transaction`)
        self._unmerged = False
        if existed:
            self._check_ours()
        if not read_only:
            sweep_spill_files(self.path)
            self.con.execute(_schema_sql())
            self.con.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)]
            )

    def _check_ours(self) -> None:
        """Refuse a DuckDB file that holds other tables but not ours."""
        names = {r[0] for r in self.con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()").fetchall()}
        if names and not {"meta", "sources"} <= names:
            self.con.close()
            raise StoreError(f"{self.path}: not a loganalyze database (a DuckDB file with other tables)")

    def close(self) -> None:
        """Close the connection.  After a COMMIT that left partly filled row groups unmerged
        (a large file's), DuckDB's checkpoint at close leaves them too: it would merge them
        on one core, the very work the commit put off (0.38 s of a 500 MB trace's ingest,
        docs/benchmarks.md, "Twenty-fifth session"); the next commit that merges does."""
        if self._unmerged:
            try:
                self.con.execute("SET max_vacuum_tasks = 0")
            except duckdb_engine().Error:  # (a connection already closed, or an interrupt)
                pass
        self.con.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def transaction(self, merge_row_groups: bool = True):
        """All or nothing: an exception or an interrupt rolls everything back.

        ``merge_row_groups=False``: the checkpoint that follows a large COMMIT leaves the
        partly filled row groups as they are (see :func:`row_group_merges`)."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield self.con
        except BaseException:
            try:
                self.con.execute("ROLLBACK")
            except duckdb_engine().Error:  # already ended: an interrupt during COMMIT
                pass
            raise
        with row_group_merges(self.con, merge_row_groups):
            self.con.execute("COMMIT")
        self._unmerged = not merge_row_groups

    def next_source_id(self) -> int:
        return self.con.execute("SELECT nextval('source_ids')").fetchone()[0]

    def source_by_sha(self, sha256: str):
        """(source_id, path, run_label) of the source with this content hash, or None."""
        return self.con.execute(
            "SELECT source_id, path, run_label FROM sources WHERE sha256 = ?", [sha256]
        ).fetchone()

    def has_size(self, size: int) -> bool:
        return bool(self.con.execute("SELECT count(*) FROM sources WHERE size_bytes = ?", [size]).fetchone()[0])


@contextmanager
def row_group_merges(con, enabled: bool):
    """Inside the block, checkpoints merge partly filled row groups only when ``enabled``.

    A parallel insert leaves each thread's last row group partly filled, and the checkpoint
    after a large COMMIT merges them (DuckDB's vacuum), decompressing and compressing them
    again on one core: 0.3-0.4 s of the 500 MB trace ingest (docs/benchmarks.md, eleventh
    session).  Left unmerged, they are merged by the next checkpoint that does merge (any
    commit outside such a block).  The setting is the database instance's."""
    if enabled:
        yield
        return
    with temporary_setting(con, "max_vacuum_tasks", 0):
        yield


@contextmanager
def temporary_setting(con, name: str, value):
    """DuckDB's setting ``name`` (a number or a boolean; the database instance's: every
    connection sees it) set to ``value`` inside the block, then restored."""
    current = con.execute(f"SELECT current_setting('{name}')").fetchall()[0][0]
    con.execute(f"SET {name} = {value}")
    with restored_after(con, lambda c: c.execute(f"SET {name} = {current}")):
        yield


@contextmanager
def restored_after(con, restore):
    """Run ``restore(connection)`` (statements that put a setting back, or drop a working
    table) when the block ends, however it ends.  After an exception the error to see is the
    one raised, not the restore's: a failed statement aborted ``con``'s transaction, where a
    SET or a DROP fails too, so the restore runs on ``con`` where it can (outside a
    transaction), else on a connection of its own (a setting is the instance's; a table the
    aborted transaction made goes with its rollback), and a failure of both is let pass."""
    try:
        yield
    except BaseException:
        error = duckdb_engine().Error
        try:
            restore(con)
        except error:
            try:
                with con.cursor() as other:
                    restore(other)
            except error:
                pass
        raise
    restore(con)


def threads_at_most(con, n: int):
    """DuckDB's worker threads lowered to ``n`` inside the block (never raised), then
    restored: :func:`temporary_setting` when there are more."""
    current = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    return temporary_setting(con, "threads", int(n)) if current > n else nullcontext()


class ThreadCursors:
    """A cursor of ``con`` for each thread that asks (:meth:`get`), for queries that read
    no table (``try_cast``, ``hash``): a thread runs them without waiting for ``con``
    itself, busy on another thread (an insert), and outside its transaction.  Closed
    together (:meth:`close`)."""

    def __init__(self, con):
        self._con, self._lock, self._local, self._all = con, threading.Lock(), threading.local(), []

    def get(self):
        cursor = getattr(self._local, "cursor", None)
        if cursor is None:
            with self._lock:
                cursor = self._local.cursor = self._con.cursor()
                self._all.append(cursor)
        return cursor

    def close(self) -> None:
        with self._lock:
            for cursor in self._all:
                cursor.close()
            self._all.clear()
        self._local = threading.local()


def finish_results(con) -> None:
    """Finish a result ``execute()`` left partly fetched (``fetchone``): DuckDB 2 refuses a
    relation query (``con.sql``) on the connection until it is done."""
    complete = getattr(con, "complete", None)
    if complete is not None:
        complete()


#: DuckDB's spill files in ``<db>.tmp``: ``duckdb_temp_<pid>_...``, never removed once their
#: process was killed (DuckDB 1.x leaves them at the next open)
_SPILL_RE = re.compile(r"duckdb_temp_(\d+)_")


def sweep_spill_files(db_path: str) -> list[str]:
    """Remove the spill files a killed process left in DuckDB's temporary folder of
    ``db_path`` (``<db>.tmp``), and the folder once empty; the files removed."""
    from .tempfiles import pid_alive

    folder = db_path + ".tmp"
    if db_path == ":memory:" or not os.path.isdir(folder):
        return []
    removed = []
    for name in os.listdir(folder):
        m = _SPILL_RE.match(name)
        if m and int(m.group(1)) != os.getpid() and not pid_alive(int(m.group(1))):
            try:
                os.unlink(os.path.join(folder, name))
                removed.append(name)
            except OSError:
                pass
    try:
        os.rmdir(folder)
    except OSError:  # not empty: a live process spills there
        pass
    return removed


def duckdb_engine():
    """DuckDB's compiled engine module (``_duckdb``), or the ``duckdb`` package where a release
    has none.

    The package re-exports the engine's connection and error classes unchanged
    (``duckdb.Error is _duckdb.Error``) and adds a Python relational API on top (relations,
    expressions, ``con.sql``; DuckDB 2 also looks its own version up through
    ``importlib.metadata``): about 70 ms of a ``loganalyze summary`` call that runs plain SQL
    only.  ``import duckdb`` at any later time adds that API to connections already open."""
    try:
        import _duckdb as engine
    except ImportError:  # pragma: no cover - DuckDB releases before the top-level engine module
        import duckdb as engine
    return engine


def _connect(path: str, read_only: bool, wait: float, on_wait, engine_only: bool = False):
    import time

    if engine_only:
        duckdb = duckdb_engine()
    else:
        import duckdb

    deadline = time.monotonic() + max(0.0, wait)
    told = False
    while True:
        try:
            return duckdb.connect(path, read_only=read_only, config=CONNECT_CONFIG)
        except duckdb.IOException as exc:
            text = _one_line(exc)
            if "lock" not in text.lower():
                raise StoreError(f"{path}: {_not_ours(text)}") from None
            if time.monotonic() >= deadline:
                raise StoreError(f"{path}: the database is in use by another process (waited {wait:g} s; "
                                 "--wait SECONDS waits longer)") from None
            if on_wait and not told:
                on_wait(f"{path}: in use by another process; waiting up to {wait:g} s")
                told = True
            time.sleep(0.1)
        except duckdb.Error as exc:
            raise StoreError(f"{path}: {_not_ours(_one_line(exc))}") from None


def _not_ours(text: str) -> str:
    """DuckDB's reasons for refusing a file, as one line a user understands."""
    lower = text.lower()
    if "not a valid duckdb database" in lower or "sqlite" in lower or "extension" in lower:
        return "not a loganalyze database (not a DuckDB file)"
    return f"cannot open database: {text}"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
