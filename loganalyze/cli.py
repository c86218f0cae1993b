"""The ``loganalyze`` command: a thin shell over :class:`loganalyze.Database`.

Exit codes: 0 success; 1 some inputs failed while others were ingested; 2 bad input or usage
(nothing ingested, unreadable database, no such run or source, bad SQL); 130 interrupted.
Only typer is imported at start-up; each command imports what it needs.
"""
# (no ``from __future__ import annotations``: typer reads every command's annotations at each
# start, and string annotations cost it an eval each)

import os
import sys
import threading
from contextlib import contextmanager
from typing import Iterator, List, Optional, Tuple

import typer

from .cli_report import DATASET_HELP
from .version import __version__

DEFAULT_DB = "loganalyze.duckdb"

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help=(
        "Offline analysis of ML backend logs and profiles with DuckDB.\n\n"
        "  loganalyze ingest mkldnn_verbose.log trace.json.gz --run nightly-42\n\n"
        "  loganalyze summary --by kind\n\n"
        "  loganalyze sql \"SELECT kind, sum(time_ms) FROM onednn_primitives GROUP BY kind\""
    ),
)
runs_app = typer.Typer(help="Runs (ingest --run LABEL): list, remove, relabel.", no_args_is_help=False)
app.add_typer(runs_app, name="runs")

DB_HELP = f"DuckDB file (default: $LOGANALYZE_DB or ./{DEFAULT_DB})"
FORMAT_HELP = "Output format: table, csv, json or markdown"
SOURCE_HELP = "Only this file: a source_id, file name or path (repeatable)"
FORMATS = ("table", "csv", "json", "markdown")
WAIT_HELP = "Seconds to wait while another process holds the database"
WAIT_DEFAULT = 60.0


def _version(value: bool) -> None:
    if value:
        typer.echo(f"loganalyze {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit")) -> None:
    """Offline analysis of ML backend logs and profiles with DuckDB."""


def _fail(msg: str, code: int = 2):
    typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(code)


def _check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        _fail(f"unknown --format {fmt!r}; choose from {', '.join(FORMATS)}")
    return fmt


def _open(db: Optional[str], read_only: bool, wait: float = WAIT_DEFAULT, dataset: Optional[str] = None):
    from .api import LoganalyzeError, connect

    try:
        if dataset is not None:
            if db is not None:
                _fail("choose --db or --dataset, not both")
            return connect(dataset=dataset)
        return connect(db, read_only=read_only, wait=wait, on_wait=lambda msg: typer.echo(msg, err=True))
    except LoganalyzeError as exc:
        _fail(str(exc))


