"""The Parquet dataset store: the same answers as the database it came from, appends that never
rewrite, writers that never clash, and plain DuckDB over the files."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

import loganalyze
from conftest import invoke_cli
from loganalyze.dataset.layout import dataset_source_id, is_create_view, schema_views_sql

SAMPLES = Path(__file__).resolve().parents[1] / "samples"

#: (family, --by) pairs compared between a database and its dataset
SUMMARIES = [
    ("onednn", "kind"), ("onednn", "kind,impl,shape"), ("onednn", "run"),
    ("trace", "op"), ("trace", "category"), ("trace", "step"),
    ("gpu", "kernel"), ("gpu", "api"), ("gpu", "memcpy"), ("gpu", "nvtx"), ("gpu", "op"),
    ("optable", "op"),
]


def sample_files(*families: str) -> list[str]:
    return sorted(str(p) for f in families for p in (SAMPLES / f).iterdir() if p.name != "README.md")


def _row_order_free(key: str, value):
    """Values that depend on the order rows are read in, made comparable: GPU summaries join
    distinct API types and NVTX styles with string_agg(DISTINCT ...) and no ORDER BY, and a
    float statistic (stddev_samp) may differ in its 15th digit with the summation order.
    Counts and totals (integers, exact decimals) are compared as they are."""
    if key in ("type", "style", "direction") and isinstance(value, str) and "," in value:
        return ",".join(sorted(value.split(",")))
    if isinstance(value, float):
        return float(f"{value:.12g}")
    return value


def summary_json(store_args: list[str], family: str, by: str):
    res = invoke_cli("summary", *store_args, "--family", family, "--by", by, "--format", "json")
    if res.exit_code != 0:
        return res.exit_code, res.stderr
    return 0, [{k: _row_order_free(k, v) for k, v in row.items()} for row in res.json()]


def assert_same_answers(db: str, dataset: str) -> int:
    """Every summary in SUMMARIES, runs and skipped lines agree; returns how many had data."""
    compared = 0
    for family, by in SUMMARIES:
        want = summary_json(["--db", db], family, by)
        got = summary_json(["--dataset", dataset], family, by)
        assert got[0] == want[0], (family, by, got, want)
        if want[0] == 0:
            assert got[1] == want[1], (family, by)
            compared += 1
    with loganalyze.connect(db, read_only=True) as a, loganalyze.connect(dataset=dataset) as b:
        assert [r[:4] for r in a.runs(output="rows").rows] == [r[:4] for r in b.runs(output="rows").rows]
        assert len(a.sources()) == len(b.sources())
        sk_a = a.skipped(output="rows").records()
        sk_b = b.skipped(output="rows").records()
        assert sorted((r["name"], r["line_no"], r["reason"]) for r in sk_a) == \
            sorted((r["name"], r["line_no"], r["reason"]) for r in sk_b)
        assert sorted(dataset_source_id(s) for (s,) in a.sql("SELECT sha256 FROM sources", output="rows").rows) == \
            sorted(i for (i,) in b.sql("SELECT source_id FROM sources", output="rows").rows)
    return compared


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("db") / "samples.duckdb")
    with loganalyze.connect(db) as d:
        d.ingest(sample_files("onednn"), run="onednn")
        d.ingest(sample_files("trace"), run="trace")
        d.ingest(sample_files("gpu"))  # no run label: the NULL partition
    return db


def test_every_view_of_the_schema_is_made_over_a_dataset():
    """The dataset reader runs every CREATE VIEW of the schema (a statement text may start
    with the comments before it: DuckDB 2.0.1's ``extract_statements`` keeps them)."""
    with loganalyze.connect(":memory:") as db:
        views = {v for (v,) in db.con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'").fetchall()}
    made = {sql.split(" VIEW ", 1)[1].split()[0] for sql in schema_views_sql()}
    assert views and made == views
    assert is_create_view("\n\n-- the operators\n/* and\n more */ create or replace view v AS SELECT 1")
    assert is_create_view("CREATE VIEW v AS SELECT 1")
    assert not is_create_view("-- CREATE VIEW in a comment\nCREATE TABLE t (a INT)")


def test_export_gives_the_same_answers(sample_db, tmp_path):
    ds = str(tmp_path / "ds")
    res = invoke_cli("export", "--db", sample_db, "--parquet", ds)
    assert res.exit_code == 0, res.output
    assert "already there" in res.stderr
    assert assert_same_answers(sample_db, ds) >= 10
    assert (tmp_path / "ds" / "sources" / "run=__HIVE_DEFAULT_PARTITION__").is_dir()
    assert (tmp_path / "ds" / "onednn_events" / "run=onednn" / "format=onednn_verbose").is_dir()


def test_ingest_to_parquet_gives_the_same_answers(sample_db, tmp_path):
    ds = str(tmp_path / "ds")
    for fam, run in (("onednn", "onednn"), ("trace", "trace")):
        res = invoke_cli("ingest", "--to", "parquet", ds, *sample_files(fam), "--run", run)
        assert res.exit_code == 0, res.output
    assert invoke_cli("ingest", "--to", "parquet", ds, *sample_files("gpu")).exit_code == 0
    assert assert_same_answers(sample_db, ds) >= 10


def test_second_ingest_adds_nothing_and_appends_never_rewrite(tmp_path):
    ds = tmp_path / "ds"
    first = sample_files("onednn")[:3]
    assert invoke_cli("ingest", "--to", "parquet", ds, *first, "--run", "a").exit_code == 0
    before = {p: p.stat().st_mtime_ns for p in ds.rglob("*.parquet")}
    again = invoke_cli("ingest", "--to", "parquet", ds, *first, "--run", "b")
    assert again.exit_code == 0
    assert again.stdout.count("skipped:") == 3 and "in run 'a'" in again.stdout
    assert {p: p.stat().st_mtime_ns for p in ds.rglob("*.parquet")} == before
    more = sample_files("onednn")[3:5]
    assert invoke_cli("ingest", "--to", "parquet", ds, *more, "--run", "b").exit_code == 0
    after = {p: p.stat().st_mtime_ns for p in ds.rglob("*.parquet")}
    assert {p: after[p] for p in before} == before  # old part files untouched
    assert len(after) > len(before)
    assert not list(ds.rglob("*.tmp"))
    with loganalyze.connect(dataset=ds) as d:
        assert d.runs(output="rows").records()[0]["files"] == 3
        assert [r["files"] for r in d.runs(output="rows").records()] == [3, 2]


def test_export_twice_adds_nothing(sample_db, tmp_path):
    ds = tmp_path / "ds"
    with loganalyze.connect(sample_db, read_only=True) as db:
        first = db.export_parquet(ds, run="onednn")
        second = db.export_parquet(ds)
    assert first.added == len(sample_files("onednn")) and first.already_there == 0
    assert second.already_there == first.added and second.added > 0


def _ingest_process(ds: Path, files: list[str], run: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "loganalyze", "ingest", "-q", "--to", "parquet", str(ds),
                             *files, "--run", run], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_concurrent_appenders_both_land(tmp_path):
    ds = tmp_path / "ds"
    a, b = sample_files("onednn"), sample_files("trace")
    procs = [_ingest_process(ds, a, "a"), _ingest_process(ds, b, "b"),
             _ingest_process(ds, a, "c")]  # the same content as the first: lands once
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    with loganalyze.connect(dataset=ds) as d:
        counts = dict(d.sql("SELECT format = 'onednn_verbose', count(*) FROM sources GROUP BY 1",
                            output="rows").rows)
        assert counts[True] == len(a)
        assert d.sql("SELECT count(DISTINCT sha256) = count(*) FROM sources", output="rows").rows == [(True,)]
        n_events = d.sql("SELECT count(*) FROM onednn_events", output="rows").rows[0][0]
    with loganalyze.connect(":memory:") as m:
        m.ingest(a)
        assert m.sql("SELECT count(*) FROM onednn_events", output="rows").rows[0][0] == n_events


def test_plain_duckdb_reads_the_dataset(sample_db, tmp_path):
    ds = tmp_path / "ds"
    with loganalyze.connect(sample_db, read_only=True) as db:
        db.export_parquet(ds)
        want = db.sql("SELECT run_label, sum(time_ms)::DECIMAL(18,6), count(*) FROM onednn_primitives "
                      "WHERE op_class = 'exec' GROUP BY 1 ORDER BY 1", output="rows").rows
        want_ns = db.sql("SELECT sum(duration_ns) FROM gpu_kernels", output="rows").rows
    con = duckdb.connect()
    got = con.execute(f"""
        SELECT e.run, sum(e.time_ms)::DECIMAL(18,6), count(*)
        FROM read_parquet('{ds}/onednn_events/*/*/*.parquet', hive_partitioning = true) e
        JOIN (SELECT DISTINCT ON (shape_id) * FROM read_parquet('{ds}/onednn_shapes/*/*/*.parquet')) s
          USING (shape_id)
        WHERE s.op_class = 'exec' AND coalesce(nullif(s.component, ''), 'primitive') = 'primitive'
        GROUP BY 1 ORDER BY 1""").fetchall()
    assert got == want
    got_ns = con.execute(f"SELECT sum(duration_ns) FROM read_parquet('{ds}/gpu_kernels/**/*.parquet')").fetchall()
    assert got_ns == want_ns


def test_dataset_is_read_only(sample_db, tmp_path):
    ds = tmp_path / "ds"
    with loganalyze.connect(sample_db, read_only=True) as db:
        db.export_parquet(ds, run="onednn")
    with loganalyze.connect(dataset=ds) as d:
        for sql in (f"COPY sources TO '{ds}/x.csv'", "SELECT * FROM read_csv('/etc/passwd')",
                    "SET enable_external_access = true"):
            with pytest.raises(loganalyze.LoganalyzeError):
                d.sql(sql)
        with pytest.raises(loganalyze.LoganalyzeError, match="read-only"):
            d.ingest(sample_files("trace"))
    assert not (ds / "x.csv").exists()
    res = invoke_cli("sql", "--dataset", str(tmp_path / "nosuch"), "SELECT 1")
    assert res.exit_code == 2 and "no dataset here" in res.stderr
    res = invoke_cli("summary", "--dataset", str(ds), "--db", sample_db)
    assert res.exit_code == 2


def test_corpus_database_and_dataset_agree(corpus, tmp_path):
    files = sorted(str(p) for p in corpus.rglob("*") if p.is_file() and p.suffix not in (".md", ".json")
                   or p.is_file() and p.suffix == ".json" and "expected" not in p.parts)
    db = str(tmp_path / "c.duckdb")
    with loganalyze.connect(db) as d:
        results = d.ingest(files, run="corpus")
        assert sum(r.status == "ingested" for r in results) > 20
        d.export_parquet(tmp_path / "ds")
    assert assert_same_answers(db, str(tmp_path / "ds")) >= 8


def test_compare_check_trend_and_runs_over_a_dataset(tmp_path):
    db = str(tmp_path / "c.duckdb")
    ds = tmp_path / "ds"
    base, cand = SAMPLES / "onednn" / "mkldnn_v0_style.log", SAMPLES / "onednn" / "dnnl_v1_style.log"
    assert invoke_cli("ingest", "-q", "--db", db, str(base), "--run", "base", "--tag", "gpu=none").exit_code == 0
    assert invoke_cli("ingest", "-q", "--db", db, str(cand), "--run", "cand").exit_code == 0
    assert invoke_cli("export", "--db", db, "--parquet", str(ds)).exit_code == 0
    for args in (["compare", "base", "cand", "--json", "-"], ["check", "base", "cand", "--no-record", "--json", "-"],
                 ["trend", "--format", "json"], ["runs", "--format", "json"]):
        want = invoke_cli(*args, "--db", db)
        got = invoke_cli(*args, "--dataset", str(ds))
        assert (got.exit_code, got.stdout) == (want.exit_code, want.stdout), args
    # a dataset ingest records the run's metadata too
    ds2 = tmp_path / "ds2"
    assert invoke_cli("ingest", "-q", "--to", "parquet", str(ds2), str(base), "--run", "base", "--tag", "gpu=none",
                      "--commit", "abc123").exit_code == 0
    with loganalyze.connect(dataset=ds2) as d:
        row = d.runs(output="rows").records()[0]
        assert (row["run_label"], row["git_commit"], row["tags"]) == ("base", "abc123", "gpu=none")
