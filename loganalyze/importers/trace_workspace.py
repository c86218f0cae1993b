"""The private workspace where one trace file is loaded and processed before its rows are
copied into the store."""
from __future__ import annotations

import uuid

from .. import tempfiles
from .base import IngestContext


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
        self._pending: list[tuple[str, str]] = []

    def transfer(self, select_sql: str, table: str) -> None:
        """Queue ``INSERT INTO table <select_sql>`` for :meth:`publish`; ``{ws}.name`` in the
        SQL names a workspace table."""
        self._pending.append((table, select_sql))

    def publish(self) -> None:
        main = self.ctx.con
        for table, sql in self._pending:
            main.execute(f"INSERT INTO {table} BY NAME {sql.format(ws=self.qualified)}")
        self._pending.clear()

    def close(self) -> None:
        try:
            self.con.execute(f"DROP SCHEMA IF EXISTS {self.qualified} CASCADE")
            self.con.close()
        except Exception:  # noqa: BLE001 - cleanup must not hide the real error
            pass
        tempfiles.remove(self.dir)

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
