"""trend: one row per run per item, oldest run first, and a drift flag for items that moved
past the threshold over the window in steps that were each below it; run metadata."""
from __future__ import annotations

import duckdb
import pytest

from compare_helpers import SAMPLES, ingest_run, perturb
from conftest import invoke_cli
from loganalyze import runmeta
from loganalyze.compare.trend import COLUMNS, trend
from loganalyze.store import Store

LOG = SAMPLES / "onednn" / "torch2.13_onednn_v3_all.log.gz"


@pytest.fixture(scope="module")
def drift_db(tmp_path_factory) -> str:
    """Five runs: convolution 4% slower each run (a drift), matmul 15% slower in one step."""
    tmp = tmp_path_factory.mktemp("trend")
    db = str(tmp / "runs.duckdb")
    for i in range(5):
        step1 = tmp / f"conv{i}.log"
        perturb(LOG, step1, slow="convolution", factor=1.04 ** i)
        out = tmp / f"run{i}.log"
        perturb(step1, out, slow="matmul", factor=1.15 if i >= 3 else 1.0)
        ingest_run(db, f"n{i + 1}", out)
    return db


def test_rows_and_drift_flag(drift_db):
    con = duckdb.connect(drift_db, read_only=True)
    try:
        frame = trend(con)
        last3 = trend(con, last=3)
    finally:
        con.close()
    assert list(frame.columns) == COLUMNS
    conv = frame[frame["item"] == "convolution"]
    assert list(conv["run"]) == ["n1", "n2", "n3", "n4", "n5"] and list(conv["run_index"]) == [0, 1, 2, 3, 4]
    assert conv["step_pct"].iloc[1:].round(2).tolist() == [4.0] * 4
    assert set(conv["drift"]) == {"slower"} and conv["drift_pct"].iloc[0] == pytest.approx(100 * (1.04 ** 4 - 1), abs=0.01)
    matmul = frame[frame["item"] == "matmul"]
    assert set(matmul["drift"]) == {""}  # one 15% step: a regression for check, not a drift
    assert set(frame[frame["item"] == "reorder"]["drift"]) == {""}
    assert sorted(set(last3["run"])) == ["n3", "n4", "n5"]
    assert set(last3[last3["item"] == "convolution"]["drift"]) == {""}  # 8.2% over three runs


def test_trend_cli(drift_db):
    r = invoke_cli("trend", "--db", drift_db, "--drift-only", "--format", "json")
    assert r.exit_code == 0, r.output
    rows = r.json()
    assert {row["item"] for row in rows} == {"convolution"} and len(rows) == 5
    r = invoke_cli("trend", "--db", drift_db, "--last", "2")
    assert r.exit_code == 0 and "n4" in r.stdout and "n1 " not in r.stdout
    assert invoke_cli("trend", "--db", drift_db, "--last", "0").exit_code == 2
    assert invoke_cli("trend", "--db", drift_db, "--by", "nosuch").exit_code == 2
    assert invoke_cli("trend", "--db", drift_db, "--threshold", "lots").exit_code == 2


def test_runmeta_record_and_table(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGANALYZE_TAGS", "runner=ci,gpu=none")
    monkeypatch.setenv("LOGANALYZE_COMMIT", "abc123")
    monkeypatch.delenv("LOGANALYZE_BRANCH", raising=False)
    db = str(tmp_path / "runs.duckdb")
    ingest_run(db, "r1", LOG)
    with Store(db) as store:
        runmeta.record(store.con, "r1", branch="feature", tags={"gpu": "a100"})
        runmeta.record(store.con, "r1", tags={"os": "linux"})
        runmeta.record(store.con, None)  # unlabelled ingest: nothing
        table = runmeta.runs_table(store.con)
    row = table.iloc[0]
    assert row["run_label"] == "r1" and row["files"] == 1 and row["formats"] == "onednn_verbose"
    assert row["library_versions"] == "oneDNN v3.12.0" and row["git_commit"] == "abc123"
    assert row["git_branch"] == "feature" and row["tags"] == "gpu=a100,os=linux,runner=ci"
    assert row["host"] and row["first_ingest_at"] <= row["last_ingest_at"]
    assert runmeta.parse_tags(["a=1", "b = two"]) == {"a": "1", "b": "two"}
    with pytest.raises(runmeta.TagError):
        runmeta.parse_tags(["novalue"])


def test_database_from_before_the_runs_table(tmp_path):
    db = str(tmp_path / "old.duckdb")
    ingest_run(db, "a", LOG)
    ingest_run(db, "b", SAMPLES / "onednn" / "torch2.13_onednn_v3_exec.log")
    con = duckdb.connect(db)
    con.execute("DROP TABLE runs")
    con.close()
    con = duckdb.connect(db, read_only=True)
    try:
        assert runmeta.run_labels(con) == ["a", "b"] and runmeta.last_good(con, exclude="b") == "a"
    finally:
        con.close()
    r = invoke_cli("compare", "a", "b", "--db", db)
    assert r.exit_code == 0, r.output
