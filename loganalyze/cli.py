"""The ``loganalyze`` command.

Exit codes: 0 success; 1 some inputs failed while others were ingested; 2 bad input or usage
(nothing ingested, unreadable database, bad SQL).
"""
from __future__ import annotations

import sys
from typing import List, Optional

import typer

from .store import DEFAULT_DB

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help=(
        "Offline analysis of ML backend logs and profiles with DuckDB.\n\n"
        "  loganalyze ingest mkldnn_verbose.log\n\n"
        "  loganalyze summary --by kind\n\n"
        "  loganalyze sql \"SELECT kind, sum(time_ms) FROM onednn_primitives GROUP BY kind\""
    ),
)

DB_HELP = f"DuckDB file (default: $LOGANALYZE_DB or ./{DEFAULT_DB})"
FORMAT_HELP = "Output format: table, csv, json or markdown"


def _fail(msg: str, code: int = 2) -> None:
    typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(code)


def _check_format(fmt: str) -> str:
    from .query.output import FORMATS

    if fmt not in FORMATS:
        _fail(f"unknown --format {fmt!r}; choose from {', '.join(FORMATS)}")
    return fmt


def _open(db: Optional[str], read_only: bool):
    from .store import Store, StoreError

    try:
        return Store(db, read_only=read_only)
    except StoreError as exc:
        _fail(str(exc))


