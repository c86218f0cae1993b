"""Where a Parquet dataset keeps what: directories, part-file names, ids and column types.

A dataset is a directory with one sub-directory per table of the schema, each
Hive-partitioned by run and format::

    DIR/<table>/run=<label>/format=<format>/part-<writer uuid>-<n>.parquet

Every writer names its files with its own UUID and writes them under a temporary name that
readers never match (``.part-*.parquet.tmp``), renaming them into place when complete, so
appenders never clash and readers never see half a file.  The ``sources`` part of a batch is
renamed last.  ``source_id`` is derived from the content hash (:func:`dataset_source_id`), so
independent writers agree on it without talking to each other.  The column types are those of
the DuckDB schema (``loganalyze/schema/*.sql``), defined once for both stores; only
``source_id`` widens to BIGINT, HUGEINT columns travel as DECIMAL(38,0) (Parquet has no
128-bit integer) and JSON columns as plain strings (:data:`STORED_AS`).
"""
from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

#: the directory name Hive and Spark give a NULL partition value
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
#: claims on content being written: DIR/_claims/<sha256> (see loganalyze.dataset.claims)
CLAIMS_DIR = "_claims"
#: the type of source_id in a dataset (ids are 63-bit hashes, see dataset_source_id)
SOURCE_ID_TYPE = "BIGINT"
#: how columns of these types are stored in Parquet: it has no 128-bit integer, and Spark
#: reads JSON-annotated strings only as plain strings
STORED_AS = {"HUGEINT": "DECIMAL(38,0)", "JSON": "VARCHAR"}
#: the table written last by each batch: a file's rows are all in place once its sources row is
SOURCES = "sources"
#: run metadata, one row per run label (schema/05_runs.sql): each writer of a run adds its own
#: row to the run's partition, and readers merge them (see loganalyze.dataset.reader)
RUNS = "runs"


class DatasetError(Exception):
    """A dataset problem worth one line to the user."""


@dataclass(frozen=True)
class Column:
    """One column of a schema table: its name and DuckDB type in the database."""

    name: str
    type: str

    @property
    def dataset_type(self) -> str:
        """The type the column has in the dataset (what readers cast to)."""
        if self.name == "source_id":
            return SOURCE_ID_TYPE
        return self.type

    @property
    def stored_type(self) -> str | None:
        """The type written to Parquet when it differs from :attr:`dataset_type`."""
        return STORED_AS.get(self.type)


@lru_cache(maxsize=1)
def schema_tables() -> dict[str, tuple[Column, ...]]:
    """Every base table of the schema (not ``meta``) with its columns, in schema order."""
    import duckdb

    from ..store import CONNECT_CONFIG, _schema_sql

    con = duckdb.connect(":memory:", config=CONNECT_CONFIG)
    try:
        con.execute(_schema_sql())
        rows = con.execute(
            """SELECT c.table_name, c.column_name, c.data_type
               FROM duckdb_columns() c JOIN duckdb_tables() t
                 ON t.table_oid = c.table_oid
               WHERE c.database_name = current_database() AND t.table_name <> 'meta'
               ORDER BY t.table_oid, c.column_index""").fetchall()
    finally:
        con.close()
    tables: dict[str, list[Column]] = {}
    for table, name, dtype in rows:
        tables.setdefault(table, []).append(Column(name, dtype))
    return {t: tuple(cols) for t, cols in tables.items()}


#: whitespace and SQL comments before a statement's first keyword
_LEADING_COMMENTS = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*", re.S)


def is_create_view(statement: str) -> bool:
    """Whether SQL ``statement`` creates a view, whatever whitespace and comments come before
    it (DuckDB 2.0.1's ``extract_statements`` keeps those of the text before a statement
    with it; 2.0.0 dropped them)."""
    head = _LEADING_COMMENTS.sub("", statement, count=1).upper()
    return head.startswith(("CREATE VIEW", "CREATE OR REPLACE VIEW"))


def schema_views_sql() -> list[str]:
    """The schema's CREATE VIEW statements, in order (they run over either store's tables)."""
    import duckdb

    from ..store import _schema_sql

    return [s.query for s in duckdb.extract_statements(_schema_sql()) if is_create_view(s.query)]


def dataset_source_id(sha256: str) -> int:
    """The source id a file has in every dataset: a positive 63-bit integer from its content
    hash (the first 8 bytes of the SHA-256), the same for every writer."""
    return int(sha256[:16], 16) & ((1 << 63) - 1) or 1


def partition_value(value: str | None) -> str:
    """A run label or format as a Hive partition directory value (percent-escaped as Hive and
    Spark do; NULL as Hive's default partition)."""
    if value is None:
        return NULL_PARTITION
    return quote(value, safe="") or NULL_PARTITION


def partition_dir(root: str | os.PathLike, table: str, run: str | None, fmt: str) -> Path:
    """``root/<table>/run=<run>/format=<fmt>``."""
    return Path(root) / table / f"run={partition_value(run)}" / f"format={partition_value(fmt)}"


def table_glob(root: str | os.PathLike, table: str) -> str:
    """The glob that matches every complete part file of ``table``."""
    return str(Path(root) / table / "*" / "*" / "*.parquet")


def has_parts(root: str | os.PathLike, table: str) -> bool:
    """Whether any complete part file of ``table`` exists."""
    return next(Path(root).glob(f"{table}/*/*/*.parquet"), None) is not None


class PartNamer:
    """Part-file names of one writer: ``part-<uuid>-<n>.parquet``, unique across writers."""

    def __init__(self) -> None:
        self.writer = uuid.uuid4().hex
        self._n = 0

    def next_name(self) -> str:
        self._n += 1
        return f"part-{self.writer}-{self._n:05d}.parquet"


def temp_name(final: Path) -> Path:
    """Where a part file is written before it is renamed to ``final`` (never matched by readers)."""
    return final.with_name(f".{final.name}.tmp")
