"""The command line through typer's CliRunner: output contracts, formats, filters, exit codes."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from conftest import invoke_cli, table_counts

MDS = "src_f32::blocked:abcd:f0 dst_f32::blocked:aBcd8b:f0"
CONV_MDS = ("src_f32::blocked:aBcd8b:f0 wei_f32::blocked:ABcd8b8a:f0 bia_f32::blocked:a:f0 "
            "dst_f32::blocked:aBcd8b:f0")
CONV_PROBLEM = "mb2_ic16oc16_ih7oh7kh5sh1dh0ph2_iw7ow7kw5sw1dw0pw2"

A_LINES = [
    "app: start",
    "dnnl_verbose,info,oneDNN v2.0.0 (commit N/A)",
    f"dnnl_verbose,create:cache_miss,cpu,reorder,jit:uni,undef,{MDS},,,2x16x7x7,0.5",
    f"dnnl_verbose,exec,cpu,reorder,jit:uni,undef,{MDS},,,2x16x7x7,1",
    f"dnnl_verbose,exec,cpu,reorder,jit:uni,undef,{MDS},,,2x16x7x7,2",
    f"dnnl_verbose,create:cache_hit,cpu,convolution,jit:avx2,forward_training,{CONV_MDS},,alg:convolution_direct,{CONV_PROBLEM},0.25",
    f"dnnl_verbose,exec,cpu,convolution,jit:avx2,forward_training,{CONV_MDS},,alg:convolution_direct,{CONV_PROBLEM},4",
    f"dnnl_verbose,exec,cpu,convolution,jit:avx2,forward_training,{CONV_MDS},,alg:convolution_direct,{CONV_PROBLEM},8",
    f"dnnl_verbose,exec,cpu,convolution,gemm:jit,forward_training,{CONV_MDS},,alg:convolution_direct,{CONV_PROBLEM},16",
    f"dnnl_verbose,exec,cpu,convolution,gemm:jit,forward_training,{CONV_MDS},,alg:convolution_direct,{CONV_PROBLEM}",
    "dnnl_verbose,exec,cpu,convolution,jit:avx2,forward_training,",
    "app: done",
]
B_LINES = [
    "onednn_verbose,v1,info,oneDNN v3.7.1 (commit N/A)",
    "onednn_verbose,v1,primitive,exec,cpu,reorder,jit:uni,undef,src:f32::blocked:abcd::f0 dst:f32::blocked:aBcd8b::f0,,,2x16x7x7,3",
    "onednn_verbose,v1,primitive,create:check,matmul,dimension src:1 is inconsistent with weights:0,src/common/matmul.cpp:144",
    "onednn_verbose,v1,primitive,exec,gpu:0,matmul,jit:gemm:any,undef,src:f16::blocked:ab::f0 wei:s8::blocked:ba::f0 "
    "dst:f16::blocked:ab::f0,attr-scratchpad:user attr-fpmath:f16:true,,256x256:256x256,5",
    "onednn_verbose,v1,primitive,exec,cpu,eltwise,jit:avx2,forward_inference,data:f32::blocked:abcd::f0 "
    "diff:undef::undef:::,,alg:eltwise_relu alpha:0 beta:0,2x16x7x7,0.5",
]

SUMMARY_KEYS = {"kind", "exec_count", "exec_ms", "create_count", "create_ms", "cache_hits", "cache_misses"}
SOURCE_KEYS = {"path", "format", "dialect", "lines_total", "lines_parsed", "lines_skipped"}


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two small logs ingested once with run labels; the tests only read the database."""
    tmp_path = tmp_path_factory.mktemp("two_runs")
    db = str(tmp_path / "runs.duckdb")
    a = tmp_path / "a.log"
    a.write_text("\n".join(A_LINES) + "\n")
    b = tmp_path / "b.log"
    b.write_text("\n".join(B_LINES) + "\n")
    r1 = invoke_cli("ingest", "--db", db, "--run", "base", a)
    r2 = invoke_cli("ingest", "--db", db, "--run", "new", b)
    assert r1.exit_code == 0 and r2.exit_code == 0, r1.output + r2.output
    return db, a, b, r1, r2


