"""The ``compare``, ``check`` and ``trend`` commands, added to the main app by ``register(app)``.

Exit codes: ``check`` 0 clean, 1 regression, 2 usage or input error; ``compare`` and
``trend`` 0 or 2.  Heavy imports happen inside the commands so ``loganalyze --help`` stays fast.
"""
# (no ``from __future__ import annotations``: typer reads every command's annotations at each
# start, and string annotations cost it an eval each)

from typing import Optional

import typer

from .store import DEFAULT_DB

DB_HELP = f"DuckDB file holding the runs (default: $LOGANALYZE_DB or ./{DEFAULT_DB})"
DATASET_HELP = "Read a Parquet dataset directory (ingest --to parquet, export --parquet) instead of a database"
SIDE_HELP = ("a run label in --db, a database file, log files (comma-separated, globs, directories; ingested "
             "into a temporary database), or @last-good / @previous / @latest")
BY_HELP = "oneDNN item keys, comma-separated (kind, impl, prop, shape, engine, alg, dtype, mds, attrs, aux, source)"
FAMILY_HELP = "Only these families, comma-separated: onednn, kernel, op, nvtx (default: all)"
STAT_HELP = "Per-call statistic compared: mean (default; total time / calls) or median"

# the options compare and check share (one declaration each; typer reads them per command)
BASELINE_ARG = typer.Argument(..., help=f"Baseline: {SIDE_HELP}")
CANDIDATE_ARG = typer.Argument(..., help=f"Candidate: {SIDE_HELP}")
DB_OPT = typer.Option(None, "--db", help=DB_HELP)
DATASET_OPT = typer.Option(None, "--dataset", help=DATASET_HELP)
BY_OPT = typer.Option("kind", "--by", help=BY_HELP)
FAMILY_OPT = typer.Option(None, "--family", help=FAMILY_HELP)
MARKDOWN_OPT = typer.Option(None, "--markdown", help="Write a Markdown report ('-': stdout)")
JSON_OPT = typer.Option(None, "--json", help="Write a JSON report ('-': stdout)")
JSON_FORMAT_OPT = typer.Option("loganalyze", "--json-format", help="loganalyze (docs/report.schema.json) or "
                               "benchmark-action (github-action-benchmark customSmallerIsBetter)")
JUNIT_OPT = typer.Option(None, "--junit", help="Write JUnit XML ('-': stdout)")
HTML_OPT = typer.Option(None, "--html", help="Write a self-contained HTML report ('-': stdout)")


def _fail(msg: str, code: int = 2) -> None:
    typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(code)


def _targets(markdown, json_path, json_format, junit, html) -> dict[str, str]:
    if json_format not in ("loganalyze", "benchmark-action"):
        _fail(f"unknown --json-format {json_format!r}; choose from loganalyze, benchmark-action")
    targets = {"markdown": markdown, "json" if json_format == "loganalyze" else "benchmark-action": json_path,
               "junit": junit, "html": html}
    targets = {k: v for k, v in targets.items() if v}
    if list(targets.values()).count("-") > 1:
        _fail("only one report can go to standard output ('-')")
    if "-" not in targets.values():
        targets = {"terminal": "-", **targets}
    return targets


def _dataset_store(dataset: Optional[str], db: Optional[str]):
    """The Parquet dataset of ``--dataset DIR`` opened for reading (None without it)."""
    if dataset is None:
        return None
    from .dataset.layout import DatasetError
    from .dataset.reader import DatasetStore

    if db is not None:
        _fail("choose --db or --dataset, not both")
    try:
        return DatasetStore(dataset)
    except DatasetError as exc:
        _fail(str(exc))


def _run(command: str, baseline: str, candidate: str, db: Optional[str], by: str, family: Optional[str],
         statistic: str, targets: dict[str, str], policy=None, record: bool = False,
         dataset: Optional[str] = None) -> int:
    """Open both sides, compare (and check), write the reports; the exit code."""
    from .compare.reports import write
    from .compare.run import CompareError, build_report

    store = _dataset_store(dataset, db)
    try:
        report = build_report(command, baseline, candidate, db_path=db, store=store, by=by, family=family,
                              statistic=statistic, policy=policy, record=record and store is None)
    except CompareError as exc:
        _fail(str(exc))
    finally:
        if store is not None:
            store.close()
    try:
        write(report, targets)
    except OSError as exc:
        _fail(f"{exc.filename or ''}: cannot write: {exc.strerror or exc}".lstrip(": "))
    return report.exit_code


def compare_cmd(
    baseline: str = BASELINE_ARG,
    candidate: str = CANDIDATE_ARG,
    db: Optional[str] = DB_OPT,
    dataset: Optional[str] = DATASET_OPT,
    by: str = BY_OPT,
    family: Optional[str] = FAMILY_OPT,
    statistic: str = typer.Option("mean", "--statistic", help=STAT_HELP),
    markdown: Optional[str] = MARKDOWN_OPT,
    json_path: Optional[str] = JSON_OPT,
    json_format: str = JSON_FORMAT_OPT,
    junit: Optional[str] = JUNIT_OPT,
    html: Optional[str] = HTML_OPT,
):
    """Compare a candidate run with a baseline, item by item: oneDNN primitives (by --by),
    GPU kernels, operators and NVTX ranges; counts, totals, per-call mean and median, change.

    Example: loganalyze compare nightly-41 nightly-42 --db runs.duckdb --by kind,impl
    """
    targets = _targets(markdown, json_path, json_format, junit, html)
    raise typer.Exit(_run("compare", baseline, candidate, db, by, family, statistic, targets, dataset=dataset))


