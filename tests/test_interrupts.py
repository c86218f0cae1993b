"""SIGINT and SIGTERM during an ingest: the file in progress is rolled back, nothing further is
read, one line says what was ingested and what was not, exit 130 / 143, no traceback."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from reliability_helpers import signal_inside

import loganalyze

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
LINE = ("onednn_verbose,v1,primitive,exec,cpu,convolution,jit:avx2,forward_training,src:f32::blocked:abcd::f0 "
        "wei:f32::blocked:abcd::f0 dst:f32::blocked:abcd::f0,,alg:convolution_direct,"
        "mb2_ic16oc16_ih7oh7kh5sh1dh0ph2_iw7ow7kw5sw1dw0pw2,{}\n")


@pytest.fixture(scope="module")
def big_log(tmp_path_factory) -> Path:
    """A log that takes a few seconds to ingest (about 120 MB)."""
    p = tmp_path_factory.mktemp("big") / "big.log"
    with open(p, "w") as f:
        block = "".join(LINE.format(f"0.{i % 997:03d}") for i in range(10_000))
        for _ in range(60):
            f.write(block)
    return p


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_rolls_back_the_file_in_progress(tmp_path, big_log, sig, code):
    db = tmp_path / "i.duckdb"
    first = SAMPLES / "onednn" / "mkldnn_v0_style.log"
    last = SAMPLES / "onednn" / "dnnl_v1_style.log"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "loganalyze", "ingest", "--db", str(db), str(first),
                             str(big_log), str(last)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout.readline().startswith(f"ingested {first}")
    signal_inside(proc, big_log, sig)  # (a second or more of work)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == code, err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == (
        f"interrupted: 1 file(s) ingested before it; {big_log} was rolled back (nothing of it stored); "
        "1 more file(s) not read")
    with loganalyze.connect(str(db), read_only=True) as d:
        assert d.sources()["name"].tolist() == ["mkldnn_v0_style.log"]
        counts = d.sql("SELECT (SELECT count(*) FROM onednn_events) AS e, (SELECT count(*) FROM skipped_lines) AS s")
        assert counts.to_dict("records") == [{"e": 20, "s": 0}]
    # a completing re-run ingests the rest
    res = subprocess.run([sys.executable, "-m", "loganalyze", "ingest", "-q", "--db", str(db), str(first),
                          str(last)], capture_output=True, text=True)
    assert res.returncode == 0 and res.stderr == ""


def test_signal_while_a_stored_file_is_reported_is_an_interrupt_not_a_traceback(tmp_path, monkeypatch):
    """A signal while the figures of a stored file are read back reaches the command as
    DuckDB's "Query interrupted" error: one line, exit 130, the file stays stored."""
    from conftest import invoke_cli

    import loganalyze.cli as cli
    from loganalyze import signals

    def interrupted_query(database, res):
        # what the handler records before DuckDB's error (undone after the test)
        monkeypatch.setitem(signals._received, "code", 130)
        raise RuntimeError("Query interrupted")

    monkeypatch.setattr(cli, "_print_ingested", interrupted_query)
    db = tmp_path / "p.duckdb"
    first = SAMPLES / "onednn" / "mkldnn_v0_style.log"
    res = invoke_cli("ingest", "--db", db, first, SAMPLES / "onednn" / "dnnl_v1_style.log")
    assert res.exit_code == 130 and res.exception is not None
    assert res.stderr.strip().splitlines()[-1] == "interrupted: 1 file(s) ingested before it"
    with loganalyze.connect(str(db), read_only=True) as d:
        assert d.sources()["name"].tolist() == ["mkldnn_v0_style.log"]


def test_python_m_keeps_the_exit_code_after_a_caught_interrupt_in_a_string_exec(tmp_path):
    """CPython marks a KeyboardInterrupt that ends a string ``exec`` as unhandled even when it
    is caught, and ``python -m`` then dies by SIGINT (-2) instead of exiting 130; a signal
    landing in a dataclass or namedtuple built during a lazy import does exactly that."""
    res = _main_with_app(tmp_path, "import sys\n"
                                   "def app():\n"
                                   "    try:\n"
                                   "        exec('raise KeyboardInterrupt')\n"
                                   "    except KeyboardInterrupt:\n"
                                   "        sys.exit(130)\n")
    assert res.returncode == 130, res.stderr


def _main_with_app(tmp_path, app_source: str) -> subprocess.CompletedProcess:
    """``python -m`` of a module that defines ``app`` from ``app_source``, puts it in place of
    the command line's app and runs ``loganalyze.cli.main()``."""
    (tmp_path / "stand_in_cli.py").write_text(
        app_source + "import loganalyze.cli as cli\ncli.app = app\ncli.main()\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(SAMPLES.parent)]))
    return subprocess.run([sys.executable, "-m", "stand_in_cli"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)


def test_signals_are_ignored_once_the_command_has_finished(tmp_path):
    """After the command (its work stored, its answer printed) a SIGINT or SIGTERM during the
    interpreter's teardown must not turn the chosen status into death by the signal."""
    res = _main_with_app(tmp_path, "import atexit, os, signal, sys\n"
                                   "def app():\n"
                                   "    sys.exit(0)\n"
                                   "def at_exit():\n"
                                   "    print(signal.getsignal(signal.SIGINT) == signal.getsignal(signal.SIGTERM)"
                                   " == signal.SIG_IGN)\n"
                                   "    os.kill(os.getpid(), signal.SIGINT)\n"
                                   "    os.kill(os.getpid(), signal.SIGTERM)\n"
                                   "atexit.register(at_exit)\n")
    assert (res.returncode, res.stdout) == (0, "True\n"), res.stderr


def test_duckdb_interrupt_error_is_an_interrupt_even_before_the_handler_ran(monkeypatch):
    """DuckDB's "Query interrupted" is the interrupt even when the signal handler has recorded
    nothing yet (a full test run once reported it as an internal error, exit 1); any other
    error is not."""
    import duckdb

    from loganalyze import signals

    monkeypatch.setattr(signals, "_received", {})
    assert signals.is_interrupt(RuntimeError("Query interrupted"))
    assert signals.is_interrupt(duckdb.InterruptException("INTERRUPT Error: Interrupted!"))
    assert signals.signal_exit_code(RuntimeError("Query interrupted")) == 130
    assert not signals.is_interrupt(RuntimeError("Query interrupted by the user's data"))
    assert not signals.is_interrupt(duckdb.ConversionException("Could not convert"))


def test_interrupt_while_the_command_line_is_imported_is_one_line_and_130(tmp_path):
    """A Ctrl-C while :mod:`loganalyze.cli` itself is being imported (the first ~30 ms of a
    run, before the command's own handling exists) ends as one later does: ``interrupted``,
    exit 130, no traceback.  The interrupt is raised where the import starts, every time."""
    code = ("import sys\n"
            "class Interrupting:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'loganalyze.cli':\n"
            "            raise KeyboardInterrupt\n"
            "sys.meta_path.insert(0, Interrupting())\n"
            "from loganalyze.console import main\n"
            "main()\n")
    env = dict(os.environ, PYTHONPATH=str(SAMPLES.parent))
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert (res.returncode, res.stderr, res.stdout) == (130, "interrupted\n", "")
