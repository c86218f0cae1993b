"""export --chrome-trace: traces written back exactly, oneDNN verbose logs with timestamps as
a timeline, several files side by side."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "trace"
ONEDNN = Path(__file__).resolve().parents[1] / "samples" / "onednn"


def op_totals(cli, db):
    res = cli("summary", "--db", db, "--by", "op", "--format", "json")
    assert res.exit_code == 0, res.output
    return {r["op"]: (r["count"], r["total_us"], r["self_us"]) for r in res.json()}


def test_round_trip_keeps_every_operator_exactly(cli, tmp_path, tmp_db):
    src = SAMPLES / "mxnet_style_profile.json"
    assert cli("ingest", "--db", tmp_db, src).exit_code == 0
    out = tmp_path / "out.json"
    res = cli("export", "--db", tmp_db, "--chrome-trace", out)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    phases = {e["ph"] for e in doc["traceEvents"]}
    assert "E" not in phases and "X" in phases and {"b", "e", "C", "M"} <= phases
    # big ids stay exact (strings above int64, numbers below)
    tids = {e.get("tid") for e in doc["traceEvents"]}
    assert "13835058055282163711" in tids
    db2 = str(tmp_path / "again.duckdb")
    assert cli("ingest", "--db", db2, out).exit_code == 0
    assert op_totals(cli, db2) == op_totals(cli, tmp_db)


def test_several_sources_get_their_own_processes(cli, tmp_path, tmp_db):
    files = [SAMPLES / "kineto_gpu_style.pt.trace.json", SAMPLES / "generic_chrome_trace.json"]
    assert cli("ingest", "--db", tmp_db, *files).exit_code == 0
    out = tmp_path / "both.json.gz"
    assert cli("export", "--db", tmp_db, "--chrome-trace", out).exit_code == 0
    doc = json.loads(gzip.decompress(out.read_bytes()))
    names = [e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"]
    assert any(n.startswith("kineto_gpu_style.pt.trace.json: ") for n in names)
    assert any(n.startswith("generic_chrome_trace.json: ") for n in names)
    pids = {e["pid"] for e in doc["traceEvents"] if "pid" in e}
    assert all(isinstance(p, int) for p in pids)
    assert len(doc["otherData"]["sources"]) == 2
    # only one file
    out1 = tmp_path / "one.json"
    assert cli("export", "--db", tmp_db, "--chrome-trace", out1, "--source", "2").exit_code == 0
    one = json.loads(out1.read_text())
    assert [s["name"] for s in one["otherData"]["sources"]] == ["generic_chrome_trace.json"]
    assert {e.get("tid") for e in one["traceEvents"]} >= {"main", 7}


def test_exact_microseconds_in_the_output(cli, tmp_path, tmp_db):
    src = tmp_path / "t.json"
    src.write_text('[{"ph": "X", "name": "a", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 1559670569099589.125, "dur": 0.5}]')
    assert cli("ingest", "--db", tmp_db, src).exit_code == 0
    res = cli("export", "--db", tmp_db, "--chrome-trace", "-")
    assert res.exit_code == 0
    assert '"ts":1559670569099589.125' in res.stdout and '"dur":0.5' in res.stdout


def test_onednn_verbose_with_timestamps(cli, tmp_path, tmp_db):
    logs = [p for p in ONEDNN.glob("*") if "timestamp" in p.name]
    assert logs, "the oneDNN samples with timestamps are missing"
    assert cli("ingest", "--db", tmp_db, *logs).exit_code == 0
    out = tmp_path / "dnn.json"
    res = cli("export", "--db", tmp_db, "--chrome-trace", out)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    ev = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert ev and {e["cat"] for e in ev} <= {"onednn_exec", "onednn_create", "onednn_create_nested",
                                            "onednn_graph_exec", "onednn_graph_compile"}
    from loganalyze.store import Store

    with Store(tmp_db, read_only=True) as store:
        n, total = store.con.execute(
            """SELECT count(*), sum(time_ms) FROM onednn WHERE ts_ms IS NOT NULL AND time_ms IS NOT NULL
               AND op_class IN ('exec', 'create', 'create_nested', 'graph_exec', 'graph_compile')""").fetchall()[0]
    assert len(ev) == n
    # durations are written to the ns (3 decimals of us): each may differ by half a ns
    assert sum(e["dur"] for e in ev) / 1000 == __import__("pytest").approx(total, abs=len(ev) * 5e-7)
    assert all("line_no" in e["args"] and e["ts"] > 1e15 for e in ev)
    # --no-onednn leaves them out: nothing left to export
    res = cli("export", "--db", tmp_db, "--chrome-trace", tmp_path / "x.json", "--no-onednn")
    assert res.exit_code == 2 and "nothing to export" in res.stderr


def test_export_errors(cli, tmp_path, tmp_db):
    assert cli("ingest", "--db", tmp_db, SAMPLES / "generic_chrome_trace.json").exit_code == 0
    res = cli("export", "--db", tmp_db)
    assert res.exit_code == 2 and "--chrome-trace" in res.stderr
    res = cli("export", "--db", tmp_db, "--chrome-trace", tmp_path / "no" / "such" / "dir.json")
    assert res.exit_code == 2 and "cannot write" in res.stderr
    res = cli("export", "--db", str(tmp_path / "missing.duckdb"), "--chrome-trace", tmp_path / "x.json")
    assert res.exit_code == 2
