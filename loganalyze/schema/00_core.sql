-- Tables every importer shares. Documented in docs/schema.md.
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
    loganalyze_version VARCHAR,
    truncated        BOOLEAN
);
-- (databases made before the columns existed)
ALTER TABLE sources ADD COLUMN IF NOT EXISTS truncated BOOLEAN;
ALTER TABLE sources ADD COLUMN IF NOT EXISTS file_sha256 VARCHAR;
ALTER TABLE sources ADD COLUMN IF NOT EXISTS content_bytes BIGINT;
ALTER TABLE sources ADD COLUMN IF NOT EXISTS head_sha256 VARCHAR;

CREATE TABLE IF NOT EXISTS skipped_lines (
    source_id  INTEGER NOT NULL,
    line_no    BIGINT NOT NULL,
    reason     VARCHAR NOT NULL,
    text       VARCHAR
);
