"""The DuckDB store: schema, connections and one-transaction-per-file ingest.

Every importer writes into the shared tables (``sources``, ``skipped_lines``) plus its own
family's tables; the query layer reads the documented tables and views only.  The DDL lives
in ``loganalyze/schema/*.sql`` (one file per format family) and is documented in
docs/schema.md; keep the two in step.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
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


class Store:
    """One DuckDB database file."""

    def __init__(self, path: str | os.PathLike | None = None, read_only: bool = False):
        self.path = str(path or default_db_path())
        if read_only and self.path != ":memory:" and not Path(self.path).exists():
            raise StoreError(f"{self.path}: no database here; run 'loganalyze ingest' first")
        import duckdb

        try:
            self.con = duckdb.connect(self.path, read_only=read_only)
        except duckdb.IOException as exc:
            raise StoreError(f"{self.path}: cannot open database: {_one_line(exc)}") from None
        except duckdb.Error as exc:
            raise StoreError(f"{self.path}: cannot open database: {_one_line(exc)}") from None
        self.read_only = read_only
        if not read_only:
            self.con.execute(_schema_sql())
            self.con.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)]
            )

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def transaction(self):
        """All or nothing: an exception or an interrupt rolls everything back."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield self.con
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    def next_source_id(self) -> int:
        return self.con.execute("SELECT nextval('source_ids')").fetchone()[0]

    def source_by_sha(self, sha256: str):
        """(source_id, path, run_label) of the source with this content hash, or None."""
        return self.con.execute(
            "SELECT source_id, path, run_label FROM sources WHERE sha256 = ?", [sha256]
        ).fetchone()

    def has_size(self, size: int) -> bool:
        return bool(self.con.execute("SELECT count(*) FROM sources WHERE size_bytes = ?", [size]).fetchone()[0])


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