@app.command()
def ingest(
    paths: List[str] = typer.Argument(..., help="Files, globs or directories to ingest"),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    run: Optional[str] = typer.Option(None, "--run", help="Run label stored with every file"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print errors only"),
):
    """Read log files into the database, one transaction per file.

    The format of each file is detected from its content; gzip is read transparently.
    A file already in the database (same sha256) is not ingested twice.

    Example: loganalyze ingest logs/ --run nightly-2026-11-22
    """
    from .ingest import ingest_paths

    store = _open(db, read_only=False)
    progress_factory = _progress_factory() if (sys.stderr.isatty() and not quiet) else None
    ok = failed = 0
    try:
        for res in ingest_paths(store, paths, run_label=run, progress_factory=progress_factory):
            if res.status == "error":
                failed += 1
                typer.echo(f"error: {res.message}", err=True)
                continue
            ok += 1
            if res.status == "duplicate":
                if not quiet:
                    typer.echo(f"skipped: {res.message}")
                continue
            for w in res.warnings:
                typer.echo(f"warning: {w}", err=True)
            if not quiet:
                s = res.source
                typer.echo(
                    f"ingested {res.path} as source {res.source_id}: {s.get('format')} "
                    f"[{s.get('dialect') or '?'}] {s.get('library_version') or ''}".rstrip()
                )
                unit = "events" if s.get("format") == "trace_json" else "lines"
                typer.echo(
                    f"  {unit} {s['lines_total']}: {s['lines_parsed']} parsed, "
                    f"{s['lines_non_verbose']} other, {s['lines_skipped']} skipped"
                )
                _print_kinds(store, res.source_id)
    except KeyboardInterrupt:
        typer.echo("interrupted: the file being read was rolled back", err=True)
        raise typer.Exit(130)
    finally:
        store.close()
    if failed and not ok:
        raise typer.Exit(2)
    if failed:
        raise typer.Exit(1)


def _print_kinds(store, source_id: int) -> None:
    from .query.onednn_summary import summary
    from .query.output import render

    cols, rows = summary(store.con, ["kind"], source_ids=[source_id])
    if not rows:
        return
    keep = ["kind", "exec_count", "exec_ms", "share_pct", "create_count", "create_ms"]
    idx = [cols.index(c) for c in keep]
    text = render(keep, [tuple(r[i] for i in idx) for r in rows], "table")
    typer.echo("\n".join("  " + line for line in text.splitlines()))


def _progress_factory():
    def factory(file):
        total = file.size if file.compression is None else None
        if not total or total < (64 << 20):
            return None
        state = {"last": -1}

        def report(done: int) -> None:
            pct = int(100 * done / total)
            if pct != state["last"]:
                state["last"] = pct
                sys.stderr.write(f"\r  reading {file.name}: {pct:3d}% ({done >> 20} MiB)")
                sys.stderr.flush()
                if pct >= 100:
                    sys.stderr.write("\n")

        return report

    return factory


@app.command("summary")
def summary_cmd(
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    by: str = typer.Option("kind", "--by", help="Group keys, comma-separated. oneDNN: kind, impl, prop, shape, engine, alg, dtype, mds, attrs, aux, source, run. GPU: kernel (with grid, block, device, stream), memcpy, api, nvtx (with domain), op (with shapes); source, run. Traces: op, category, thread, process, shape, dtype, step; framework tables (--family optable): op, section, tool, rank"),
    run: Optional[str] = typer.Option(None, "--run", help="Only files ingested with this run label"),
    top: Optional[int] = typer.Option(None, "--top", help="Only the N groups with the most time"),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
    family: Optional[str] = typer.Option(None, "--family", help="Which data to summarise when --by keys are shared (onednn, ...)"),
    benchdnn: bool = typer.Option(False, "--benchdnn", help="Print a benchdnn reproducer for each of the top oneDNN primitives"),
    wide: bool = typer.Option(False, "--wide", help="Every column in table and markdown output (csv and json always have every column)"),
    names: Optional[str] = typer.Option(None, "--names", help="GPU kernel/API names: raw (as the input stores them; default for kernels), demangled, short (no templates or parameters), mangled"),
):
    """Where the time went, grouped by --by keys and sorted by time.

    For oneDNN logs: exec and create joined per group, with exec count, total/avg/median/
    min/max (ms), share and cumulative share of exec time, create count and time, cache hits
    and misses, untimed execs, nested creates and check/dispatch diagnostics.

    Examples: loganalyze summary --by kind,impl --top 10;
    loganalyze summary --by kind --format json;  loganalyze summary --benchdnn --top 5
    """
    from .query import QueryError, family_for
    from .query import onednn_summary
    from .query.output import render

    _check_format(fmt)
    keys = [k.strip() for k in by.replace(" ", ",").split(",") if k.strip()]
    if not keys:
        _fail("--by needs at least one key")
    store = _open(db, read_only=True)
    try:
        if benchdnn:
            fam, keys = onednn_summary, onednn_summary.PRIMITIVE_KEYS
            top = top or 10
        else:
            fam = family_for(store.con, keys, family)
        cols, rows = fam.summary(store.con, keys, run=run, top=top, **({'names': names} if names else {}))
    except QueryError as exc:
        _fail(str(exc))
    finally:
        store.close()
    if benchdnn:
        from .query.benchdnn import benchdnn_line

        for r in rows:
            row = dict(zip(cols, r))
            if row["exec_count"] == 0 and row["create_count"] == 0:
                continue
            typer.echo(
                f"# {row['kind']}: {row['exec_count']} execs, {row['exec_ms']:.6g} ms ({row['share_pct']:.1f}%)"
            )
            typer.echo(
                benchdnn_line(row["engine"], row["kind"], row["impl"], row["prop"], row["mds"], row["attrs"],
                              row["aux"], row["shape"])
            )
        return
    if fmt in ("table", "markdown") and not wide and hasattr(fam, "COMPACT"):
        keep = [c for c in cols if c in keys or c in fam.COMPACT]
        idx = [cols.index(c) for c in keep]
        cols, rows = keep, [tuple(r[i] for i in idx) for r in rows]
    typer.echo(render(cols, rows, fmt))


@app.command()
def sql(
    query: str = typer.Argument(..., help="A SQL query over the documented tables and views"),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
):
    """Run read-only SQL over the database (see docs/schema.md).

    Example: loganalyze sql "SELECT kind, count(*), sum(time_ms) FROM onednn_primitives
    WHERE op_class = 'exec' GROUP BY kind ORDER BY 3 DESC"
    """
    import duckdb

    from .query.output import render

    _check_format(fmt)
    if not query.strip():
        _fail("empty query")
    store = _open(db, read_only=True)
    try:
        # read-only means no files written or read either (COPY ... TO, read_csv, ATTACH)
        store.con.execute("SET enable_external_access = false")
        cur = store.con.execute(query)
        if cur is None or cur.description is None:
            return
        cols = [d[0] for d in cur.description]
        rows = cur.fetchall()
    except duckdb.Error as exc:
        _fail(" ".join(str(exc).split()))
    finally:
        store.close()
    typer.echo(render(cols, rows, fmt))


@app.command()
def sources(
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
):
    """List the files in the database with their format, dialect and line counts."""
    from .query.output import render

    _check_format(fmt)
    store = _open(db, read_only=True)
    try:
        wide = fmt != "table"
        cols = (
            "source_id, path, name, format, dialect, library_version, isa, runtime, run_label, size_bytes, "
            "sha256, compression, lines_total, lines_parsed, lines_non_verbose, lines_skipped, crlf_lines, "
            "ends_with_newline, segments, warnings, ingested_at"
            if wide
            else "source_id, name, format, dialect, library_version, run_label, lines_total, lines_parsed, "
            "lines_non_verbose, lines_skipped"
        )
        cur = store.con.execute(f"SELECT {cols} FROM sources ORDER BY source_id")
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
    finally:
        store.close()
    typer.echo(render(names, rows, fmt))


@app.command()
def skipped(
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    source: Optional[int] = typer.Option(None, "--source", help="Only this source_id"),
    limit: int = typer.Option(50, "--limit", help="At most this many lines"),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
):
    """Show skipped input lines with their line number and reason."""
    from .query.output import render

    _check_format(fmt)
    store = _open(db, read_only=True)
    try:
        where = "WHERE k.source_id = ?" if source is not None else ""
        params = [source] if source is not None else []
        cur = store.con.execute(
            f"""SELECT k.source_id, s.name, k.line_no, k.reason, k.text FROM skipped_lines k
                JOIN sources s USING (source_id) {where} ORDER BY k.source_id, k.line_no LIMIT {int(limit)}""",
            params,
        )
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
    finally:
        store.close()
    typer.echo(render(names, rows, fmt))


@app.command()
def export(
    chrome_trace: Optional[str] = typer.Option(None, "--chrome-trace", help="Write a trace-event JSON file (.gz: compressed; '-': stdout)"),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    source: Optional[List[int]] = typer.Option(None, "--source", help="Only this source_id (repeatable)"),
    run: Optional[str] = typer.Option(None, "--run", help="Only files ingested with this run label"),
    no_onednn: bool = typer.Option(False, "--no-onednn", help="Leave oneDNN verbose logs out"),
):
    """Export a timeline of what the database holds, to open in Perfetto UI or chrome://tracing.

    Trace files are written back event by event; oneDNN verbose logs with timestamps
    (ONEDNN_VERBOSE_TIMESTAMP=1) become one complete event per timed exec/create line.

    Example: loganalyze export --chrome-trace timeline.json.gz
    """
    from .export import export_chrome_trace, open_output

    if not chrome_trace:
        _fail("choose an export format: --chrome-trace FILE")
    store = _open(db, read_only=True)
    try:
        try:
            out = open_output(chrome_trace)
        except OSError as exc:
            _fail(f"{chrome_trace}: cannot write: {exc.strerror or exc}")
        with out:
            stats = export_chrome_trace(store.con, out, source_ids=source or None, run=run, onednn=not no_onednn)
    finally:
        store.close()
    if not stats.sources:
        _fail("nothing to export: no trace events or timestamped oneDNN verbose lines"
              + (" for the chosen sources" if source or run else ""))
    if chrome_trace != "-":
        typer.echo(f"wrote {chrome_trace}: {stats.events} trace events and {stats.onednn_events} oneDNN events "
                   f"from {len(stats.sources)} file(s)", err=True)


from . import cli_report  # noqa: E402  (compare, check, trend)

cli_report.register(app)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover
        sys.stderr.write("interrupted\n")
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()
