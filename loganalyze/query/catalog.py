"""What the database holds: files (sources), runs, skipped lines, and choosing among them.

Every function takes a DuckDB connection and returns ``(columns, rows)``; the
:class:`loganalyze.Database` methods wrap them (DataFrames out) and the CLI prints them.
"""
from __future__ import annotations

from .errors import QueryError
from .filters import source_filter

#: ``sources`` columns shown by default; ``SOURCE_COLUMNS_WIDE`` is every column
SOURCE_COLUMNS = ["source_id", "name", "format", "dialect", "library_version", "run_label", "lines_total",
                  "lines_parsed", "lines_non_verbose", "lines_skipped"]
SOURCE_COLUMNS_WIDE = ["source_id", "path", "name", "format", "dialect", "library_version", "isa", "runtime",
                       "run_label", "size_bytes", "sha256", "compression", "lines_total", "lines_parsed",
                       "lines_non_verbose", "lines_skipped", "crlf_lines", "ends_with_newline", "segments",
                       "warnings", "ingested_at"]


def _result(cur) -> tuple[list[str], list[tuple]]:
    return [d[0] for d in cur.description], cur.fetchall()


def sources(con, wide: bool = True, source_ids: list[int] | None = None, run: str | None = None):
    """One row per ingested file, in ingest order."""
    have = {r[0] for r in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = 'sources' "
        "AND database_name = current_database()").fetchall()}
    cols = [c for c in (SOURCE_COLUMNS_WIDE if wide else SOURCE_COLUMNS) if c in have]
    where, params = _filters(source_ids, run)
    return _result(con.execute(
        f"SELECT {', '.join(cols)} FROM sources {where} ORDER BY source_id", params))


def skipped(con, source_ids: list[int] | None = None, limit: int | None = None):
    """Lines (or events) that could not be used, with their position and reason."""
    where, params = _filters(source_ids, None, "k.")
    lim = f"LIMIT {int(limit)}" if limit is not None else ""
    return _result(con.execute(
        f"""SELECT k.source_id, s.name, k.line_no, k.reason, k.text FROM skipped_lines k
            JOIN sources s USING (source_id) {where} ORDER BY k.source_id, k.line_no {lim}""", params))


def runs(con):
    """One row per run label, oldest first: files, formats, library versions, first and last
    ingest time, host, git commit and branch, tags and the last check's verdict."""
    from .. import runmeta  # (socket, subprocess: not on the summary's path)

    return runmeta.runs_rows(con)


def run_labels(con) -> list[str]:
    from .. import runmeta

    return runmeta.run_labels(con)


def check_run(con, run: str | None) -> None:
    """Raise QueryError naming the known runs when ``run`` is not in the database."""
    if run is None:
        return
    labels = run_labels(con)
    if run not in labels:
        known = ", ".join(labels) if labels else "none: ingest with --run LABEL"
        raise QueryError(f"no such run: {run!r} (runs: {known})")


def resolve_sources(con, specs: list[str | int] | None) -> list[int] | None:
    """Source ids for ``--source`` values: a source_id, a file name or a path; QueryError when
    one names nothing (or a name names several files, which must then be chosen by id)."""
    if not specs:
        return None
    out: list[int] = []
    for spec in specs:
        text = str(spec).strip()
        if text.lstrip("-").isdigit():
            rows = con.execute("SELECT source_id FROM sources WHERE source_id = ?", [int(text)]).fetchall()
        else:
            rows = con.execute("SELECT source_id FROM sources WHERE name = ? OR path = ? ORDER BY source_id",
                               [text, text]).fetchall()
        if not rows:
            raise QueryError(f"no such source: {text!r} (see 'loganalyze sources')")
        if len(rows) > 1:
            ids = ", ".join(str(r[0]) for r in rows)
            raise QueryError(f"source {text!r} names {len(rows)} files (ids {ids}); choose one by id")
        out.append(rows[0][0])
    return sorted(set(out))


def source_tables(con) -> list[str]:
    """Every base table with a ``source_id`` column (what removing a file must clear)."""
    return [r[0] for r in con.execute(
        """SELECT DISTINCT c.table_name FROM duckdb_columns() c JOIN duckdb_tables() t
                  ON t.table_name = c.table_name AND t.database_name = c.database_name
                  AND t.schema_name = c.schema_name
           WHERE c.column_name = 'source_id' AND c.database_name = current_database()
             AND NOT t.temporary ORDER BY 1""").fetchall()]


def remove_run(con, label: str) -> int:
    """Delete every file of run ``label`` and all its rows (the caller holds the transaction).
    Returns the number of files removed."""
    from .. import runmeta

    check_run(con, label)
    ids = [r[0] for r in con.execute("SELECT source_id FROM sources WHERE run_label = ?", [label]).fetchall()]
    remove_sources(con, ids)
    runmeta.forget(con, label)
    return len(ids)


def remove_sources(con, ids: list[int]) -> None:
    if not ids:
        return
    id_list = ", ".join(str(int(i)) for i in ids)
    for table in source_tables(con):
        if table != "sources":
            con.execute(f'DELETE FROM "{table}" WHERE source_id IN ({id_list})')
    con.execute(f"DELETE FROM sources WHERE source_id IN ({id_list})")


def relabel_run(con, old: str, new: str) -> int:
    """Give the files of run ``old`` the label ``new``; returns how many files changed."""
    from .. import runmeta

    check_run(con, old)
    if not new.strip():
        raise QueryError("the new run label is empty")
    n = con.execute("SELECT count(*) FROM sources WHERE run_label = ?", [old]).fetchall()[0][0]
    con.execute("UPDATE sources SET run_label = ? WHERE run_label = ?", [new, old])
    runmeta.relabel(con, old, new)
    return n


def formats_present(con) -> list[str]:
    return [r[0] for r in con.execute("SELECT DISTINCT format FROM sources ORDER BY 1").fetchall()]


def _filters(source_ids, run, prefix: str = "") -> tuple[str, list]:
    where, params = source_filter(run, source_ids, prefix)
    return ("WHERE " + " AND ".join(where)) if where else "", params