def check_cmd(
    baseline: str = BASELINE_ARG,
    candidate: str = CANDIDATE_ARG,
    db: Optional[str] = DB_OPT,
    dataset: Optional[str] = DATASET_OPT,
    by: str = BY_OPT,
    family: Optional[str] = FAMILY_OPT,
    policy_path: Optional[str] = typer.Option(None, "--policy", help="TOML policy file with per-item overrides (see docs/compare.md)"),
    fail: Optional[str] = typer.Option(None, "--fail", help="Regression when the per-call time grew by this much (default 10%)"),
    warn: Optional[str] = typer.Option(None, "--warn", help="Warning when it grew by this much (default 5%)"),
    min_delta_us: Optional[float] = typer.Option(None, "--min-delta-us", help="Noise floor: smaller per-call changes never count (default 0.05 µs)"),
    min_count: Optional[int] = typer.Option(None, "--min-count", help="Items with fewer calls on either side never count (default 1)"),
    alpha: Optional[float] = typer.Option(None, "--alpha", help="Significance level of the signed-rank test over paired calls (default 0.05)"),
    statistic: Optional[str] = typer.Option(None, "--statistic", help=STAT_HELP),
    record: bool = typer.Option(True, "--record/--no-record", help="Store the verdict with the candidate run in --db (used by @last-good)"),
    markdown: Optional[str] = MARKDOWN_OPT,
    json_path: Optional[str] = JSON_OPT,
    json_format: str = JSON_FORMAT_OPT,
    junit: Optional[str] = JUNIT_OPT,
    html: Optional[str] = HTML_OPT,
):
    """Compare, give every item a verdict and exit 1 on a regression (0 clean, 2 usage or input error).

    A regression: the per-call mean grew by --fail or more, by more than --min-delta-us, with
    at least --min-count calls on both sides, and (with enough calls) significantly so.

    Example: loganalyze check @last-good nightly-42 --db runs.duckdb --markdown - --junit junit.xml
    """
    from .compare.policy import PolicyError, load_policy

    targets = _targets(markdown, json_path, json_format, junit, html)
    try:
        policy = load_policy(policy_path, fail_pct=fail, warn_pct=warn, min_delta_us=min_delta_us,
                             min_count=min_count, alpha=alpha, statistic=statistic)
    except PolicyError as exc:
        _fail(str(exc))
    code = _run("check", baseline, candidate, db, by, family, policy.base.statistic, targets, policy, record,
                dataset=dataset)
    raise typer.Exit(code)


def trend_cmd(
    db: Optional[str] = DB_OPT,
    dataset: Optional[str] = DATASET_OPT,
    by: str = BY_OPT,
    family: Optional[str] = FAMILY_OPT,
    last: Optional[int] = typer.Option(None, "--last", help="Only the last N runs"),
    threshold: str = typer.Option("10%", "--threshold", help="Drift flag: changed by more than this over the window"),
    statistic: str = typer.Option("mean", "--statistic", help=STAT_HELP),
    drift_only: bool = typer.Option(False, "--drift-only", help="Only items flagged as drifting"),
    fmt: str = typer.Option("table", "--format", "-f", help="Output format: table, csv, json or markdown"),
):
    """Per-call time of every item in each run of the database, oldest first, with a drift
    flag on items that changed by more than --threshold over the window in small steps.

    Example: loganalyze trend --db runs.duckdb --last 10 --drift-only
    """
    from .compare.policy import STATISTICS, PolicyError, parse_percent
    from .compare.samples import SampleError
    from .compare.trend import trend
    from .query.output import FORMATS, render
    from .store import Store, StoreError

    if fmt not in FORMATS:
        _fail(f"unknown --format {fmt!r}; choose from {', '.join(FORMATS)}")
    if statistic not in STATISTICS:
        _fail(f"unknown --statistic {statistic!r}; choose from {', '.join(STATISTICS)}")
    if last is not None and last < 1:
        _fail("--last must be 1 or more")
    try:
        pct = parse_percent(threshold, "--threshold")
        store = _dataset_store(dataset, db) or Store(db, read_only=True)
    except (PolicyError, StoreError) as exc:
        _fail(str(exc))
    try:
        frame = trend(store.con, by, family, last=last, threshold_pct=pct, statistic=statistic)
    except SampleError as exc:
        _fail(str(exc))
    finally:
        store.close()
    if drift_only:
        frame = frame[frame["drift"] != ""]
    rows = [tuple(None if isinstance(v, float) and v != v else v for v in r)
            for r in frame.itertuples(index=False, name=None)]
    typer.echo(render(list(frame.columns), rows, fmt))


def register(app: typer.Typer) -> None:
    """Add ``compare``, ``check`` and ``trend`` to ``app``."""
    app.command("compare")(compare_cmd)
    app.command("check")(check_cmd)
    app.command("trend")(trend_cmd)


__all__ = ["register", "compare_cmd", "check_cmd", "trend_cmd"]
