"""What users tried and missed (issue 7): version, python -m, runs, --source, plain summary,
clear errors, quiet mode, number formatting, export without leftovers, progress bar."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
ONEDNN = SAMPLES / "onednn" / "dnnl_v1_style.log"
TRACE = SAMPLES / "trace" / "kineto_gpu_style.pt.trace.json"
MXNET = SAMPLES / "trace" / "mxnet1.6_style_dumps.txt"


def test_version(cli):
    import loganalyze

    res = cli("--version")
    assert res.exit_code == 0 and res.stdout == f"loganalyze {loganalyze.__version__}\n"


def test_python_dash_m(tmp_path):
    env = dict(os.environ, LOGANALYZE_DB=str(tmp_path / "m.duckdb"))
    out = subprocess.run([sys.executable, "-m", "loganalyze", "--version"], capture_output=True, text=True, env=env)
    assert out.returncode == 0 and out.stdout.startswith("loganalyze ")
    out = subprocess.run([sys.executable, "-m", "loganalyze", "ingest", "-q", str(ONEDNN)], capture_output=True,
                         text=True, env=env)
    assert out.returncode == 0 and out.stdout == "" and out.stderr == ""


def test_exit_without_teardown_keeps_output_status_and_atexit(tmp_path):
    """``main`` ends the process without the interpreter's teardown: the ``atexit`` work
    still runs (temporary folders are removed that way) and what it writes is flushed, the
    chosen status is the exit status, and a large answer arrives whole through a pipe."""
    env = dict(os.environ, LOGANALYZE_DB=str(tmp_path / "e.duckdb"))
    env.pop("PYTHONUNBUFFERED", None)  # output buffered, as it is by default
    script = ("import atexit, sys\n"
              "atexit.register(lambda: sys.stdout.write('atexit ran'))\n"
              "import loganalyze.cli as cli\n"
              "sys.argv = ['loganalyze'] + sys.argv[1:]\n"
              "cli.main()\n")
    for args, status in ((["--version"], 0), (["summary", "--by", "nothing"], 2)):
        out = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env)
        assert out.returncode == status and out.stdout.endswith("atexit ran"), (args, out)
    assert subprocess.run([sys.executable, "-m", "loganalyze", "ingest", "-q", str(ONEDNN)], env=env).returncode == 0
    out = subprocess.run([sys.executable, "-m", "loganalyze", "sql", "SELECT range AS n FROM range(200000)",
                          "--format", "csv"], capture_output=True, text=True, env=env)
    assert out.returncode == 0 and out.stdout.splitlines() == ["n"] + [str(i) for i in range(200000)]


@pytest.mark.parametrize("given, seen", [(None, "1"), ("4", "4")])
def test_cli_keeps_openblas_to_one_thread_unless_told(given, seen):
    """The CLI does no linear algebra: numpy's OpenBLAS gets one thread (its idle threads
    spin at import), unless the user set OPENBLAS_NUM_THREADS."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    script = ("import os, loganalyze.cli as cli\n"
              "cli.app = lambda: print(os.environ.get('OPENBLAS_NUM_THREADS'))\n"
              "cli.main()\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert out.returncode == 0 and out.stdout == seen + "\n"


def test_plain_summary_shows_the_family_present(tmp_db, cli):
    assert cli("ingest", "-q", "--db", tmp_db, MXNET).exit_code == 0
    res = cli("summary", "--db", tmp_db)
    assert res.exit_code == 0 and res.stdout.startswith("op ") and "MyAddOne::_plus_scalar" in res.stdout
    assert cli("summary", "--db", tmp_db, "--format", "json").json()[0]["op"]


def test_plain_summary_one_table_per_family(tmp_db, cli):
    assert cli("ingest", "-q", "--db", tmp_db, ONEDNN, TRACE).exit_code == 0
    res = cli("summary", "--db", tmp_db)
    assert res.exit_code == 0
    titles = [line for line in res.stdout.splitlines() if line.startswith("# ")]
    assert titles == ["# onednn: by kind", "# trace: by op", "# gpu: by kernel"]
    res = cli("summary", "--db", tmp_db, "--format", "json")
    assert res.exit_code == 2 and "several families (onednn, trace, gpu)" in res.stderr


def test_summary_of_a_missing_family_is_an_error(tmp_db, cli):
    assert cli("ingest", "-q", "--db", tmp_db, TRACE).exit_code == 0
    res = cli("summary", "--db", tmp_db, "--by", "kind")
    assert res.exit_code == 2 and res.stdout == ""
    assert "no onednn data in the database; it holds trace data" in res.stderr


def test_empty_database_summary_is_an_error(tmp_db, cli):
    import loganalyze

    loganalyze.connect(tmp_db).close()
    res = cli("summary", "--db", tmp_db)
    assert res.exit_code == 2 and "holds no data" in res.stderr


def test_source_filter_by_id_and_name(tmp_db, cli):
    assert cli("ingest", "-q", "--db", tmp_db, ONEDNN, SAMPLES / "onednn" / "mkldnn_v0_style.log").exit_code == 0
    by_name = cli("summary", "--db", tmp_db, "--by", "source", "--source", "mkldnn_v0_style.log", "-f", "json").json()
    by_id = cli("summary", "--db", tmp_db, "--by", "source", "--source", "2", "-f", "json").json()
    assert by_name == by_id and [r["source"] for r in by_id] == ["mkldnn_v0_style.log"]
    both = cli("summary", "--db", tmp_db, "--by", "source", "--source", "1", "--source", "2", "-f", "json").json()
    assert len(both) == 2
    res = cli("summary", "--db", tmp_db, "--source", "nope.log")
    assert res.exit_code == 2 and "no such source: 'nope.log'" in res.stderr
    res = cli("skipped", "--db", tmp_db, "--source", "dnnl_v1_style.log", "-f", "json")
    assert [r["line_no"] for r in res.json()] == [19]