def summary_json(cli, db, *args):
    r = cli("summary", "--db", db, "--format", "json", *args)
    assert r.exit_code == 0, r.output
    return r.json()


# --------------------------------------------------------------------------- ingest output
def test_ingest_reports_each_file(two_runs):
    db, a, b, r1, r2 = two_runs
    assert f"ingested {a}" in r1.stdout and "onednn_verbose" in r1.stdout and "oneDNN v2.0.0" in r1.stdout
    assert "lines 12: 9 parsed, 2 other, 1 skipped" in r1.stdout
    warnings = [line for line in r1.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and str(a) in warnings[0] and "line 11" in warnings[0]
    assert "onednn-v3.6+ (v1)" in r2.stdout


# --------------------------------------------------------------------------- summary contract
def test_summary_by_kind_json_contract(two_runs, cli):
    db = two_runs[0]
    rows = summary_json(cli, db, "--by", "kind")
    for row in rows:
        assert SUMMARY_KEYS <= row.keys()
    by = {r["kind"]: r for r in rows}
    assert set(by) == {"reorder", "convolution", "matmul", "eltwise"}
    assert (by["reorder"]["exec_count"], by["reorder"]["exec_ms"]) == (3, 6.0)
    assert (by["reorder"]["create_count"], by["reorder"]["create_ms"]) == (1, 0.5)
    assert (by["reorder"]["cache_hits"], by["reorder"]["cache_misses"]) == (0, 1)
    c = by["convolution"]
    assert (c["exec_count"], c["exec_ms"], c["create_count"], c["create_ms"], c["cache_hits"], c["cache_misses"]) == (
        3, 28.0, 1, 0.25, 1, 0)
    assert c["exec_untimed"] == 1
    assert (by["matmul"]["exec_count"], by["matmul"]["exec_ms"], by["matmul"]["check_count"]) == (1, 5.0, 1)
    assert by["eltwise"]["exec_ms"] == 0.5
    # sorted by exec time, shares add up
    assert [r["kind"] for r in rows] == ["convolution", "reorder", "matmul", "eltwise"]
    assert sum(r["share_pct"] for r in rows) == pytest.approx(100.0)
    assert rows[-1]["cum_share_pct"] == pytest.approx(100.0)
    assert all(isinstance(r["exec_count"], int) and isinstance(r["exec_ms"], (int, float)) for r in rows)


def test_summary_by_kind_impl(two_runs, cli):
    db = two_runs[0]
    rows = summary_json(cli, db, "--by", "kind,impl")
    got = {(r["kind"], r["impl"]): (r["exec_count"], r["exec_ms"]) for r in rows}
    assert got == {
        ("convolution", "gemm:jit"): (1, 16.0),
        ("convolution", "jit:avx2"): (2, 12.0),
        ("reorder", "jit:uni"): (3, 6.0),
        ("matmul", "jit:gemm:any"): (1, 5.0),
        ("eltwise", "jit:avx2"): (1, 0.5),
        ("matmul", ""): (0, 0.0),  # the create:check line names no implementation
    }
    # the same numbers, grouped another way, add up to the per-kind totals
    per_kind = {r["kind"]: r["exec_ms"] for r in summary_json(cli, db, "--by", "kind")}
    for kind, ms in per_kind.items():
        assert sum(v[1] for k, v in got.items() if k[0] == kind) == pytest.approx(ms)
    spaced = summary_json(cli, db, "--by", "kind impl")
    assert spaced == rows


@pytest.mark.parametrize("key,column", [("prop", "prop"), ("shape", "shape"), ("engine", "engine"), ("alg", "alg"),
                                        ("dtype", "dtype"), ("source", "source"), ("run", "run"), ("mds", "mds"),
                                        ("attrs", "attrs"), ("aux", "aux")])
def test_summary_by_every_key(two_runs, cli, key, column):
    db = two_runs[0]
    rows = summary_json(cli, db, "--by", key)
    assert rows and all(column in r for r in rows)
    assert sum(r["exec_count"] for r in rows) == 8
    assert sum(r["exec_ms"] for r in rows) == pytest.approx(39.5)


def test_summary_by_engine_and_run_values(two_runs, cli):
    db = two_runs[0]
    engines = {r["engine"]: r["exec_count"] for r in summary_json(cli, db, "--by", "engine")}
    assert engines == {"cpu": 7, "gpu:0": 1, "": 0}  # "": the create:check line names no engine
    runs = {r["run"]: r["exec_ms"] for r in summary_json(cli, db, "--by", "run")}
    assert runs == pytest.approx({"base": 31.0, "new": 8.5})


def test_top(two_runs, cli):
    db = two_runs[0]
    rows = summary_json(cli, db, "--by", "kind", "--top", "2")
    assert [r["kind"] for r in rows] == ["convolution", "reorder"]
    table = cli("summary", "--db", db, "--by", "kind,impl", "--top", "1")
    assert table.exit_code == 0
    body = [line for line in table.stdout.splitlines() if line.strip()][2:]
    assert len(body) == 1 and body[0].startswith("convolution") and "gemm:jit" in body[0]


def test_run_filter(two_runs, cli):
    db = two_runs[0]
    base = {r["kind"]: r for r in summary_json(cli, db, "--by", "kind", "--run", "base")}
    new = {r["kind"]: r for r in summary_json(cli, db, "--by", "kind", "--run", "new")}
    assert set(base) == {"reorder", "convolution"}
    assert set(new) == {"reorder", "matmul", "eltwise"}
    assert base["reorder"]["exec_ms"] == 3.0 and new["reorder"]["exec_ms"] == 3.0
    res = cli("summary", "--db", db, "--run", "no-such-run")
    assert res.exit_code == 2 and res.stderr == "error: no such run: 'no-such-run' (runs: base, new)\n"


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "markdown"])
def test_every_format(two_runs, cli, fmt):
    db = two_runs[0]
    for cmd in (["summary", "--by", "kind"], ["sources"], ["skipped"],
                ["sql", "SELECT kind, count(*) AS n FROM onednn_primitives GROUP BY kind ORDER BY kind"]):
        r = cli(cmd[0], "--db", db, "--format", fmt, *cmd[1:])
        assert r.exit_code == 0, (cmd, r.output)
        out = r.stdout
        if fmt == "json":
            data = json.loads(out)
            assert isinstance(data, list) and data and isinstance(data[0], dict)
        elif fmt == "csv":
            rows = list(csv.reader(io.StringIO(out)))
            assert len(rows) >= 2 and len({len(row) for row in rows}) == 1
        elif fmt == "markdown":
            lines = out.strip().splitlines()
            assert all(line.startswith("|") and line.endswith("|") for line in lines)
            assert set(lines[1].replace("|", "").replace(":", "").strip()) <= {"-", " "}
        else:
            lines = out.strip().splitlines()
            assert set(lines[1].replace(" ", "")) == {"-"}
    csv_rows = list(csv.DictReader(io.StringIO(cli("summary", "--db", db, "-f", "csv").stdout)))
    js = summary_json(cli, db)
    assert [r["kind"] for r in csv_rows] == [r["kind"] for r in js]
    assert [float(r["exec_ms"]) for r in csv_rows] == [r["exec_ms"] for r in js]


