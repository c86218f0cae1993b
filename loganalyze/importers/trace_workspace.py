"""The private workspace where one trace file is loaded and processed before its rows are
copied into the store."""
from __future__ import annotations

import os
import uuid
from contextlib import ExitStack

from .. import tempfiles
from ..memory_limit import file_backed, keep_block_memory, lowered_memory_limit, release_cached_blocks
from ..store import temporary_setting
from .base import IngestContext, sql_string

#: DuckDB's memory while a trace file goes into a database file: this share of the file's
#: size, at least MEMORY_FLOOR.  The workspace is then a database file of its own (see
#: :class:`Workspace`), so the blocks of its tables leave memory at no cost; operators past
#: the limit spill to the temporary folder.  Measured on a 500 MB trace (docs/benchmarks.md,
#: "Seventeenth session"): under 128 MiB the flows' aggregate ran out of memory; 192 MiB
#: kept the peak RSS at 0.8x the file, 4% slower than 256 MiB (0.9x)
MEMORY_SHARE = 0.25
MEMORY_FLOOR = 192 << 20


def memory_budget(file_size: int) -> int:
    """DuckDB's memory limit (bytes) while a trace file of ``file_size`` bytes is processed."""
    return max(MEMORY_FLOOR, int(file_size * MEMORY_SHARE))


class Workspace:
    """A private database attached to the store's DuckDB instance, where one file is loaded
    and processed through a second connection (a cursor), then detached and deleted.

    Into a database file the workspace is a database file too, in a temporary folder: its
    tables are stored compressed, and DuckDB can drop their blocks from memory whenever the
    memory is wanted (:meth:`release_memory`), instead of holding every row, uncompressed,
    until the end (1.2x the size of a trace file).  Into an in-memory store it is in memory
    as well.

    DuckDB aborts a whole transaction when one statement fails, so the statement that may
    fail on odd input (``read_json``) must not run in the caller's transaction; it runs on
    the cursor, in its own autocommit transactions.  When every workspace table is ready,
    :meth:`publish` copies the finished rows into the store's tables inside the caller's
    transaction (its snapshot of the workspace starts at that first read, so it sees them).
    """

    def __init__(self, ctx: IngestContext):
        self.ctx = ctx
        self.dir = tempfiles.new_folder("trace")
        self.con = ctx.con.cursor()
        self._settings = ExitStack()
        self._store_database = self.con.execute("SELECT current_database()").fetchall()[0][0]
        self.database = f"loganalyze_ws_{uuid.uuid4().hex[:12]}"
        self.qualified = f"{self.database}.main"
        self._pending: list[tuple[str, str, dict[str, str]]] = []
        self._limit = None  # the limit in force when this workspace set it, else None
        try:
            self.on_disk = file_backed(self.con)
            budget = memory_budget(ctx.file.size)
            limit = f"{budget}B"
            if self.on_disk and self._settings.enter_context(lowered_memory_limit(self.con, limit)):
                self._limit = limit
                keep_block_memory(self.con, budget)
            path = os.path.join(self.dir, "workspace.duckdb") if self.on_disk else ":memory:"
            self.con.execute(f"ATTACH {sql_string(path)} AS {self.database}")
            self.con.execute(f"USE {self.qualified}")
        except BaseException:
            self.close()
            raise

    def release_memory(self) -> None:
        """Let DuckDB give back the memory of the blocks it keeps only as a cache (the
        workspace's tables read so far), before work in Python that needs the room."""
        if self.on_disk:
            release_cached_blocks(self.con, self._limit)

    def transfer(self, select_sql: str, table: str, **names: str) -> None:
        """Queue ``INSERT INTO table <select_sql>`` for :meth:`publish` (run in the order
        queued); ``{ws}.name`` in the SQL names a workspace table, ``{key}`` the text of
        ``names[key]``."""
        self._pending.append((table, select_sql, names))

    def publish(self) -> None:
        """Run the queued inserts, without keeping the rows in the order read (their
        sources are read on several threads at once; readers order by row or event number)."""
        main = self.ctx.con
        with temporary_setting(main, "preserve_insertion_order", False):
            for table, sql, names in self._pending:
                main.execute(f"INSERT INTO {table} BY NAME {sql.format(ws=self.qualified, **names)}")
        self._pending.clear()

    def close(self) -> None:
        for step in (lambda: self.con.execute(f'USE "{self._store_database}"'),
                     lambda: self.con.execute(f"DETACH DATABASE IF EXISTS {self.database}"),
                     self._settings.close, self.con.close):
            try:
                step()
            except Exception:  # noqa: BLE001 - cleanup must not hide the real error
                pass
        tempfiles.remove(self.dir)

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
