"""The Python API: ``loganalyze.connect`` -> Database, DataFrames equal to the CLI's JSON."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pandas as pd
import pytest

import loganalyze
from loganalyze.api import Database, LoganalyzeError, Rows

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
ONEDNN = SAMPLES / "onednn" / "dnnl_v1_style.log"
TRACE = SAMPLES / "trace" / "kineto_gpu_style.pt.trace.json"
NSYS = SAMPLES / "gpu" / "nsys_2024_pytorch.sqlite"


@pytest.fixture(scope="module")
def mixed_db(tmp_path_factory):
    """A database file holding a oneDNN log (run a), a Kineto trace and an nsys export (run b)."""
    path = str(tmp_path_factory.mktemp("api") / "mixed.duckdb")
    with loganalyze.connect(path) as db:
        ra = db.ingest([ONEDNN], run="a")
        rb = db.ingest([TRACE, NSYS], run="b")
    assert [r.status for r in ra + rb] == ["ingested"] * 3, [r.message for r in ra + rb]
    return path


def _same(df: pd.DataFrame, records: list[dict]) -> None:
    """The DataFrame holds exactly the JSON records (NaN/NA in the frame is null in JSON)."""
    assert list(df.columns) == list(records[0]) if records else df.empty
    got = df.astype(object).where(df.notna(), None).to_dict("records")
    assert len(got) == len(records)
    for g, r in zip(got, records):
        for k, v in r.items():
            if isinstance(v, float) and isinstance(g[k], float):
                assert math.isclose(g[k], v, rel_tol=0, abs_tol=0), (k, g[k], v)
            else:
                assert g[k] == v, (k, g[k], v)


@pytest.mark.parametrize("args", [
    ["--by", "kind"], ["--by", "kind,impl", "--top", "3"], ["--by", "op"], ["--by", "step"],
    ["--by", "kernel"], ["--by", "kernel", "--source", "nsys_2024_pytorch.sqlite"], ["--by", "api"],
    ["--by", "nvtx"], ["--by", "kind", "--run", "a"], ["--by", "op", "--family", "gpu"],
])
def test_summary_dataframe_equals_cli_json(mixed_db, cli, args):
    res = cli("summary", "--db", mixed_db, "--format", "json", *args)
    assert res.exit_code == 0, res.output
    opts = dict(zip(args[::2], args[1::2]))
    with loganalyze.connect(mixed_db, read_only=True) as db:
        df = db.summary(by=opts["--by"], top=int(opts["--top"]) if "--top" in opts else None,
                        run=opts.get("--run"), source=opts.get("--source"), family=opts.get("--family"))
    assert isinstance(df, pd.DataFrame) and len(df) > 0
    _same(df, res.json())


def test_sources_skipped_runs_sql_frames(mixed_db, cli):
    with loganalyze.connect(mixed_db, read_only=True) as db:
        src = db.sources()
        assert list(src["name"]) == ["dnnl_v1_style.log", "kineto_gpu_style.pt.trace.json", "nsys_2024_pytorch.sqlite"]
        _same(src.drop(columns=["ingested_at", "warnings"]),
              [{k: v for k, v in r.items() if k not in ("ingested_at", "warnings")}
               for r in cli("sources", "--db", mixed_db, "--format", "json").json()])
        sk = db.skipped(source="dnnl_v1_style.log")
        assert list(sk["line_no"]) == [19] and "truncated" in sk["reason"][0]
        runs = db.runs()
        assert list(runs["run_label"]) == ["a", "b"] and list(runs["files"]) == [1, 2]
        assert runs["formats"].tolist() == ["onednn_verbose", "nsys_sqlite,trace_json"]
        q = db.sql("SELECT kind, count(*) AS n FROM onednn_primitives GROUP BY kind ORDER BY n DESC, kind LIMIT 2")
        assert list(q.columns) == ["kind", "n"] and len(q) == 2
        rows = db.sql("SELECT 1 AS x", output="rows")
        assert isinstance(rows, Rows) and rows.records() == [{"x": 1}]


def test_integer_columns_with_gaps_stay_integers(mixed_db):
    with loganalyze.connect(mixed_db, read_only=True) as db:
        df = db.sql("SELECT * FROM (VALUES (1), (NULL), (9007199254740993)) t(v)")
    assert str(df["v"].dtype) == "Int64" and df["v"][2] == 9007199254740993


def test_no_such_run_or_source_is_a_clear_error(mixed_db):
    with loganalyze.connect(mixed_db, read_only=True) as db:
        with pytest.raises(LoganalyzeError, match=r"no such run: 'zzz' \(runs: a, b\)"):
            db.summary(by="kind", run="zzz")
        with pytest.raises(LoganalyzeError, match="no such source: 'nope.log'"):
            db.summary(by="kind", source="nope.log")
        with pytest.raises(LoganalyzeError, match="no such source: '99'"):
            db.sources(source=99)
        with pytest.raises(LoganalyzeError, match="several families"):
            db.summary()
        with pytest.raises(LoganalyzeError, match="top must be 0 or more"):
            db.summary(by="kind", top=-1)
        with pytest.raises(LoganalyzeError, match="opened read-only"):
            db.ingest([ONEDNN])


def test_family_with_no_data_says_what_is_there(tmp_path):
    with loganalyze.connect(str(tmp_path / "t.duckdb")) as db:
        db.ingest([TRACE])
        with pytest.raises(LoganalyzeError, match=r"no onednn data in the database; it holds trace data"):
            db.summary(by="kind")
        fams = db.summaries()
        assert [f.family for f in fams] == ["trace", "gpu"]


def test_memory_database_and_context_manager():
    with loganalyze.connect(":memory:") as db:
        assert isinstance(db, Database) and repr(db) == "<loganalyze.Database ':memory:'>"
        (res,) = db.ingest(ONEDNN, run="x")
        assert res.status == "ingested" and res.format == "onednn_verbose"
        df = db.summary(by="kind", top=1)
        assert df["kind"].tolist() == ["convolution"]


def test_default_path_from_environment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOGANALYZE_DB", str(tmp_path / "env.duckdb"))
    with loganalyze.connect() as db:
        assert db.path == str(tmp_path / "env.duckdb")
    monkeypatch.delenv("LOGANALYZE_DB")
    with loganalyze.connect() as db:
        assert db.path == "loganalyze.duckdb"
    assert (tmp_path / "loganalyze.duckdb").exists()


def test_read_only_missing_file(tmp_path):
    with pytest.raises(LoganalyzeError, match="no database here"):
        loganalyze.connect(str(tmp_path / "none.duckdb"), read_only=True)


def test_runs_remove_and_relabel_in_one_transaction(tmp_path):
    with loganalyze.connect(str(tmp_path / "r.duckdb")) as db:
        db.ingest([ONEDNN], run="old")
        db.ingest([TRACE, NSYS], run="gone")
        assert db.relabel_run("old", "new") == 1
        assert db.remove_run("gone") == 2
        assert db.runs()["run_label"].tolist() == ["new"]
        tables = db.sql("SELECT DISTINCT table_name FROM duckdb_columns() WHERE column_name = 'source_id' "
                        "AND table_name NOT IN (SELECT view_name FROM duckdb_views())")["table_name"]
        for t in tables:
            left = db.sql(f'SELECT DISTINCT source_id FROM "{t}"')["source_id"].tolist()
            assert left in ([], [1]), (t, left)
        with pytest.raises(LoganalyzeError, match="no such run: 'gone'"):
            db.remove_run("gone")


def test_export_leaves_no_file_when_nothing_to_export(tmp_path):
    out = tmp_path / "t.json"
    with loganalyze.connect(str(tmp_path / "e.duckdb")) as db:
        db.ingest([SAMPLES / "onednn" / "mkldnn_v0_style.log"])
        with pytest.raises(LoganalyzeError, match="nothing to export"):
            db.export_chrome_trace(out)
        leftovers = [p for p in os.listdir(tmp_path) if not p.startswith("e.duckdb")]
        assert not out.exists() and leftovers == []
        db.ingest([TRACE])
        stats = db.export_chrome_trace(str(out) + ".gz")
        assert stats.events > 0 and Path(str(out) + ".gz").exists()
        assert [p for p in os.listdir(tmp_path) if not p.startswith("e.duckdb")] == ["t.json.gz"]


def test_exact_sums_without_float_noise(tmp_path):
    """0.1 + 0.2 ms is 0.3 ms, not 0.30000000000000004, in every output."""
    log = tmp_path / "noise.log"
    line = "dnnl_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:a:f0 dst_f32::blocked:a:f0,,,8,{}\n"
    log.write_text(line.format("0.1") + line.format("0.2") + line.format("190.57") + line.format("0.2"))
    with loganalyze.connect(":memory:") as db:
        db.ingest([log])
        rec = db.summary(by="kind").to_dict("records")[0]
    assert rec["exec_ms"] == 191.07 and rec["exec_count"] == 4
    assert json.dumps(rec["exec_ms"]) == "191.07"


def _corpus_files(corpus):
    return sorted(p for d in ("onednn_verbose", "trace_json", "nsys", "nvprof", "mxnet_stats", "pyprof")
                  for p in (corpus / d).glob("*") if p.is_file())


def test_every_corpus_file_dataframe_equals_cli_json(corpus, tmp_path, cli):
    """On every real public file: each family summary the file has, as a DataFrame, equals the
    CLI's JSON."""
    db = str(tmp_path / "corpus.duckdb")
    files = _corpus_files(corpus)
    assert cli("ingest", "-q", "--db", db, *files).exit_code == 0
    with loganalyze.connect(db, read_only=True) as d:
        names = d.sources()["name"].tolist()
        assert len(names) >= len(files) - 2
        checked = 0
        for name in names:
            try:
                fams = d.summaries(source=name)
            except LoganalyzeError as exc:  # e.g. a metrics-only export: the CLI says the same
                res = cli("summary", "--db", db, "--source", name)
                assert res.exit_code == 2 and res.stderr == f"error: {exc}\n"
                checked += 1
                continue
            for fam in fams:
                keys = ",".join(fam.by)
                res = cli("summary", "--db", db, "--by", keys, "--family", fam.family, "--source", name,
                          "--format", "json")
                assert res.exit_code == 0, res.output
                _same(fam.result, res.json())
                checked += 1
    assert checked >= len(names)