def test_table_is_compact_unless_wide(two_runs, cli):
    db = two_runs[0]
    narrow = cli("summary", "--db", db).stdout.splitlines()[0].split()
    assert narrow[0] == "kind" and {"exec_count", "exec_ms", "create_count", "cache_hits"} <= set(narrow)
    wide = cli("summary", "--db", db, "--wide")
    assert wide.exit_code == 0, wide.output
    assert set(summary_json(cli, db)[0]) == set(wide.stdout.splitlines()[0].split())


def test_unknown_format_and_key(two_runs, cli):
    db = two_runs[0]
    for args in (("summary", "--format", "xml"), ("sources", "--format", "yaml"), ("sql", "SELECT 1", "--format", "x"),
                 ("summary", "--by", "colour"), ("summary", "--by", "kind,colour"), ("summary", "--by", ",")):
        r = cli(args[0], "--db", db, *args[1:])
        assert r.exit_code == 2, (args, r.output)
        assert r.stderr.strip().count("\n") == 0 and r.stderr.startswith("error: "), r.stderr
    assert "colour" in cli("summary", "--db", db, "--by", "colour").stderr


# --------------------------------------------------------------------------- sources, skipped
def test_sources_json_contract(two_runs, cli):
    db, a, b, *_ = two_runs
    rows = cli("sources", "--db", db, "--format", "json").json()
    assert len(rows) == 2
    for row in rows:
        assert SOURCE_KEYS <= row.keys()
        assert row["format"] == "onednn_verbose"
    ra, rb = rows
    assert ra["path"] == str(a.resolve()) and rb["path"] == str(b.resolve())
    assert (ra["lines_total"], ra["lines_parsed"], ra["lines_skipped"]) == (12, 9, 1)
    assert (rb["lines_total"], rb["lines_parsed"], rb["lines_skipped"]) == (5, 5, 0)
    assert ra["dialect"] == "dnnl-v1/v2" and rb["dialect"].startswith("onednn-v3.6+")
    assert ra["lines_non_verbose"] == 2 and ra["run_label"] == "base"
    assert ra["library_version"] == "oneDNN v2.0.0"


