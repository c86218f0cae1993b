"""The private workspace where one trace file is loaded and processed before its rows are
copied into the store."""
from __future__ import annotations

import uuid
from contextlib import ExitStack

from .. import tempfiles
from ..memory_limit import file_backed, lowered_memory_limit
from ..store import temporary_setting
from .base import IngestContext

#: DuckDB's memory while a trace file is processed into a database file: this share of the
#: file's size, at least MEMORY_FLOOR; past it the workspace tables and the rows written
#: spill to the database's temporary folder.  Measured on a 500 MB trace (2.5 M events):
#: a 256 MiB limit halved the peak RSS but cost ~40% more CPU in spilling; at 1 GiB the
#: CPU time is unchanged and the peak RSS 26% lower (docs/benchmarks.md, "Trace JSON")
MEMORY_SHARE = 0.5
MEMORY_FLOOR = 1 << 30


def memory_budget(file_size: int) -> int:
    """DuckDB's memory limit (bytes) while a trace file of ``file_size`` bytes is processed."""
    return max(MEMORY_FLOOR, int(file_size * MEMORY_SHARE))


class Workspace:
    """A private schema in an in-memory database attached to the store's DuckDB instance,
    where one file is loaded and processed through a second connection (a cursor).

    DuckDB aborts a whole transaction when one statement fails, so the statement that may
    fail on odd input (``read_json``) must not run in the caller's transaction; it runs on
    the cursor, in its own autocommit transactions.  When every workspace table is ready,
    :meth:`publish` copies the finished rows into the store's tables inside the caller's
    transaction (its snapshot of the workspace starts at that first read, so it sees them).
    """

    DATABASE = "loganalyze_ws"

    def __init__(self, ctx: IngestContext):
        self.ctx = ctx
        self.dir = tempfiles.new_folder("trace")
        self.con = ctx.con.cursor()
        self._settings = ExitStack()
        if file_backed(self.con):
            self._settings.enter_context(lowered_memory_limit(self.con, f"{memory_budget(ctx.file.size)}B"))
        self.con.execute(f"ATTACH IF NOT EXISTS ':memory:' AS {self.DATABASE}")
        # schemas left behind by files whose transaction was rolled back
        for (schema,) in self.con.execute(
                f"SELECT schema_name FROM duckdb_schemas() WHERE database_name = '{self.DATABASE}' "
                "AND schema_name LIKE 'file_%'").fetchall():
            self.con.execute(f"DROP SCHEMA IF EXISTS {self.DATABASE}.{schema} CASCADE")
        self.schema = f"file_{uuid.uuid4().hex[:12]}"
        self.qualified = f"{self.DATABASE}.{self.schema}"
        self.con.execute(f"CREATE SCHEMA {self.qualified}")
        self.con.execute(f"USE {self.qualified}")
        self._pending: list[tuple[str, str, dict[str, str]]] = []

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
        for step in (lambda: self.con.execute(f"DROP SCHEMA IF EXISTS {self.qualified} CASCADE"),
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
