#!/bin/sh
# loganalyze in any CI: restore the runs database, ingest this job's logs as a new run with
# its metadata, check it against the last good run, publish the reports, save the database.
#
#   scripts/ci/loganalyze-ci.sh LOG_OR_DIR...
#
# Environment (all optional):
#   LOGANALYZE          the command to run                     (default: loganalyze)
#   LOGANALYZE_DB       the runs database used in the job      (default: loganalyze-runs.duckdb)
#   DB_RESTORE          database artefact to start from, if it exists (e.g. from a CI cache)
#   DB_SAVE             where to copy the database at the end (the artefact to keep)
#   RUN_LABEL           this run's label                       (default: ci-<UTC time>)
#   BASELINE            what to check against                  (default: @last-good)
#   REPORT_DIR          where the reports go                   (default: loganalyze-report)
#   LOGANALYZE_POLICY   a policy file for check (--policy)
#   LOGANALYZE_COMMIT, LOGANALYZE_BRANCH, LOGANALYZE_TAGS (key=value,...)
#                       run metadata (commit and branch are otherwise taken from the CI's
#                       variables, e.g. GITHUB_SHA / CI_COMMIT_SHA, or from git)
#   GITHUB_STEP_SUMMARY set by GitHub Actions: the Markdown report is appended to it
#
# Exit status: that of check (0 clean, 1 regression, 2 usage or input error); 0 on the first
# run, which has nothing to compare with.
set -eu

LOGANALYZE=${LOGANALYZE:-loganalyze}
DB=${LOGANALYZE_DB:-loganalyze-runs.duckdb}
RUN=${RUN_LABEL:-ci-$(date -u +%Y%m%dT%H%M%SZ)}
BASELINE=${BASELINE:-@last-good}
REPORT_DIR=${REPORT_DIR:-loganalyze-report}

if [ "$#" -eq 0 ]; then
    echo "usage: $0 LOG_OR_DIR..." >&2
    exit 2
fi
mkdir -p "$REPORT_DIR"

# 1. restore the database artefact
if [ -n "${DB_RESTORE:-}" ] && [ -f "$DB_RESTORE" ] && [ "$DB_RESTORE" != "$DB" ]; then
    cp "$DB_RESTORE" "$DB"
    echo "loganalyze-ci: restored $DB from $DB_RESTORE"
fi

# 2. ingest this job's logs as run $RUN (exit 1: some files failed, the others are in)
ingest_rc=0
$LOGANALYZE ingest --db "$DB" --run "$RUN" --quiet "$@" || ingest_rc=$?
if [ "$ingest_rc" -ge 2 ]; then
    echo "loganalyze-ci: nothing could be ingested" >&2
    exit 2
fi

# 3. check against the last good run (the first run has none)
runs=$($LOGANALYZE sql "SELECT count(DISTINCT run_label) FROM sources WHERE run_label IS NOT NULL" \
       --db "$DB" --format csv | tail -n 1)
rc=0
if [ "$runs" -lt 2 ]; then
    printf '**loganalyze: first run %s** - nothing to compare with yet; the next run is checked against it.\n' \
        "$RUN" > "$REPORT_DIR/report.md"
    cat "$REPORT_DIR/report.md"
else
    set -- check "$BASELINE" "$RUN" --db "$DB" \
        --markdown "$REPORT_DIR/report.md" --html "$REPORT_DIR/report.html" \
        --junit "$REPORT_DIR/junit.xml" --json "$REPORT_DIR/report.json"
    if [ -n "${LOGANALYZE_POLICY:-}" ]; then
        set -- "$@" --policy "$LOGANALYZE_POLICY"
    fi
    $LOGANALYZE "$@" || rc=$?
fi

# 4. the job summary
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$REPORT_DIR/report.md" ]; then
    cat "$REPORT_DIR/report.md" >> "$GITHUB_STEP_SUMMARY"
fi

# 5. save the database artefact (also after a regression: the verdict is kept with the run)
if [ -n "${DB_SAVE:-}" ] && [ "$DB_SAVE" != "$DB" ]; then
    cp "$DB" "$DB_SAVE"
    echo "loganalyze-ci: saved $DB to $DB_SAVE"
fi
exit "$rc"