def _open_behind(db: Optional[str], wait: float):
    """:func:`_open` for writing, on a helper thread: its future (``result()`` gives the
    database, or raises what the open raised: a failed open is still one line and exit 2)."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="loganalyze-open")
    try:
        return pool.submit(_open, db, False, wait)
    finally:
        pool.shutdown(wait=False)


@contextmanager
def _database(db: Optional[str], wait: float, read_only: bool = True, dataset: Optional[str] = None) -> Iterator:
    """The database (or dataset) for one command: a LoganalyzeError is one line and exit 2;
    always closed."""
    from .api import LoganalyzeError

    database = _open(db, read_only=read_only, wait=wait, dataset=dataset)
    try:
        yield database
    except LoganalyzeError as exc:
        _fail(str(exc))
    finally:
        database.close()


def _show(result, fmt: str) -> None:
    from .query.output import render

    typer.echo(render(result.columns, result.rows, fmt))


# ============================================================================ ingest
def _compile_cut_for(path: str) -> None:
    from .importers.onednn_positions import compile_for

    compile_for(path)


@app.command()
def ingest(
    paths: List[str] = typer.Argument(..., help="Files, globs or directories to ingest; - reads standard input"),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    wait: float = typer.Option(WAIT_DEFAULT, "--wait", min=0, help=WAIT_HELP),
    run: Optional[str] = typer.Option(None, "--run", help="Run label stored with every file"),
    commit: Optional[str] = typer.Option(None, "--commit", help="Git commit of the run (default: detected from the working directory)"),
    branch: Optional[str] = typer.Option(None, "--branch", help="Git branch of the run (default: detected)"),
    tag: Optional[List[str]] = typer.Option(None, "--tag", help="KEY=VALUE stored with the run (repeatable)"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print errors only"),
    max_expand: float = typer.Option(100, "--max-expand", min=0, metavar="RATIO",
                                     help="Most a compressed file may decompress to, in times its size, past "
                                          "its first 16 MB (guards against decompression bombs; 0: no limit)"),
    replace: bool = typer.Option(False, "--replace", help="A file that extends an ingested one (the same log "
                                 "with lines appended) replaces it"),
    to: Optional[Tuple[str, str]] = typer.Option(None, "--to", metavar="parquet DIR", help="Append to a Parquet dataset directory instead of a database: --to parquet DIR"),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes parsing files while one process writes (default: one per core, for several files over 32 MB in all; 1: none). An ingest of 10 or more files, or with --jobs, ends with a table by format"),
):
    """Read log files into the database, one transaction per file.

    The format of each file is detected from its content; gzip is read transparently.
    A file already in the database (same content, compressed or not) is not ingested twice;
    a file that extends one (more lines appended) is ingested only with --replace.  With
    --to parquet DIR the files go to a Parquet dataset instead (new part files only).

    Example: loganalyze ingest logs/ --run nightly-2026-11-22;
    train.py 2>&1 | loganalyze ingest - --run nightly;
    loganalyze ingest --to parquet dataset/ logs/ --run nightly
    """
    from .inputs import hash_ahead
    from .paths import only_file
    from .trace_stage import stage_ahead

    one = only_file(paths[0]) if len(paths) == 1 and to is None else None
    if one is not None:
        # while the imports below keep this process busy: a large trace's event array is
        # staged for DuckDB (its hash waits until the array is read), any other file hashed
        # in a child process
        stage_ahead(one) or hash_ahead(one)
        # and (after that fork) a large oneDNN log's compiled cut loaded on a helper thread
        threading.Thread(target=_compile_cut_for, args=(one,), name="loganalyze-compile", daemon=True).start()
    dataset = _dataset_target(to, db)
    # the database opens on a helper thread too (DuckDB lets go of the GIL while it opens
    # the file and checks the schema: 40-75 ms) while this one imports what ingests need
    opening = _open_behind(db, wait) if dataset is None else None
    from .api import LoganalyzeError
    from .ingest import IngestInterrupted
    from .progress import IngestProgress
    from .signals import interrupts_handled, is_interrupt, signal_exit_code

    database = opening.result() if opening is not None else None
    bar = IngestProgress() if (sys.stderr.isatty() and not quiet) else None
    ok = failed = 0
    seen: list = []
    try:
        with interrupts_handled():
            results = (database.iter_ingest(paths, run=run, progress=bar, commit=commit, branch=branch, tags=tag,
                                            max_expand=max_expand, replace=replace, jobs=jobs)
                       if database is not None
                       else _dataset_ingest(dataset, paths, run, bar, commit=commit, branch=branch, tags=tag))
            for res in results:
                seen.append(res)
                if bar:
                    bar.file_done()
                if res.status == "error":
                    failed += 1
                    typer.echo(f"error: {res.message}", err=True)
                    continue
                ok += 1
                if quiet:
                    continue
                if res.status in ("duplicate", "extends"):
                    typer.echo(f"skipped: {res.message}")
                    continue
                for old in res.replaced:
                    typer.echo(f"replaced {old}")
                for w in res.warnings:
                    typer.echo(f"warning: {w}", err=True)
                _print_ingested(database, res)
    except IngestInterrupted as exc:
        if bar:
            bar.file_done()
        typer.echo(exc.summary(), err=True)
        raise typer.Exit(exc.exit_code)
    except (KeyboardInterrupt, Exception) as exc:
        # a signal outside any file's transaction (between files, or while a stored file's
        # figures are read back, where DuckDB reports it as "Query interrupted"): every file
        # reported so far is stored whole.  Any other error but ours is a bug: its traceback
        if is_interrupt(exc):
            if bar:
                bar.file_done()
            typer.echo(f"interrupted: {ok} file(s) ingested before it", err=True)
            raise typer.Exit(signal_exit_code(exc))
        if isinstance(exc, LoganalyzeError):
            _fail(str(exc))
        raise
    finally:
        if database is not None:
            database.close()
    if not quiet and (len(seen) >= REPORT_MIN_FILES or (jobs is not None and len(seen) > 1)):
        _print_report(seen)
    if failed and not ok:
        raise typer.Exit(2)
    if failed:
        raise typer.Exit(1)


#: an ingest of this many files (or any with --jobs) ends with the table by format
REPORT_MIN_FILES = 10


def _print_report(results) -> None:
    """The table an ingest of many files ends with: ingested, skipped, rejected by format."""
    from .ingest_report import by_format
    from .query.output import render

    typer.echo(render(*by_format(results), "table"), err=True)


def _dataset_target(to: Optional[Tuple[str, str]], db: Optional[str]) -> Optional[str]:
    """The dataset directory of ``--to parquet DIR`` (None: ingest into the database)."""
    if not to:
        return None
    kind, directory = to
    if kind != "parquet":
        _fail(f"unknown --to {kind!r}; the one target is: --to parquet DIR")
    if db is not None:
        _fail("choose --db or --to parquet DIR, not both")
    return directory


def _dataset_ingest(directory: str, paths: List[str], run: Optional[str], bar, **run_meta):
    from .dataset.ingest import ingest_to_dataset

    return ingest_to_dataset(directory, paths, run_label=run, progress_factory=bar, **run_meta)


def _print_ingested(database, res) -> None:
    from .api import LoganalyzeError

    s = res.source
    typer.echo(f"ingested {res.path} as source {res.source_id}: {s.get('format')} "
               f"[{s.get('dialect') or '?'}] {s.get('library_version') or ''}".rstrip())
    unit = "events" if s.get("format") == "trace_json" else "lines"
    typer.echo(f"  {unit} {s['lines_total']}: {s['lines_parsed']} parsed, "
               f"{s['lines_non_verbose']} other, {s['lines_skipped']} skipped")
    if database is None or s.get("format") != "onednn_verbose":
        return
    try:
        kinds = database.summary(by="kind", source=res.source_id, family="onednn", wide=False, output="rows")
    except LoganalyzeError:
        return
    keep = ["kind", "exec_count", "exec_ms", "share_pct", "create_count", "create_ms"]
    idx = [kinds.columns.index(c) for c in keep]
    from .query.output import render

    text = render(keep, [tuple(r[i] for i in idx) for r in kinds.rows], "table")
    typer.echo("\n".join("  " + line for line in text.splitlines()))


# ============================================================================ summary
@app.command("summary")
def summary_cmd(
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    wait: float = typer.Option(WAIT_DEFAULT, "--wait", min=0, help=WAIT_HELP),
    dataset: Optional[str] = typer.Option(None, "--dataset", help=DATASET_HELP),
    by: Optional[str] = typer.Option(None, "--by", help="Group keys, comma-separated. oneDNN: kind, impl, prop, shape, engine, alg, dtype, mds, attrs, aux, source, run. GPU: kernel (with grid, block, device, stream), memcpy, api, nvtx (with domain), op (with shapes); source, run. Traces: op, category, thread, process, shape, dtype, step; framework tables (--family optable): op, section, tool, rank. Default: every family present, each by its main key"),
    run: Optional[str] = typer.Option(None, "--run", help="Only files ingested with this run label"),
    source: Optional[List[str]] = typer.Option(None, "--source", help=SOURCE_HELP),
    top: Optional[int] = typer.Option(None, "--top", min=0, help="Only the N groups with the most time"),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
    family: Optional[str] = typer.Option(None, "--family", help="Which data to summarise when --by keys are shared: onednn, trace, gpu, optable"),
    benchdnn: bool = typer.Option(False, "--benchdnn", help="Print a benchdnn reproducer for each of the top oneDNN primitives"),
    wide: bool = typer.Option(False, "--wide", help="Every column in table and markdown output (csv and json always have every column)"),
    names: Optional[str] = typer.Option(None, "--names", help="GPU kernel/API names: raw (as the input stores them; default for kernels), demangled, short (no templates or parameters), mangled"),
):
    """Where the time went, grouped by --by keys and sorted by time.

    For oneDNN logs: exec and create joined per group, with exec count, total/avg/median/
    min/max (ms), share and cumulative share of exec time, create count and time, cache hits
    and misses, untimed execs, nested creates and check/dispatch diagnostics.  Without --by,
    one table per family of data present (oneDNN, trace operators, GPU kernels, framework
    tables).

    Examples: loganalyze summary --by kind,impl --top 10;
    loganalyze summary --by kernel --source trace.json.gz --format json;
    loganalyze summary --benchdnn --top 5
    """
    _check_format(fmt)
    compact = fmt in ("table", "markdown") and not wide
    with _database(db, wait, dataset=dataset) as database:
        if benchdnn:
            for comment, line in database.benchdnn(top=top or 10, run=run, source=source):
                typer.echo(comment)
                typer.echo(line)
            return
        if by is None and family is None:
            parts = database.summaries(run=run, source=source, top=top, output="rows", wide=not compact)
            if len(parts) > 1 and fmt in ("json", "csv"):
                _fail("the database holds several families (" + ", ".join(p.family for p in parts)
                      + "): choose one with --by or --family for csv and json")
            for i, part in enumerate(parts):
                if len(parts) > 1:
                    typer.echo(("\n" if i else "") + f"# {part.family}: by {','.join(part.by)}")
                _show(part.result, fmt)
            return
        result = database.summary(by=by, run=run, source=source, top=top, family=family, names=names,
                                  output="rows", wide=not compact)
    _show(result, fmt)


# ============================================================================ sql, sources, skipped
@app.command()
def sql(
    query: str = typer.Argument(..., help="A SQL query over the documented tables and views"),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    wait: float = typer.Option(WAIT_DEFAULT, "--wait", min=0, help=WAIT_HELP),
    dataset: Optional[str] = typer.Option(None, "--dataset", help=DATASET_HELP),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
):
    """Run read-only SQL over the database (see docs/schema.md).

    Example: loganalyze sql "SELECT kind, count(*), sum(time_ms) FROM onednn_primitives
    WHERE op_class = 'exec' GROUP BY kind ORDER BY 3 DESC"
    """
    _check_format(fmt)
    if not query.strip():
        _fail("empty query")
    with _database(db, wait, dataset=dataset) as database:
        result = database.sql(query, output="rows")
    if result.columns:
        _show(result, fmt)


@app.command()
def sources(
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    wait: float = typer.Option(WAIT_DEFAULT, "--wait", min=0, help=WAIT_HELP),
    dataset: Optional[str] = typer.Option(None, "--dataset", help=DATASET_HELP),
    run: Optional[str] = typer.Option(None, "--run", help="Only files ingested with this run label"),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
):
    """List the files in the database with their format, dialect and line counts."""
    _check_format(fmt)
    with _database(db, wait, dataset=dataset) as database:
        result = database.sources(wide=fmt != "table", run=run, output="rows")
    _show(result, fmt)


@app.command()
def skipped(
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    wait: float = typer.Option(WAIT_DEFAULT, "--wait", min=0, help=WAIT_HELP),
    dataset: Optional[str] = typer.Option(None, "--dataset", help=DATASET_HELP),
    source: Optional[List[str]] = typer.Option(None, "--source", help=SOURCE_HELP),
    limit: int = typer.Option(50, "--limit", min=0, help="At most this many lines"),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
):
    """Show skipped input lines with their line number and reason."""
    _check_format(fmt)
    with _database(db, wait, dataset=dataset) as database:
        result = database.skipped(source=source, limit=limit, output="rows")
    _show(result, fmt)


# ============================================================================ runs
@runs_app.callback(invoke_without_command=True)
def runs_list(
    ctx: typer.Context,
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    wait: float = typer.Option(WAIT_DEFAULT, "--wait", min=0, help=WAIT_HELP),
    dataset: Optional[str] = typer.Option(None, "--dataset", help=DATASET_HELP),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
):
    """List the runs: label, files, formats, lines, first and last ingest time."""
    if ctx.invoked_subcommand is not None:
        return
    _check_format(fmt)
    with _database(db, wait, dataset=dataset) as database:
        result = database.runs(output="rows")
    _show(result, fmt)


@runs_app.command("rm")
def runs_rm(
    label: str = typer.Argument(..., help="The run label to remove"),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    wait: float = typer.Option(WAIT_DEFAULT, "--wait", min=0, help=WAIT_HELP),
):
    """Remove every file of a run and all its rows, in one transaction."""
    _change_runs(db, wait, lambda d: d.remove_run(label), lambda n: f"removed run {label!r}: {n} file(s)")


@runs_app.command("relabel")
def runs_relabel(
    old: str = typer.Argument(..., help="The current run label"),
    new: str = typer.Argument(..., help="The new run label"),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    wait: float = typer.Option(WAIT_DEFAULT, "--wait", min=0, help=WAIT_HELP),
):
    """Rename a run (its files join run NEW if that exists)."""
    _change_runs(db, wait, lambda d: d.relabel_run(old, new),
                 lambda n: f"relabelled run {old!r} as {new!r}: {n} file(s)")


def _change_runs(db, wait, change, message) -> None:
    import os

    from .store import default_db_path

    path = db or default_db_path()
    if not os.path.exists(path):
        _fail(f"{path}: no database here; run 'loganalyze ingest' first")
    with _database(db, wait, read_only=False) as database:
        n = change(database)
    typer.echo(message(n))


# ============================================================================ export
@app.command()
def export(
    chrome_trace: Optional[str] = typer.Option(None, "--chrome-trace", help="Write a trace-event JSON file (.gz: compressed; '-': stdout)"),
    parquet: Optional[str] = typer.Option(None, "--parquet", help="Append the files to a Parquet dataset directory (Hive-partitioned by run and format)"),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    wait: float = typer.Option(WAIT_DEFAULT, "--wait", min=0, help=WAIT_HELP),
    source: Optional[List[str]] = typer.Option(None, "--source", help=SOURCE_HELP),
    run: Optional[str] = typer.Option(None, "--run", help="Only files ingested with this run label"),
    no_onednn: bool = typer.Option(False, "--no-onednn", help="Leave oneDNN verbose logs out"),
):
    """Export a timeline of what the database holds, to open in Perfetto UI or chrome://tracing.

    Trace files are written back event by event; oneDNN verbose logs with timestamps
    (ONEDNN_VERBOSE_TIMESTAMP=1) become one complete event per timed exec/create line.
    A failed or empty export leaves no file behind.

    --parquet DIR appends the chosen files to a Parquet dataset (the same tables, one
    directory per table, partitioned by run and format; files already there are left out),
    to read with --dataset DIR, plain DuckDB or Spark.

    Examples: loganalyze export --chrome-trace timeline.json.gz;
    loganalyze export --parquet dataset/
    """
    from .progress import LazyBar

    if chrome_trace and parquet:
        _fail("choose one export: --chrome-trace FILE or --parquet DIR")
    if parquet:
        with _database(db, wait) as database:
            done = database.export_parquet(parquet, run=run, source=source)
        typer.echo(f"wrote {parquet}: {done.added} file(s) added in {len(done.stats.files)} part file(s), "
                   f"{done.already_there} already there", err=True)
        return
    if not chrome_trace:
        _fail("choose an export format: --chrome-trace FILE or --parquet DIR")
    bars: list[LazyBar] = []

    def progress(total: int):
        if not sys.stderr.isatty() or chrome_trace == "-":
            return None
        bars.append(LazyBar(f"writing {chrome_trace}", total, unit="events"))
        return bars[-1].update

    try:
        with _database(db, wait) as database:
            stats = database.export_chrome_trace(chrome_trace, run=run, source=source, onednn=not no_onednn,
                                                 progress=progress)
    finally:
        for bar in bars:
            bar.close()
    if chrome_trace != "-":
        typer.echo(f"wrote {chrome_trace}: {stats.events} trace events and {stats.onednn_events} oneDNN events "
                   f"from {len(stats.sources)} file(s)", err=True)


from . import cli_report  # noqa: E402  (compare, check, trend)

cli_report.register(app)


#: (an environment variable, so that --jobs workers inherit it) read by
#: loganalyze/importers/onednn_positions.py
NUMBA_WITHOUT_BLAS = "LOGANALYZE_NUMBA_WITHOUT_BLAS"


def main() -> None:
    # no command does linear algebra: without this numpy's OpenBLAS starts a thread per core
    # that spins at import, ~0.1 CPU-s a process (and in every --jobs worker)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # nor does any jitted code of this process need numba's BLAS: its check imports
    # scipy.linalg (80 ms of a oneDNN ingest's start; importers/onednn_positions.py)
    os.environ.setdefault(NUMBA_WITHOUT_BLAS, "1")
    code: object = 0
    try:
        app()
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:  # pragma: no cover
        sys.stderr.write("interrupted\n")
        code = 130
    finally:
        _forget_caught_interrupt()
        _exit_with_the_chosen_status()
    _exit_without_teardown(code)


def _exit_without_teardown(code: object) -> None:
    """End the process with ``code`` (what ``sys.exit`` takes) without the interpreter's
    teardown, which frees every object one by one: 0.12-0.19 s after a 1 GiB ingest, about
    0.02 s after a query.  The command has finished: its database is closed, the ``atexit``
    work (temporary folders) is run here and the output flushed.  Where that cannot be done
    cleanly (another thread still running, output that cannot be flushed: a closed pipe), the
    interpreter exits as usual."""
    import atexit
    import threading

    if any(t is not threading.main_thread() and t.is_alive() and not t.daemon for t in threading.enumerate()):
        sys.exit(code)
    if code is None or isinstance(code, int):
        status = code or 0
    else:  # a message, as sys.exit prints it
        sys.stderr.write(f"{code}\n")
        status = 1
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(status)
    os._exit(status)


def _exit_with_the_chosen_status() -> None:
    """The command has finished (its work stored, its answer printed): a SIGINT or SIGTERM in
    the interpreter's last moments (≈ 0.15 s of teardown after a large ingest, where CPython
    has put the default actions back) would end the process by the signal instead of with
    the status the command chose; from here they are ignored."""
    import signal

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (ValueError, OSError):  # not the main thread, or no such signal here
            pass


def _forget_caught_interrupt() -> None:
    """Keep ``python -m loganalyze`` exiting with the code the command chose.

    CPython (``run_eval_code_obj``, 3.8+) marks a KeyboardInterrupt that ends any string
    ``exec``/``eval`` as unhandled, even when a caller catches it, and under ``-m`` the
    interpreter then kills itself with SIGINT at exit (status -2 instead of 130/143).  A
    signal can land inside such an ``exec`` (dataclasses and namedtuples build their methods
    that way during lazy imports); every string eval clears the mark first, so one more,
    after the command has finished, forgets it."""
    exec("None")  # noqa: S102


if __name__ == "__main__":  # pragma: no cover
    main()