def test_runs_list_rm_relabel(tmp_db, cli):
    assert cli("ingest", "-q", "--db", tmp_db, "--run", "base", ONEDNN).exit_code == 0
    assert cli("ingest", "-q", "--db", tmp_db, "--run", "cand", TRACE).exit_code == 0
    runs = cli("runs", "--db", tmp_db, "-f", "json").json()
    assert [(r["run_label"], r["files"], r["formats"]) for r in runs] == [
        ("base", 1, "onednn_verbose"), ("cand", 1, "trace_json")]
    assert runs[0]["first_ingest_at"] <= runs[0]["last_ingest_at"] and runs[0]["host"]
    res = cli("runs", "relabel", "base", "baseline", "--db", tmp_db)
    assert res.exit_code == 0 and res.stdout == "relabelled run 'base' as 'baseline': 1 file(s)\n"
    res = cli("runs", "rm", "cand", "--db", tmp_db)
    assert res.exit_code == 0 and res.stdout == "removed run 'cand': 1 file(s)\n"
    assert [r["run_label"] for r in cli("runs", "--db", tmp_db, "-f", "json").json()] == ["baseline"]
    assert cli("sql", "--db", tmp_db, "SELECT count(*) AS n FROM trace_events", "-f", "json").json() == [{"n": 0}]
    res = cli("runs", "rm", "cand", "--db", tmp_db)
    assert res.exit_code == 2 and "no such run: 'cand' (runs: baseline)" in res.stderr


def test_reingest_names_the_run_it_is_in(tmp_db, cli):
    assert cli("ingest", "-q", "--db", tmp_db, "--run", "first", ONEDNN).exit_code == 0
    res = cli("ingest", "--db", tmp_db, "--run", "second", ONEDNN)
    assert res.exit_code == 0
    assert res.stdout.startswith(f"skipped: {ONEDNN}: already ingested as source 1 (")
    assert res.stdout.rstrip().endswith("in run 'first'")


def test_quiet_prints_errors_only(tmp_db, cli, tmp_path):
    bad = tmp_path / "bad.log"
    bad.write_text("hello\n")
    res = cli("ingest", "-q", "--db", tmp_db, ONEDNN, bad)
    assert res.exit_code == 1 and res.stdout == ""
    assert res.stderr.splitlines() == [f"error: {bad}: not a recognised format (tried: onednn_verbose, trace_json, "
                                       "mxnet_table, torch_table, cntk, nsys_sqlite, nvprof_sqlite, nvprof_text, "
                                       "nsys_stats, ncu_csv, pyprof)"]


@pytest.mark.parametrize("args", [["summary", "--top", "-1"], ["skipped", "--limit", "-5"]])
def test_negative_counts_are_usage_errors(tmp_db, cli, args):
    assert cli("ingest", "-q", "--db", tmp_db, ONEDNN).exit_code == 0
    res = cli(*args, "--db", tmp_db)
    assert res.exit_code == 2 and "Invalid value" in res.output


def test_table_numbers_right_aligned_fixed_decimals(tmp_db, cli):
    assert cli("ingest", "-q", "--db", tmp_db, ONEDNN).exit_code == 0
    lines = cli("summary", "--db", tmp_db, "--by", "kind").stdout.splitlines()
    header, rule, first = lines[0], lines[1], lines[2]
    start = header.index("exec_ms")
    end = start + len("exec_ms")
    cell = first[:end].split()[-1]
    assert first[end - 1] != " " and cell.count(".") == 1 and len(cell.split(".")[1]) == 4  # ms: 4 decimals
    pct = first.split()[header.split().index("share_pct")]
    assert len(pct.split(".")[1]) == 2
    assert all(col.endswith(("_ms", "_pct", "_count", "_hits", "_misses")) or col == "kind"
               for col in header.split())


def test_export_nothing_leaves_no_file(tmp_db, cli, tmp_path):
    assert cli("ingest", "-q", "--db", tmp_db, SAMPLES / "onednn" / "mkldnn_v0_style.log").exit_code == 0
    out = tmp_path / "x.json"
    res = cli("export", "--db", tmp_db, "--chrome-trace", out)
    assert res.exit_code == 2 and "nothing to export" in res.stderr and not out.exists()
    assert not [p for p in os.listdir(tmp_path) if "export" in p]


def test_progress_bar_appears_after_the_delay(monkeypatch):
    from loganalyze import progress

    class File:
        name, size, compression = "big.log", 1000, None

    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    bar = progress.IngestProgress()
    update = bar(File())
    update(500)
    assert bar.bar._progress.tasks[0].completed == 500 and bar.bar._progress.tasks[0].total == 1000
    bar.file_done()
    assert bar.bar is None
    monkeypatch.setattr(progress, "DELAY_S", 3600.0)
    update = bar(File())
    update(10)
    assert bar.bar._progress is None  # a quick file never shows a bar


def test_export_reports_progress_in_events(tmp_path):
    import loganalyze

    seen = []
    with loganalyze.connect(":memory:") as db:
        db.ingest([TRACE])

        def factory(total):
            seen.append(("total", total))
            return lambda n: seen.append(("done", n))

        stats = db.export_chrome_trace(tmp_path / "t.json", progress=factory)
    assert seen[0] == ("total", 51) and stats.events <= 51
