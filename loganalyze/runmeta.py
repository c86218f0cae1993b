"""Run metadata: who ingested a run, where, from which commit, with which tags and verdict.

One row per run label in the ``runs`` table (``schema/05_runs.sql``).  Ingest calls
:func:`record` once per run label per ingest call; ``check`` calls :func:`record_verdict`.
:func:`runs_table` joins the table with what the ``sources`` of each run say (files,
formats, library versions from the logs' headers)::

    from loganalyze import runmeta
    runmeta.record(con, "nightly-42", tags={"gpu": "a100"})
    runmeta.runs_table(con)     # pandas.DataFrame, one row per run, oldest first
"""
from __future__ import annotations

import os
import socket
import subprocess
from datetime import datetime, timezone
from typing import Mapping

#: environment variables CI systems set, first found wins
COMMIT_ENV = ("LOGANALYZE_COMMIT", "GITHUB_SHA", "CI_COMMIT_SHA", "GIT_COMMIT", "BUILD_SOURCEVERSION")
BRANCH_ENV = ("LOGANALYZE_BRANCH", "GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME", "GIT_BRANCH",
              "BUILD_SOURCEBRANCHNAME")


#: tags given by the environment (``key=value,key=value``), under the explicit ones
TAGS_ENV = "LOGANALYZE_TAGS"


class TagError(ValueError):
    """A ``--tag`` that is not ``key=value``."""


def parse_tags(items: list[str] | None) -> dict[str, str]:
    """``["gpu=a100", "os=linux"]`` -> ``{"gpu": "a100", "os": "linux"}``; raises :class:`TagError`."""
    tags: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise TagError(f"--tag {item!r}: expected key=value")
        tags[key.strip()] = value.strip()
    return tags


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout.strip()
    return text if out.returncode == 0 and text else None


def _from_env(names: tuple[str, ...]) -> str | None:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def detect_commit() -> str | None:
    """The commit from the CI environment, else HEAD of the git checkout we run in."""
    return _from_env(COMMIT_ENV) or _git("rev-parse", "HEAD")


def detect_branch() -> str | None:
    """The branch from the CI environment, else the checked-out branch (None when detached)."""
    branch = _from_env(BRANCH_ENV) or _git("rev-parse", "--abbrev-ref", "HEAD")
    return None if branch == "HEAD" else branch


def _utc_now() -> datetime:
    """Now in UTC, as the naive timestamp the ``runs`` columns hold."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def record(con, label: str | None, commit: str | None = None, branch: str | None = None,
           tags: Mapping[str, str] | None = None) -> None:
    """Create or update the ``runs`` row of ``label`` (nothing for an unlabelled ingest).

    Commit and branch not given are detected (:func:`detect_commit`, :func:`detect_branch`)
    when the run is new, and so are ``$LOGANALYZE_TAGS`` (``key=value,...``, under the tags
    given); given commit and branch replace stored ones; tags are merged, new values win.
    """
    if label is None:
        return
    row = con.execute("SELECT tags FROM runs WHERE run_label = ?", [label]).fetchall()
    if not row:
        env_tags = os.environ.get(TAGS_ENV, "").strip()
        tags = {**parse_tags([t for t in env_tags.split(",") if t.strip()]), **(tags or {})}
        keys = sorted(tags or {})
        con.execute(
            "INSERT INTO runs (run_label, first_ingest_at, last_ingest_at, host, git_commit, git_branch, tags) "
            "VALUES (?, ?, ?, ?, ?, ?, MAP(?::VARCHAR[], ?::VARCHAR[]))",
            [label, _utc_now(), _utc_now(), socket.gethostname(), commit or detect_commit(), branch or detect_branch(),
             keys, [tags[k] for k in keys]],
        )
        return
    merged = dict(row[0][0] or {})
    merged.update(tags or {})
    keys = sorted(merged)
    con.execute(
        "UPDATE runs SET last_ingest_at = ?, git_commit = coalesce(?, git_commit), "
        "git_branch = coalesce(?, git_branch), tags = MAP(?::VARCHAR[], ?::VARCHAR[]) WHERE run_label = ?",
        [_utc_now(), commit, branch, keys, [merged[k] for k in keys], label],
    )


def record_verdict(con, label: str, verdict: str, baseline: str | None) -> None:
    """Store the verdict (pass, warn, fail) of a check with ``label`` as the candidate."""
    record(con, label)
    con.execute(
        "UPDATE runs SET verdict = ?, checked_against = ?, checked_at = ? WHERE run_label = ?",
        [verdict, baseline, _utc_now(), label],
    )


def forget(con, label: str) -> None:
    """Delete the ``runs`` row of ``label`` (``runs rm``; call it in the same transaction)."""
    con.execute("DELETE FROM runs WHERE run_label = ?", [label])


def relabel(con, old: str, new: str) -> None:
    """Move the ``runs`` row of ``old`` to ``new`` (``runs relabel``); when ``new`` has a row
    already, that row stays and takes the tags ``old`` had and it lacked."""
    rows = dict(con.execute("SELECT run_label, tags FROM runs WHERE run_label IN (?, ?)", [old, new]).fetchall())
    if old not in rows:
        return
    if new not in rows:
        con.execute("UPDATE runs SET run_label = ? WHERE run_label = ?", [new, old])
        return
    merged = {**dict(rows[old] or {}), **dict(rows[new] or {})}
    keys = sorted(merged)
    con.execute("UPDATE runs SET tags = MAP(?::VARCHAR[], ?::VARCHAR[]) WHERE run_label = ?",
                [keys, [merged[k] for k in keys], new])
    forget(con, old)


#: one row per run label: the runs row (if any) and what its sources say
RUNS_SQL = """
WITH src AS (
    SELECT run_label, count(*) AS files,
           string_agg(DISTINCT format, ',' ORDER BY format) AS formats,
           string_agg(DISTINCT library_version, ',' ORDER BY library_version) AS library_versions,
           min(ingested_at) AS first_ingest, max(ingested_at) AS last_ingest
    FROM sources WHERE run_label IS NOT NULL GROUP BY run_label
)
SELECT coalesce(r.run_label, src.run_label) AS run_label,
       coalesce(src.files, 0) AS files, src.formats, src.library_versions,
       least(r.first_ingest_at, src.first_ingest) AS first_ingest_at,
       greatest(r.last_ingest_at, src.last_ingest) AS last_ingest_at,
       r.host, r.git_commit, r.git_branch,
       r.tags,
       r.verdict, r.checked_against
