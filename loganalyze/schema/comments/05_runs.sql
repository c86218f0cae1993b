-- What each column of schema/05_runs.sql holds.  docs/schema.md's column tables are
-- generated from these comments (python -m loganalyze.schema.docs).

COMMENT ON TABLE runs IS 'One row per run label: when and where it was ingested, its git commit and branch, free-form tags, and the verdict of the last check with it as candidate';
COMMENT ON COLUMN runs.run_label IS 'The run label given to ingest (--run); sources.run_label refers to it';
COMMENT ON COLUMN runs.first_ingest_at IS 'When the first file of the run was ingested (UTC)';
COMMENT ON COLUMN runs.last_ingest_at IS 'When the last file of the run was ingested (UTC)';
COMMENT ON COLUMN runs.host IS 'Host name of the machine that ingested the run';
COMMENT ON COLUMN runs.git_commit IS 'Git commit the run was made from: --commit, else the CI environment (GITHUB_SHA, CI_COMMIT_SHA), else HEAD of the git checkout ingest ran in';
COMMENT ON COLUMN runs.git_branch IS 'Git branch of the run: --branch, else the CI environment, else the checked-out branch';
COMMENT ON COLUMN runs.tags IS 'Free-form key=value tags given with --tag (later values of a key replace earlier ones)';
COMMENT ON COLUMN runs.verdict IS 'Verdict of the last check with this run as candidate: pass, warn or fail; NULL when never checked';
COMMENT ON COLUMN runs.checked_against IS 'Label of the baseline of the last check with this run as candidate';
COMMENT ON COLUMN runs.checked_at IS 'When the last check with this run as candidate ran (UTC)';
