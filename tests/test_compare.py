"""compare: per-item counts, exact totals, per-call mean and median, deltas, new and vanished
items, --by keys, the sides a comparison can name, and deterministic output."""
from __future__ import annotations

import pandas as pd
import pytest

from compare_helpers import SAMPLES, ingest_run, memory_store, perturb
from conftest import invoke_cli
from loganalyze.compare import compare as compare_mod
from loganalyze.compare import samples
from loganalyze.compare.sides import SideError, SideOpener, open_side
from loganalyze.query.onednn_summary import summary

LOG = SAMPLES / "onednn" / "torch2.13_onednn_v3_all.log.gz"
OTHER = SAMPLES / "onednn" / "mkldnn_v0_style.log"


def test_counts_and_totals_match_the_summary():
    store = memory_store(LOG)
    table = compare_mod.compare(store.con, store.con, families="onednn")
    cols, rows = summary(store.con, ["kind"])
    expected = {r[0]: dict(zip(cols, r)) for r in rows if dict(zip(cols, r))["exec_count"]}
    assert set(table["item"]) == set(expected)
    for row in table.itertuples():
        want = expected[row.item]
        assert row.baseline_count == row.candidate_count == want["exec_count"]
        assert row.baseline_total_us == pytest.approx(want["exec_ms"] * 1000, abs=0.001 * row.baseline_count)
        assert row.baseline_median_us == pytest.approx(want["exec_median_ms"] * 1000, abs=0.001)
        assert row.delta_us == 0 and row.delta_pct == 0 and row.status == "both"
    assert list(table.columns) == compare_mod.COLUMNS


def test_totals_are_exact_integer_sums():
    store = memory_store(LOG)
    frame = samples.load(store.con, families="onednn")
    assert frame["ns"].dtype == "int64"
    table = compare_mod.compare(store.con, store.con, families="onednn")
    for item, part in frame.groupby("item"):
        total = int(part["ns"].sum())
        row = table[table["item"] == item].iloc[0]
        assert row.baseline_total_us == total / 1000


def test_new_and_vanished_items():
    a, b = memory_store(LOG), memory_store(OTHER)
    table = compare_mod.compare(a.con, b.con, families="onednn")
    status = dict(zip(table["item"], table["status"]))
    assert status["matmul"] == "vanished" and status["convolution"] == "both"
    row = table[table["item"] == "matmul"].iloc[0]
    assert row.candidate_count == 0 and pd.isna(row.delta_us)
    table = compare_mod.compare(b.con, a.con, families="onednn")
    assert dict(zip(table["item"], table["status"]))["matmul"] == "new"


def test_delta_of_a_slowed_kind(tmp_path):
    slow = tmp_path / "slow.log.gz"
    perturb(LOG, slow, slow="convolution", factor=1.5)
    table = compare_mod.compare(memory_store(LOG).con, memory_store(slow).con, families="onednn")
    conv = table[table["item"] == "convolution"].iloc[0]
    assert conv.delta_pct == pytest.approx(50.0, abs=0.01)
    assert conv.delta_us == pytest.approx(conv.baseline_mean_us * 0.5, rel=1e-3)
    median = compare_mod.compare(memory_store(LOG).con, memory_store(slow).con, families="onednn",
                                 statistic="median")
    conv = median[median["item"] == "convolution"].iloc[0]
    assert conv.delta_us == pytest.approx(conv.candidate_median_us - conv.baseline_median_us)
    assert conv.delta_pct == pytest.approx(50.0, abs=0.01)


def test_by_several_keys():
    store = memory_store(LOG)
    table = compare_mod.compare(store.con, store.con, by="kind,impl", families="onednn")
    assert all(" | " in item for item in table["item"])
    assert table["baseline_count"].sum() == compare_mod.compare(store.con, store.con, families="onednn")[
        "baseline_count"].sum()
    with pytest.raises(samples.SampleError):
        samples.parse_by("kind,nosuch")
    with pytest.raises(samples.SampleError):
        samples.parse_families("onednn,bogus")


def test_every_family_is_compared():
    store = memory_store(LOG, SAMPLES / "trace" / "kineto_gpu_style.pt.trace.json",
                         SAMPLES / "gpu" / "nsys_2024_pytorch.sqlite")
    table = compare_mod.compare(store.con, store.con)
    assert list(dict.fromkeys(table["family"])) == ["onednn", "kernel", "op", "nvtx"]


def test_ingest_order_does_not_change_the_result(tmp_path):
    files = [LOG, SAMPLES / "onednn" / "torch2.13_onednn_v3_exec.log", OTHER]
    a, b = memory_store(*files), memory_store(*reversed(files))
    ta = compare_mod.compare(a.con, a.con)
    tb = compare_mod.compare(b.con, b.con)
    pd.testing.assert_frame_equal(ta, tb)


def test_sides_run_database_files_and_specials(tmp_path):
    db = str(tmp_path / "runs.duckdb")
    ingest_run(db, "r1", LOG)
    ingest_run(db, "r2", OTHER)
    other_db = str(tmp_path / "other.duckdb")
    ingest_run(other_db, "x", OTHER)
    with SideOpener(db) as opener:
        side = opener.open("r1")
        assert (side.label, side.runs, side.kind) == ("r1", ["r1"], "run")
        assert opener.open(other_db).kind == "database"
        raw = opener.open(f"{LOG},{OTHER}")
        assert raw.kind == "files" and raw.runs is None
        assert opener.open("@latest").label == "r2"
        assert opener.open("@previous", other_label="r2").label == "r1"
        assert opener.open("@last-good", other_label="r2").label == "r1"
        with pytest.raises(SideError, match="nosuch: no such run"):
            opener.open("nosuch")
    con, label, runs, cleanup = open_side("r2", db)
    try:
        assert label == "r2" and runs == ["r2"]
        assert con.execute("SELECT count(*) FROM sources").fetchone()[0] == 2
    finally:
        cleanup()


def test_cli_compare(tmp_path):
    db = str(tmp_path / "runs.duckdb")
    ingest_run(db, "base", LOG)
    ingest_run(db, "cand", OTHER)
    r = invoke_cli("compare", "base", "cand", "--db", db)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("loganalyze compare:") and "vanished" in r.stdout
    doc = invoke_cli("compare", "base", "cand", "--db", db, "--json", "-").json()
    assert doc["command"] == "compare" and doc["verdict"] is None
    assert invoke_cli("compare", "base", "cand", "--db", db, "--by", "nosuch").exit_code == 2
    assert invoke_cli("compare", "base", "cand", "--db", db, "--family", "gpu").exit_code == 2
    r = invoke_cli("compare", "base", "nosuch", "--db", db)
    assert r.exit_code == 2 and "nosuch" in r.stderr
