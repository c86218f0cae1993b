"""A full disk: an ingest that runs out of space says so in one line naming the file, leaves the
database consistent and openable, and a later ingest on free space completes.

The small disk is an 8 MiB tmpfs mounted inside the test; where mounting is not allowed (not
root, no CAP_SYS_ADMIN, no tmpfs) the tests skip.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from reliability_helpers import SAMPLES, check_consistent, onednn_text

import loganalyze

SMALL = SAMPLES / "onednn" / "dnnl_v1_style.log"
OTHER = SAMPLES / "onednn" / "mkldnn_v0_style.log"


@pytest.fixture
def small_disk(tmp_path):
    """An 8 MiB filesystem (tmpfs), unmounted after the test."""
    where = tmp_path / "small"
    where.mkdir()
    try:
        made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot mount a small filesystem here: {exc}")
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {made.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30)


def _fill(where: Path, leave: int) -> Path:
    """Take all but ``leave`` bytes of the filesystem."""
    stat = os.statvfs(where)
    filler = where / "filler"
    filler.write_bytes(b"\0" * max(0, stat.f_bavail * stat.f_frsize - leave))
    return filler


def _ingest(db: Path, *files: Path, env: dict | None = None, stdin: bytes | None = None):
    res = subprocess.run([sys.executable, "-m", "loganalyze", "ingest", "-q", "--db", str(db), *map(str, files)],
                         capture_output=True, env=env, input=stdin, timeout=300)
    out, err = res.stdout.decode(), res.stderr.decode()
    assert "Traceback" not in err, err
    return res.returncode, out, err


def test_database_on_a_full_disk(tmp_path, small_disk):
    big = tmp_path / "big.log"
    big.write_text(onednn_text(60_000, 7))  # 14 MB of log, more than the disk holds once stored
    db = small_disk / "full.duckdb"
    with loganalyze.connect(str(db)) as d:
        assert d.ingest([SMALL])[0].status == "ingested"
    filler = _fill(small_disk, 300_000)
    code, _, err = _ingest(db, big, OTHER)
    assert code in (1, 2), err
    lines = err.strip().splitlines()
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {big}: ") and "No space left on device" in errors[0], err
    stored = check_consistent(str(db), read_only=True)
    assert "big.log" not in {rows["name"] for rows in stored.values()}
    # with space again, the same command completes and stores what a clean ingest stores
    filler.unlink()
    code, _, err = _ingest(db, big, OTHER)
    assert code == 0 and "error" not in err, err
    clean = tmp_path / "clean.duckdb"
    with loganalyze.connect(str(clean)) as d:
        d.ingest([SMALL, big, OTHER])
    reference = check_consistent(str(clean))
    assert check_consistent(str(db), reference, read_only=True) == reference


def test_temporary_files_on_a_full_disk(tmp_path, small_disk):
    """Standard input is spooled to a temporary file: with no room for it, one line names the
    input, nothing is stored and no temporary file is left behind."""
    db = tmp_path / "t.duckdb"
    env = dict(os.environ, TMPDIR=str(small_disk))
    before = set(os.listdir(small_disk))
    code, _, err = _ingest(db, Path("-"), env=env, stdin=onednn_text(60_000, 8).encode())
    assert code == 2, err
    assert err.strip().startswith(("error: -: ", "error: <stdin>: ")), err
    assert "No space left on device" in err and len(err.strip().splitlines()) == 1, err
    assert set(os.listdir(small_disk)) == before, "a temporary file was left behind"
    if db.exists():
        assert check_consistent(str(db), read_only=True) == {}
    code, _, err = _ingest(db, Path("-"), stdin=onednn_text(60_000, 8).encode())
    assert code == 0, err
