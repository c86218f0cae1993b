"""Read a Parquet dataset through the same tables and views as a database (read-only).

:class:`DatasetStore` opens an in-memory DuckDB in which every table of the schema is a view
over ``read_parquet`` of its part files (cast to the schema's types; a table with no files is
an empty view of the right types), then runs the schema's own CREATE VIEW statements over
them, so the query layer cannot tell the two stores apart.  The shared dictionary
``onednn_shapes`` and ``sources`` are deduplicated on read (one row per key).  SQL can read
the dataset's directory only, and cannot write anywhere.
"""
from __future__ import annotations

import os
from pathlib import Path

from .layout import Column, DatasetError, has_parts, schema_tables, schema_views_sql, table_glob

#: tables whose rows may repeat across writers or partitions: the key that makes them one, and
#: which row wins (the run's most recent writer: ingest and check times are the latest)
DEDUPLICATED = {"onednn_shapes": ("shape_id", ""), "sources": ("source_id", ""),
                "runs": ("run_label", ", last_ingest_at DESC NULLS LAST, checked_at DESC NULLS LAST")}
#: small tables (a row per file or run) read into memory on open, so that they are tables as in
#: a database (code that asks duckdb_tables() what a store holds finds them)
MATERIALIZED = ("sources", "runs")
#: statements SQL over a dataset may not run (they write files)
REFUSED_STATEMENTS = ("COPY", "EXPORT", "COPY_DATABASE", "ATTACH", "DETACH", "LOAD")


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _table_view(root: Path, table: str, columns: tuple[Column, ...], con) -> str:
    """CREATE VIEW (or TABLE, for :data:`MATERIALIZED`) for one table: its part files cast to
    the schema's types; no rows and the right types when it has no part files."""
    kind = "TABLE" if table in MATERIALIZED else "VIEW"
    if not has_parts(root, table):
        cols = ", ".join(f'NULL::{c.dataset_type} AS "{c.name}"' for c in columns)
        return f'CREATE {kind} "{table}" AS SELECT {cols} WHERE false'
    scan = f"read_parquet({_sql_text(table_glob(root, table))}, hive_partitioning = false, union_by_name = true)"
    present = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {scan}").fetchall()}
    cols = ", ".join(
        (f'CAST("{c.name}" AS {c.dataset_type})' if c.name in present else f"NULL::{c.dataset_type}")
        + f' AS "{c.name}"' for c in columns)
    body = f"SELECT {cols} FROM {scan}"
    if table == "runs":  # a run began when its first writer began
        body = f"SELECT * REPLACE (min(first_ingest_at) OVER (PARTITION BY run_label) AS first_ingest_at) FROM ({body})"
    if table in DEDUPLICATED:
        key, order = DEDUPLICATED[table]
        body = f'SELECT DISTINCT ON ("{key}") * FROM ({body}) ORDER BY "{key}"{order}'
    return f'CREATE {kind} "{table}" AS {body}'


class DatasetStore:
    """A Parquet dataset opened for reading: ``con`` is an in-memory DuckDB connection with the
    schema's tables and views over the dataset's files."""

    read_only = True

    def __init__(self, root: str | os.PathLike):
        import duckdb

        from ..store import CONNECT_CONFIG

        self.path = str(root)
        base = Path(root)
        if not base.is_dir():
            raise DatasetError(f"{self.path}: no dataset here; run 'loganalyze ingest --to parquet {self.path} FILE' "
                               "or 'loganalyze export --parquet' first")
        if not has_parts(base, "sources"):
            raise DatasetError(f"{self.path}: not a loganalyze dataset (no sources/ part files)")
        self.con = duckdb.connect(":memory:", config=CONNECT_CONFIG)
        try:
            for table, columns in schema_tables().items():
                self.con.execute(_table_view(base, table, columns, self.con))
            self.con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
            for view in schema_views_sql():
                self.con.execute(view)
            # from here on SQL reads this directory only and changes no setting
            self.con.execute(f"SET allowed_directories = [{_sql_text(str(base.resolve()) + os.sep)}]")
            self.con.execute("SET enable_external_access = false")
        except duckdb.Error as exc:
            self.con.close()
            raise DatasetError(f"{self.path}: cannot read the dataset: {' '.join(str(exc).split())}") from None

    def check_sql(self, query: str) -> None:
        """Refuse statements that would write files (SQL over a dataset only reads)."""
        import duckdb

        for statement in duckdb.extract_statements(query):
            if statement.type.name in REFUSED_STATEMENTS:
                raise DatasetError(f"{self.path}: a dataset is read-only here ({statement.type.name} refused)")

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> "DatasetStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
