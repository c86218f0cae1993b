"""Two jobs, one database: a second writer waits for the first (both complete, nothing lost,
the same content stored once) and a reader started during a write waits, then sees whole files."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from reliability_helpers import SAMPLES, check_consistent, make_inputs

import loganalyze


def _start(*args: str | Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "loganalyze", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))


def _finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=300)
    assert "Traceback" not in err, err
    return proc.returncode, out, err


def _clean_reference(tmp_path: Path, files: list[Path]) -> dict:
    clean = tmp_path / "clean.duckdb"
    with loganalyze.connect(str(clean)) as db:
        assert {r.status for r in db.ingest(files)} == {"ingested"}
    return check_consistent(str(clean))


def test_two_writers_both_complete_and_nothing_is_lost(tmp_path):
    files = make_inputs(tmp_path / "in")
    shared = SAMPLES / "onednn" / "mkldnn_v0_style.log"  # given to both: stored once
    db = tmp_path / "both.duckdb"
    first = _start("ingest", "--db", db, "--wait", "120", *files[:3], shared)
    second = _start("ingest", "--db", db, "--wait", "120", shared, *files[3:])
    (code1, out1, err1), (code2, out2, err2) = _finish(first), _finish(second)
    assert (code1, code2) == (0, 0), (err1, err2)
    reference = _clean_reference(tmp_path, files + [shared])
    assert check_consistent(str(db), reference) == reference
    # the shared file: one job ingested it, the other was told it is already there
    said = [line for line in (out1 + err1 + out2 + err2).splitlines() if str(shared) in line]
    assert sum(line.startswith("ingested") for line in said) == 1, said
    assert any("already ingested" in line for line in said), said


def test_a_reader_during_a_write_waits_and_sees_whole_files(tmp_path):
    files = make_inputs(tmp_path / "in")
    db = tmp_path / "rw.duckdb"
    with loganalyze.connect(str(db)) as d:  # the reader needs a database to exist
        d.ingest([SAMPLES / "onednn" / "dnnl_v1_style.log"])
    writer = _start("ingest", "--db", db, *files)
    assert writer.stdout.readline().startswith("ingested")  # the writer holds the database now
    reader = _start("sql", "--db", db, "--wait", "120", "--format", "json",
                    "SELECT count(*) AS n FROM sources")
    code_r, out_r, err_r = _finish(reader)
    code_w, _, err_w = _finish(writer)
    assert code_w == 0, err_w
    assert code_r == 0, err_r
    assert f"{db}: in use by another process; waiting up to 120 s" in err_r
    assert json.loads(out_r) == [{"n": 1 + len(files)}]  # it waited for the whole run
    reference = _clean_reference(tmp_path, [SAMPLES / "onednn" / "dnnl_v1_style.log", *files])
    assert check_consistent(str(db), reference) == reference
