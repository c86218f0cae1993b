-- Run metadata: one row per run label, written by every ingest with a run label
-- (loganalyze/runmeta.py) and by `check` (the verdict).  Documented in docs/schema.md.
CREATE TABLE IF NOT EXISTS runs (
    run_label        VARCHAR PRIMARY KEY,
    first_ingest_at  TIMESTAMP,
    last_ingest_at   TIMESTAMP,
    host             VARCHAR,
    git_commit       VARCHAR,
    git_branch       VARCHAR,
    tags             MAP(VARCHAR, VARCHAR),
    verdict          VARCHAR,
    checked_against  VARCHAR,
    checked_at       TIMESTAMP
);
