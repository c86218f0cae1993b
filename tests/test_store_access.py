"""Opening databases: other processes' locks are waited for, foreign files are refused and
left untouched, no DuckDB extension is ever installed or loaded."""
from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import loganalyze
from loganalyze.api import LoganalyzeError

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
ONEDNN = SAMPLES / "onednn" / "dnnl_v1_style.log"


def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.parametrize("make", ["sqlite", "text", "foreign_duckdb"])
def test_foreign_files_are_refused_and_left_as_they_are(tmp_path, cli, make):
    if make == "sqlite":
        target = tmp_path / "x.sqlite"
        target.write_bytes((SAMPLES / "gpu" / "nsys_2024_pytorch.sqlite").read_bytes())
        why = "not a loganalyze database (not a DuckDB file)"
    elif make == "text":
        target = tmp_path / "notes.txt"
        target.write_text("hello\n")
        why = "not a loganalyze database (not a DuckDB file)"
    else:
        import duckdb

        target = tmp_path / "other.duckdb"
        con = duckdb.connect(str(target))
        con.execute("CREATE TABLE t (a INTEGER)")
        con.close()
        why = "not a loganalyze database (a DuckDB file with other tables)"
    before = _digest(target)
    for args in (["sql", "SELECT 1"], ["ingest", "-q", ONEDNN], ["summary"]):
        res = cli(*args, "--db", target)
        assert res.exit_code == 2 and res.stderr == f"error: {target}: {why}\n", res.output
    assert _digest(target) == before


def test_extensions_are_never_autoloaded(tmp_path):
    with loganalyze.connect(str(tmp_path / "a.duckdb")) as db:
        got = db.sql("SELECT current_setting('autoinstall_known_extensions') AS i, "
                     "current_setting('autoload_known_extensions') AS l").to_dict("records")
    assert got == [{"i": False, "l": False}]


HOLD = textwrap.dedent("""
    import sys, time, loganalyze
    db = loganalyze.connect(sys.argv[1])
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
    db.close()
""")


def _holder(path: Path, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "holding"
    return proc


def test_writer_waits_for_another_writer(tmp_path):
    path = tmp_path / "busy.duckdb"
    loganalyze.connect(str(path)).close()
    proc = _holder(path, 1.5)
    messages = []
    t0 = time.monotonic()
    try:
        with loganalyze.connect(str(path), wait=30, on_wait=messages.append) as db:
            assert db.ingest([ONEDNN])[0].status == "ingested"
    finally:
        proc.wait(timeout=30)
    assert time.monotonic() - t0 >= 1.0
    assert len(messages) == 1 and "in use by another process; waiting up to 30 s" in messages[0]


def test_reader_gives_up_after_its_wait(tmp_path, cli):
    path = tmp_path / "busy.duckdb"
    loganalyze.connect(str(path)).close()
    proc = _holder(path, 4)
    try:
        res = cli("summary", "--db", path, "--wait", "0.3")
    finally:
        proc.wait(timeout=30)
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == (f"error: {path}: the database is in use by another process "
                                           "(waited 0.3 s; --wait SECONDS waits longer)")
    with pytest.raises(LoganalyzeError, match="no database here"):
        loganalyze.connect(str(tmp_path / "none.duckdb"), read_only=True)
