"""How an untrusted SQLite input is opened: read-only, bounded in time and cell size, only
its base tables seen, every identifier quoted.

A profile export is a file someone else wrote; a hostile one can define a view named like an
export table over an endless recursive CTE, a trigger, a generated column, a table name full
of quotes and semicolons, or a cell of a gigabyte.  :func:`open_readonly` returns a standard
``sqlite3`` connection that

- opens the file read-only (URI ``mode=ro``; ``immutable=1`` only for a file that is ours,
  such as a spooled temporary copy, or a WAL database no writer has open);
- holds one read transaction, so every statement sees the same committed state;
- refuses ATTACH, DETACH, recursive CTEs, every pragma but the column listing and
  extension loading (an authorizer) and attaches no database (``SQLITE_LIMIT_ATTACHED`` 0);
- fails a statement that runs longer than its time limit (a progress handler), and a cell
  longer than :data:`MAX_CELL_BYTES` (``SQLITE_LIMIT_LENGTH``).

:func:`base_tables` lists the ordinary tables (``sqlite_master`` rows of type ``table``, not
virtual) and their stored columns; views and triggers are never read.
"""
from __future__ import annotations

import os
import sqlite3
import time
from urllib.parse import quote

from ..grammars.nsys import quote_ident

#: the longest string or blob one cell may hold (a kernel name or NVTX text is far shorter)
MAX_CELL_BYTES = 16 * 1024 * 1024
#: every statement may take this long at least ...
STATEMENT_SECONDS = 60.0
#: ... and longer on a big file: one more second per this many bytes
SCAN_BYTES_PER_SECOND = 20_000_000
#: SQLite virtual machine instructions between two looks at the clock
PROGRESS_STEPS = 20_000

#: actions the authorizer refuses (the connection is read-only: writes fail anyway)
_DENIED = {sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH, sqlite3.SQLITE_RECURSIVE}
_ALLOWED_PRAGMAS = {"table_xinfo"}
_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}


def statement_seconds(size: int) -> float:
    """The time limit of one statement over a file of ``size`` bytes."""
    return max(STATEMENT_SECONDS, size / SCAN_BYTES_PER_SECOND)


class StatementClock:
    """The time limit of the statement in progress on one connection: :meth:`start` before
    a statement, :meth:`expired` from SQLite's progress handler."""

    def __init__(self, limit: float):
        self.limit = limit
        self.started = time.monotonic()

    def start(self) -> None:
        """A new statement begins now."""
        self.started = time.monotonic()

    def expired(self) -> int:
        """1 (SQLite interrupts the statement) once the statement has run past the limit."""
        return int(time.monotonic() - self.started > self.limit)

    def message(self, display: str, what: str) -> str:
        """The one-line error for a statement stopped by the limit."""
        return (f"{display}: {what} took longer than {self.limit:.0f} s; "
                "not an export loganalyze can read")


def _authorize(action: int, arg1, arg2, _db, _trigger) -> int:
    if action in _DENIED:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and str(arg1).lower() not in _ALLOWED_PRAGMAS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and str(arg2).lower() in _DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def sqlite_uri(path: str, ours: bool = False) -> str:
    """The read-only URI of ``path``: ``immutable=1`` (no locks, no journal look-up) only
    when the file is ``ours`` or a WAL database without its ``-wal`` file (no writer has it
    open); otherwise a plain read-only open that takes SQLite's shared lock."""
    base = "file:" + quote(os.path.abspath(path)) + "?mode=ro"
    if ours:
        return base + "&immutable=1"
    try:
        with open(path, "rb") as f:
            wal = f.read(20)[18:20] == b"\x02\x02"
    except OSError:
        wal = False
    if wal and not os.path.exists(path + "-wal"):
        return base + "&immutable=1"
    return base


def open_readonly(uri: str, clock: StatementClock) -> sqlite3.Connection:
    """A guarded read-only connection to ``uri`` (module docstring) with an open read
    transaction; sqlite3 errors pass through for the caller to word."""
    # check_same_thread=False: DuckDB pulls the Arrow stream from its own threads
    con = sqlite3.connect(uri, uri=True, timeout=0.5, check_same_thread=False, isolation_level=None)
    # text that is not UTF-8 (a damaged file, a hostile one) is read with replacement characters,
    # never raised as UnicodeDecodeError in the middle of a query
    con.text_factory = lambda raw: raw.decode("utf-8", "replace")
    try:
        if hasattr(con, "setlimit"):  # Python 3.11+
            con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_CELL_BYTES)
            con.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        con.set_authorizer(_authorize)
        con.set_progress_handler(clock.expired, PROGRESS_STEPS)
        con.execute("BEGIN")
        clock.start()
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()  # takes the shared lock now
    except BaseException:
        con.close()
        raise
    return con


def base_tables(con: sqlite3.Connection, clock: StatementClock) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    """The ordinary tables of ``con`` with their stored columns (generated and hidden
    columns left out), and the (type, name) of every view and trigger, which are not read."""
    clock.start()
    rows = con.execute("SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view', 'trigger')").fetchall()
    tables: dict[str, list[str]] = {}  # names used in SQL only through quote_ident
    others: list[tuple[str, str]] = []
    for kind, name, sql in rows:
        name = str(name)
        if kind != "table":
            others.append((kind, name))
            continue
        if name.startswith("sqlite_") or " ".join(str(sql or "").split()[:2]).upper() == "CREATE VIRTUAL":
            continue
        clock.start()
        cols = con.execute("SELECT name, hidden FROM pragma_table_xinfo(?)", (name,)).fetchall()
        tables[name] = [str(c) for c, hidden in cols if not hidden]
    return tables, others