def test_skipped_command(two_runs, cli):
    db = two_runs[0]
    rows = cli("skipped", "--db", db, "--format", "json").json()
    assert [(r["name"], r["line_no"]) for r in rows] == [("a.log", 11)]
    assert rows[0]["reason"].startswith("truncated")
    assert cli("skipped", "--db", db, "--source", "2", "--format", "json").json() == []


# --------------------------------------------------------------------------- benchdnn
def test_benchdnn_reproducers(two_runs, cli):
    db = two_runs[0]
    r = cli("summary", "--db", db, "--benchdnn", "--top", "10")
    assert r.exit_code == 0, r.output
    lines = r.stdout.strip().splitlines()
    comments = [line for line in lines if line.startswith("#")]
    commands = [line for line in lines if not line.startswith("#")]
    assert len(comments) == len(commands) and commands
    assert all(c.startswith("./benchdnn --") for c in commands)
    conv = [c for c in commands if c.startswith("./benchdnn --conv")]
    assert conv and all(c.endswith(CONV_PROBLEM) for c in conv)
    assert any("--dir=FWD_B" in c and "--alg=direct" in c for c in conv)
    reorder = [c for c in commands if c.startswith("./benchdnn --reorder")]
    assert reorder and all(c.endswith("2x16x7x7") for c in reorder)
    assert any("--sdt=f32" in c and "--ddt=f32" in c for c in reorder)
    mm = [c for c in commands if c.startswith("./benchdnn --matmul")]
    assert mm and "--engine=gpu" in mm[0] and mm[0].endswith("256x256:256x256")
    elt = [c for c in commands if c.startswith("./benchdnn --eltwise")]
    assert elt and "--alg=relu" in elt[0]
    # the most expensive primitive comes first
    assert comments[0].startswith("# convolution: 1 execs, 16")
    top1 = cli("summary", "--db", db, "--benchdnn", "--top", "1").stdout.strip().splitlines()
    assert len(top1) == 2 and top1[1].startswith("./benchdnn --conv")


# --------------------------------------------------------------------------- sql
def test_sql_select(two_runs, cli):
    db = two_runs[0]
    r = cli("sql", "--db", db, "--format", "json",
            "SELECT kind, count(*) AS n, sum(time_ms) AS ms FROM onednn_primitives WHERE op_class = 'exec' "
            "GROUP BY kind ORDER BY ms DESC")
    assert r.exit_code == 0
    assert r.json()[0] == {"kind": "convolution", "n": 4, "ms": 28.0}
    dims = cli("sql", "--db", db, "--format", "json",
               "SELECT DISTINCT dims['mb'] AS mb, dims['kh'] AS kh FROM onednn_primitives WHERE kind = 'convolution'")
    assert dims.json() == [{"mb": "2", "kh": "5"}]


