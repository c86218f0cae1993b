"""Shared fixtures: the public corpus, a scratch database, the CLI runner and a library ingester.

The public corpus lives outside the repository (``../shared/corpus``); tests that need it
skip cleanly when it is absent, so the suite passes on a fresh clone.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from loganalyze.cli import app

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"

#: the tables a file writes rows into (``onednn_shapes`` is shared between files)
PER_FILE_TABLES = ("sources", "onednn_events", "skipped_lines", "onednn_segments")


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("public corpus ../shared/corpus not present")
    return CORPUS


@pytest.fixture
def tmp_db(tmp_path) -> str:
    return str(tmp_path / "test.duckdb")


# --------------------------------------------------------------------------- CLI
@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str
    output: str
    exception: BaseException | None

    def json(self):
        return json.loads(self.stdout)


def _text(result, name: str) -> str:
    try:
        return getattr(result, name)
    except (ValueError, AttributeError):  # older Click: stderr not captured separately
        return ""


def invoke_cli(*args: str, env: dict | None = None) -> CliResult:
    """Run ``loganalyze ARGS`` in-process.  Any exception other than a normal exit is a bug
    (the user would see a traceback), so it fails the test right here."""
    runner = CliRunner()
    result = runner.invoke(app, [str(a) for a in args], env=env)
    out = CliResult(
        exit_code=result.exit_code,
        stdout=_text(result, "stdout"),
        stderr=_text(result, "stderr"),
        output=_text(result, "output"),
        exception=result.exception,
    )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        tb = "".join(traceback.format_exception(*result.exc_info)) if result.exc_info else repr(result.exception)
        pytest.fail(f"loganalyze {' '.join(map(str, args))} raised instead of exiting cleanly:\n{tb}")
    assert "Traceback" not in out.output, out.output
    return out


@pytest.fixture
def cli():
    return invoke_cli


# --------------------------------------------------------------------------- library ingest
@pytest.fixture
def ingest_files(tmp_db):
    """``ingest_files(paths, run_label=None, db=None, **options)`` -> list of IngestResult, into
    ``tmp_db`` (``options``: ``max_expand``, ``replace``)."""
    from loganalyze.ingest import ingest_paths
    from loganalyze.store import Store

    def _ingest(paths, run_label=None, db=None, **options):
        with Store(db or tmp_db) as store:
            return list(ingest_paths(store, [str(p) for p in paths], run_label=run_label, **options))

    return _ingest


@pytest.fixture
def query(tmp_db):
    """``query(sql, params=None, db=None)`` -> rows, read-only."""
    from loganalyze.store import Store

    def _query(sql, params=None, db=None):
        with Store(db or tmp_db, read_only=True) as store:
            return store.con.execute(sql, params or []).fetchall()

    return _query


def table_counts(db: str) -> dict[str, int]:
    from loganalyze.store import Store

    with Store(db, read_only=True) as store:
        return {t: store.con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in PER_FILE_TABLES}


@pytest.fixture
def counts():
    return table_counts


@pytest.fixture
def small_chunks(monkeypatch):
    """Make ``InputFile.chunks`` hand out tiny chunks so that one small file spans many line
    batches (the real chunk is 16 MiB)."""
    from loganalyze.inputs import InputFile

    original = InputFile.chunks

    def set_size(size: int):
        def chunks(self, size_=None, *args, _orig=original, **kwargs):
            return _orig(self, size, *args, **kwargs)

        monkeypatch.setattr(InputFile, "chunks", chunks)

    return set_size


def assert_store_consistent(db: str) -> None:
    """What must hold for every ingested file, whatever its content."""
    from loganalyze.store import Store

    with Store(db, read_only=True) as store:
        con = store.con
        for sid, name, total, parsed, other, skipped in con.execute(
            "SELECT source_id, name, lines_total, lines_parsed, lines_non_verbose, lines_skipped FROM sources"
        ).fetchall():
            assert total == parsed + other + skipped, (name, total, parsed, other, skipped)
            n_events, lo, hi, distinct = con.execute(
                "SELECT count(*), min(line_no), max(line_no), count(DISTINCT line_no) FROM onednn_events WHERE source_id = ?",
                [sid],
            ).fetchone()
            assert n_events == parsed, (name, n_events, parsed)
            assert distinct == n_events, f"{name}: a line is stored twice in onednn_events"
            if n_events:
                assert 1 <= lo and hi <= total, (name, lo, hi, total)
            n_skipped = con.execute("SELECT count(*) FROM skipped_lines WHERE source_id = ?", [sid]).fetchone()[0]
            assert n_skipped == skipped, (name, n_skipped, skipped)
            both = con.execute(
                """SELECT count(*) FROM onednn_events e JOIN skipped_lines k
                   ON e.source_id = k.source_id AND e.line_no = k.line_no WHERE e.source_id = ?""",
                [sid],
            ).fetchone()[0]
            assert both == 0, f"{name}: lines both parsed and skipped"
            dangling = con.execute(
                """SELECT list(e.line_no ORDER BY e.line_no) FROM onednn_events e
                   LEFT JOIN onednn_shapes s USING (shape_id) WHERE e.source_id = ? AND s.shape_id IS NULL""",
                [sid],
            ).fetchone()[0]
            assert not dangling, f"{name}: events of lines {dangling} point at no onednn_shapes row"
        orphans = con.execute(
            """SELECT (SELECT count(*) FROM onednn_events WHERE source_id NOT IN (SELECT source_id FROM sources))
                    + (SELECT count(*) FROM skipped_lines WHERE source_id NOT IN (SELECT source_id FROM sources))
                    + (SELECT count(*) FROM onednn_segments WHERE source_id NOT IN (SELECT source_id FROM sources))"""
        ).fetchone()[0]
        assert orphans == 0, "rows left behind by a file that is not in sources"


@pytest.fixture
def consistent():
    return assert_store_consistent
