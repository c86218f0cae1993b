"""Issue 9: directories that cannot be read are said, never skipped quietly; our temporary
files live in one folder per process, go away on every exit and are swept after a kill;
DuckDB's spill files left by a killed process are swept when the database is opened."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from loganalyze import tempfiles
from loganalyze.store import Store, sweep_spill_files

REORDER = "onednn_verbose,exec,cpu,reorder,simple:any,undef,src_f32::blocked:a::f0 dst_f32::blocked:a::f0,,,8"


def good_log(folder: Path, name: str = "good.log") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(f"{REORDER},0.5\n")
    return p


def dead_pid() -> int:
    """The pid of a process that has exited."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# --------------------------------------------------------------------------- unreadable directories
def unreadable(path: Path) -> bool:
    """Make ``path`` unreadable; False where that does not work (root)."""
    path.chmod(0)
    return not os.access(path, os.R_OK)


@pytest.fixture
def locked(tmp_path):
    made = []

    def lock(path: Path) -> Path:
        made.append(path)
        if not unreadable(path):
            pytest.skip("this user reads chmod-000 directories (root)")
        return path

    yield lock
    for p in made:
        p.chmod(0o755)


def test_unreadable_subdirectory_is_reported_and_exit_is_1(tmp_path, tmp_db, cli, locked):
    top = tmp_path / "logs"
    good_log(top)
    good_log(top / "secret", "hidden.log")
    locked(top / "secret")
    r = cli("ingest", "--db", tmp_db, top)
    assert r.exit_code == 1, r.output
    assert f"error: {top / 'secret'}: cannot read directory (Permission denied)" in r.stderr.splitlines()


def test_chmod_000_directory_argument_cannot_be_read(tmp_path, tmp_db, cli, locked):
    top = tmp_path / "logs"
    good_log(top)
    locked(top)
    r = cli("ingest", "--db", tmp_db, top)
    assert r.exit_code == 2
    assert r.stderr.strip() == f"error: {top}: cannot read directory (Permission denied)"


@pytest.fixture
def scandir_refuses(monkeypatch):
    """``os.scandir`` refusing the given folders (as chmod 000 does for other users than root)."""
    refused: set[str] = set()
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path) in refused:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    return refused


def test_unreadable_subdirectory_even_as_root(tmp_path, tmp_db, cli, scandir_refuses):
    top = tmp_path / "logs"
    good_log(top)
    good_log(top / "secret", "hidden.log")
    scandir_refuses.add(str(top / "secret"))
    r = cli("ingest", "--db", tmp_db, top)
    assert r.exit_code == 1
    assert r.stderr.strip() == f"error: {top / 'secret'}: cannot read directory (Permission denied)"
    assert "ingested" in r.stdout


def test_unreadable_directory_argument_even_as_root(tmp_path, tmp_db, cli, scandir_refuses):
    top = tmp_path / "logs"
    good_log(top)
    scandir_refuses.add(str(top))
    r = cli("ingest", "--db", tmp_db, top)
    assert r.exit_code == 2
    assert r.stderr.strip() == f"error: {top}: cannot read directory (Permission denied)"
    empty = tmp_path / "empty"
    empty.mkdir()
    r = cli("ingest", "--db", tmp_db, empty)
    assert r.exit_code == 2 and r.stderr.strip() == f"error: {empty}: directory holds no files"


# --------------------------------------------------------------------------- our temporary files
@pytest.fixture
def temp_root(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "tmproot"
    root.mkdir()
    monkeypatch.setenv("LOGANALYZE_TMPDIR", str(root))
    return root


def test_temporary_files_live_in_one_folder_named_with_the_pid(temp_root):
    fd, path = tempfiles.new_file("stdin")
    os.close(fd)
    folder = Path(path).parent
    assert folder.parent == temp_root and folder.name.startswith(f"loganalyze-tmp-{os.getpid()}-")
    sub = tempfiles.new_folder("trace")
    assert Path(sub).parent == folder
    tempfiles.remove(path)
    assert folder.exists()  # the other one is still in use
    tempfiles.remove(sub)
    assert list(temp_root.iterdir()) == []


def test_stale_folders_of_dead_processes_are_swept(temp_root):
    dead = temp_root / f"loganalyze-tmp-{dead_pid()}-abc"
    (dead / "trace-x").mkdir(parents=True)
    (dead / "stdin-y").write_bytes(b"x" * 1000)
    live = temp_root / f"loganalyze-tmp-{os.getppid()}-def"
    live.mkdir()
    other = temp_root / "someone-elses-file"
    other.write_text("keep")
    assert tempfiles.sweep_stale() == [str(dead)]
    assert sorted(p.name for p in temp_root.iterdir()) == sorted([live.name, other.name])


def test_sigkilled_run_leaves_a_folder_that_the_next_ingest_sweeps(tmp_path, temp_root, tmp_db, cli):
    code = ("import os, signal; from loganalyze import tempfiles; fd, p = tempfiles.new_file('stdin'); "
            "os.write(fd, b'x' * 100000); os.kill(os.getpid(), signal.SIGKILL)")
    proc = subprocess.Popen([sys.executable, "-c", code], env=dict(os.environ, LOGANALYZE_TMPDIR=str(temp_root)))
    assert proc.wait() == -signal.SIGKILL
    (left,) = temp_root.iterdir()
    assert left.name.startswith(f"loganalyze-tmp-{proc.pid}-")
    r = cli("ingest", "--db", tmp_db, good_log(tmp_path))
    assert r.exit_code == 0
    assert list(temp_root.iterdir()) == []


def test_folder_goes_away_at_exit(temp_root):
    code = "from loganalyze import tempfiles; import os; fd, p = tempfiles.new_file('sqlite', '.sqlite'); os.close(fd)"
    subprocess.run([sys.executable, "-c", code], env=dict(os.environ, LOGANALYZE_TMPDIR=str(temp_root)), check=True)
    assert list(temp_root.iterdir()) == []


# --------------------------------------------------------------------------- DuckDB spill files
def test_spill_files_of_a_killed_process_are_swept_when_opening_for_writing(tmp_path):
    db = tmp_path / "s.duckdb"
    Store(db).close()
    spill = tmp_path / "s.duckdb.tmp"
    spill.mkdir()
    gone = dead_pid()
    for name in (f"duckdb_temp_{gone}_0_owner", f"duckdb_temp_{gone}_0_storage_DEFAULT-0.tmp"):
        (spill / name).write_bytes(b"x" * 100)
    Store(db, read_only=True).close()
    assert len(list(spill.iterdir())) == 2  # a reader leaves them alone
    Store(db).close()
    assert not spill.exists()
    # a live process's spill files stay
    spill.mkdir()
    mine = spill / f"duckdb_temp_{os.getppid()}_0_owner"
    mine.write_bytes(b"")
    assert sweep_spill_files(str(db)) == []
    assert mine.exists()