@pytest.mark.parametrize("statement", [
    "DELETE FROM sources",
    "INSERT INTO skipped_lines VALUES (1, 1, 'x', 'y')",
    "UPDATE onednn_events SET time_ms = 0",
    "DROP TABLE onednn_events",
    "CREATE TABLE t AS SELECT 1",
    "ALTER TABLE sources ADD COLUMN x INTEGER",
    "CREATE OR REPLACE VIEW onednn AS SELECT 1",
])
def test_sql_is_read_only(two_runs, cli, statement):
    db = two_runs[0]
    before = table_counts(db)
    r = cli("sql", "--db", db, statement)
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error: ") and r.stderr.strip().count("\n") == 0
    assert table_counts(db) == before
    assert cli("summary", "--db", db, "--format", "json").exit_code == 0


def test_sql_cannot_write_files(two_runs, cli, tmp_path):
    db = two_runs[0]
    target = tmp_path / "exported.csv"
    r = cli("sql", "--db", db, f"COPY (SELECT * FROM sources) TO '{target}' (HEADER)")
    assert not target.exists()
    assert r.exit_code == 2


@pytest.mark.parametrize("statement", ["SELEC 1", "SELECT * FROM no_such_table", "SELECT nosuchcolumn FROM sources"])
def test_sql_errors(two_runs, cli, statement):
    db = two_runs[0]
    r = cli("sql", "--db", db, statement)
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error: ")


@pytest.mark.parametrize("statement", ["", "   "])
def test_sql_without_a_statement(two_runs, cli, statement):
    db = two_runs[0]
    r = cli("sql", "--db", db, statement)  # fails the test if the command raises
    assert r.exit_code == 2 and r.stderr.startswith("error: empty query"), r.output
    assert "Traceback" not in r.output


# --------------------------------------------------------------------------- database location
def test_loganalyze_db_environment_variable(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "from_env.duckdb"
    log = tmp_path / "a.log"
    log.write_text("\n".join(A_LINES) + "\n")
    env = {"LOGANALYZE_DB": str(db)}
    r = cli("ingest", log, env=env)
    assert r.exit_code == 0, r.output
    assert db.exists() and not (tmp_path / "loganalyze.duckdb").exists()
    rows = cli("summary", "--format", "json", env=env).json()
    assert {r["kind"] for r in rows} == {"reorder", "convolution"}
    assert len(cli("sources", "--format", "json", env=env).json()) == 1
    # --db wins over the environment
    other = tmp_path / "other.duckdb"
    assert cli("ingest", "--db", other, log, env=env).exit_code == 0
    assert cli("sql", "--db", other, "SELECT count(*) AS n FROM sources", "-f", "json", env=env).json() == [{"n": 1}]


def test_default_database_in_working_directory(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOGANALYZE_DB", raising=False)
    log = tmp_path / "logs" / "a.log"
    log.parent.mkdir()
    log.write_text("\n".join(A_LINES) + "\n")
    assert cli("ingest", log, env={"LOGANALYZE_DB": None}).exit_code == 0
    assert (tmp_path / "loganalyze.duckdb").exists()
    assert cli("summary", "-f", "json", env={"LOGANALYZE_DB": None}).json()


def test_help_lists_commands(cli):
    r = cli("--help")
    assert r.exit_code == 0
    for cmd in ("ingest", "summary", "sql", "sources", "skipped"):
        assert cmd in r.stdout


def test_shipped_samples(tmp_db, cli, consistent):
    """The README's first command on the project's own samples: everything ingests, the
    store is consistent and every summary format renders."""
    samples = Path(__file__).resolve().parents[1] / "samples" / "onednn"
    assert samples.is_dir(), "the shipped samples/onednn are missing"
    r = cli("ingest", "-q", "--db", tmp_db, samples)
    assert r.exit_code == 0, r.output
    consistent(tmp_db)
    rows = cli("summary", "--db", tmp_db, "--by", "kind", "--format", "json").json()
    assert rows and all(SUMMARY_KEYS <= row.keys() for row in rows)
    sources = cli("sources", "--db", tmp_db, "--format", "json").json()
    assert len(sources) == len([p for p in samples.iterdir() if p.is_file() and not p.name.startswith(".")])
    assert cli("summary", "--db", tmp_db, "--benchdnn", "--top", "3").exit_code == 0