FROM runs r FULL OUTER JOIN src ON src.run_label = r.run_label
ORDER BY first_ingest_at NULLS LAST, run_label
"""


def format_tags(tags) -> str | None:
    """``{"os": "linux", "gpu": "a100"}`` -> ``"gpu=a100,os=linux"`` (None when empty)."""
    if isinstance(tags, dict) and set(tags) == {"key", "value"} and isinstance(tags["key"], list):
        tags = dict(zip(tags["key"], tags["value"]))  # how some pandas versions hand a MAP over
    if not isinstance(tags, dict) or not tags:
        return None
    pairs = tags
    return ",".join(f"{k}={pairs[k]}" for k in sorted(pairs))


def _runs_sql(con) -> str:
    """:data:`RUNS_SQL`, or its sources-only part for a database made before the runs table
    existed (opened read-only, its schema was never updated)."""
    has_runs = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'runs' AND schema_name = current_schema()"
    ).fetchall()[0][0]
    if has_runs:
        return RUNS_SQL
    return RUNS_SQL.replace(
        "FROM runs r FULL OUTER JOIN src", "FROM (SELECT NULL::VARCHAR AS run_label, NULL::TIMESTAMP AS "
        "first_ingest_at, NULL::TIMESTAMP AS last_ingest_at, NULL::VARCHAR AS host, NULL::VARCHAR AS git_commit, "
        "NULL::VARCHAR AS git_branch, NULL::MAP(VARCHAR, VARCHAR) AS tags, NULL::VARCHAR AS verdict, "
        "NULL::VARCHAR AS checked_against WHERE false) r FULL OUTER JOIN src")


def runs_rows(con) -> tuple[list[str], list[tuple]]:
    """Every run, oldest first: column names and rows (see :data:`RUNS_SQL` for the columns;
    ``tags`` as ``key=value,...`` text sorted by key)."""
    cur = con.execute(_runs_sql(con))
    cols = [d[0] for d in cur.description]
    at = cols.index("tags")
    return cols, [r[:at] + (format_tags(r[at]),) + r[at + 1:] for r in cur.fetchall()]


def runs_table(con):
    """:func:`runs_rows` as a pandas DataFrame."""
    import pandas as pd

    cols, rows = runs_rows(con)
    return pd.DataFrame.from_records(rows, columns=cols)


def run_labels(con) -> list[str]:
    """Run labels, oldest first (the order trends and ``@previous`` use)."""
    return [r[0] for r in con.execute(f"SELECT run_label FROM ({_runs_sql(con)})").fetchall()]


def last_good(con, exclude: str | None = None) -> str | None:
    """The newest run other than ``exclude`` whose last check did not fail (unchecked runs count
    as good: the first run of a project has no check)."""
    rows = con.execute(f"SELECT run_label, verdict FROM ({_runs_sql(con)})").fetchall()
    good = [label for label, verdict in rows if label != exclude and verdict != "fail"]
    return good[-1] if good else None