def test_compare_check_trend_from_python(tmp_path):
    """The Database wrappers give the tables the commands print; a planted 30% slowdown fails."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("perturb", Path(__file__).resolve().parents[1] / "scripts" / "perturb.py")
    perturb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(perturb)
    src = SAMPLES / "onednn" / "torch2.13_onednn_v3_exec.log"
    slow = tmp_path / "slow.log"
    perturb.perturb(src, slow, slow="convolution", factor=1.3)
    with loganalyze.connect(str(tmp_path / "c.duckdb")) as db:
        db.ingest([src], run="base")
        db.ingest([slow], run="cand", commit="abc123", branch="main", tags=["gpu=none"])
        cmp = db.compare("base", "cand")
        assert set(cmp["item"]) >= {"convolution", "reorder"}
        chk = db.check("base", "cand")
        assert chk.attrs["verdict"] == "fail" and chk.attrs["exit_code"] == 1
        failed = chk[chk["verdict"] == "fail"]["item"].tolist()
        assert failed == ["convolution"]
        assert db.check("base", "base").attrs["exit_code"] == 0
        assert len(db.trend()) > 0
        runs = db.runs().set_index("run_label")
        assert runs.loc["cand", "git_commit"] == "abc123" and runs.loc["cand", "tags"] == "gpu=none"
        with pytest.raises(LoganalyzeError, match="no such run"):
            db.compare("base", "nosuch")
        with pytest.raises(LoganalyzeError, match="expected key=value"):
            db.ingest([src], run="x", tags=["novalue"])
