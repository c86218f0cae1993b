"""The DuckDB store: schema, connections and one-transaction-per-file ingest.

Every importer writes into the shared tables (``sources``, ``skipped_lines``) plus its own
family's tables; the query layer reads the documented tables and views only.  The schema is
documented in docs/schema.md; keep the two in step.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import duckdb

DEFAULT_DB = "loganalyze.duckdb"
SCHEMA_VERSION = 1


class StoreError(Exception):
    """A database problem worth one line to the user."""


def default_db_path() -> str:
    return os.environ.get("LOGANALYZE_DB") or DEFAULT_DB


SCHEMA = """
CREATE SEQUENCE IF NOT EXISTS source_ids START 1;

CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);

CREATE TABLE IF NOT EXISTS sources (
    source_id        INTEGER PRIMARY KEY,
    path             VARCHAR NOT NULL,
    name             VARCHAR NOT NULL,
    size_bytes       BIGINT NOT NULL,
    sha256           VARCHAR NOT NULL UNIQUE,
    compression      VARCHAR,
    format           VARCHAR NOT NULL,
    dialect          VARCHAR,
    library_version  VARCHAR,
    isa              VARCHAR,
    runtime          VARCHAR,
    run_label        VARCHAR,
    lines_total      BIGINT,
    lines_parsed     BIGINT,
    lines_non_verbose BIGINT,
    lines_skipped    BIGINT,
    crlf_lines       BIGINT,
    ends_with_newline BOOLEAN,
    segments         INTEGER,
    warnings         VARCHAR[],
    ingested_at      TIMESTAMP DEFAULT current_timestamp,
    loganalyze_version VARCHAR
);

CREATE TABLE IF NOT EXISTS skipped_lines (
    source_id  INTEGER NOT NULL,
    line_no    BIGINT NOT NULL,
    reason     VARCHAR NOT NULL,
    text       VARCHAR
);

CREATE TABLE IF NOT EXISTS onednn_shapes (
    shape_id       UBIGINT PRIMARY KEY,
    key            VARCHAR,
    marker         VARCHAR,
    version_token  VARCHAR,
    component      VARCHAR,
    operation      VARCHAR,
    op_class       VARCHAR,
    layout         VARCHAR,
    engine         VARCHAR,
    kind           VARCHAR,
    impl           VARCHAR,
    prop_kind      VARCHAR,
    mds            VARCHAR,
    attrs          VARCHAR,
    aux            VARCHAR,
    problem        VARCHAR,
    alg            VARCHAR,
    dtype          VARCHAR,
    dims           MAP(VARCHAR, VARCHAR),
    md_list        STRUCT(arg VARCHAR, dt VARCHAR, props VARCHAR, format_kind VARCHAR,
                          tag VARCHAR, strides VARCHAR, flags VARCHAR, extra VARCHAR)[],
    info_kind      VARCHAR,
    detail         VARCHAR,
    timed          BOOLEAN
);

CREATE TABLE IF NOT EXISTS onednn_events (
    source_id  INTEGER NOT NULL,
    line_no    BIGINT NOT NULL,
    shape_id   UBIGINT NOT NULL,
    ts_ms      DOUBLE,
    time_ms    DOUBLE
);

CREATE TABLE IF NOT EXISTS onednn_segments (
    source_id        INTEGER NOT NULL,
    segment          INTEGER NOT NULL,
    first_line       BIGINT NOT NULL,
    last_line        BIGINT NOT NULL,
    library_version  VARCHAR,
    isa              VARCHAR,
    runtime          VARCHAR,
    templates        VARCHAR[]
);
"""

VIEWS = """
CREATE OR REPLACE VIEW onednn AS
SELECT e.source_id, src.run_label, src.name AS source_name, e.line_no, e.ts_ms, e.time_ms,
       s.op_class, s.operation, s.marker, s.version_token,
       coalesce(nullif(s.component, ''), 'primitive') AS component,
       s.layout, s.engine, s.kind, s.impl, s.prop_kind, s.mds, s.attrs, s.aux, s.problem,
       s.alg, s.dtype, s.dims, s.info_kind, s.detail, s.shape_id
FROM onednn_events e
JOIN onednn_shapes s USING (shape_id)
JOIN sources src USING (source_id);

CREATE OR REPLACE VIEW onednn_primitives AS
SELECT * FROM onednn
WHERE component = 'primitive'
  AND op_class IN ('exec', 'create', 'create_nested', 'check', 'dispatch');

CREATE OR REPLACE VIEW onednn_info AS
SELECT source_id, run_label, source_name, line_no, component, info_kind, detail
FROM onednn WHERE op_class = 'info';
"""


class Store:
    """One DuckDB database file."""

    def __init__(self, path: str | os.PathLike | None = None, read_only: bool = False):
        self.path = str(path or default_db_path())
        if read_only and self.path != ":memory:" and not Path(self.path).exists():
            raise StoreError(f"{self.path}: no database here; run 'loganalyze ingest' first")
        try:
            self.con = duckdb.connect(self.path, read_only=read_only)
        except duckdb.IOException as exc:
            raise StoreError(f"{self.path}: cannot open database: {_one_line(exc)}") from None
        except duckdb.Error as exc:
            raise StoreError(f"{self.path}: cannot open database: {_one_line(exc)}") from None
        self.read_only = read_only
        if not read_only:
            self.con.execute(SCHEMA)
            self.con.execute(VIEWS)
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
        return self.con.execute(
            "SELECT source_id, path FROM sources WHERE sha256 = ?", [sha256]
        ).fetchone()

    def has_size(self, size: int) -> bool:
        return bool(self.con.execute("SELECT count(*) FROM sources WHERE size_bytes = ?", [size]).fetchone()[0])


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
