"""The same parsers on Apache Spark (local mode): files parsed on executors land in the same
Parquet dataset, and Spark's per-kind, per-kernel and per-operator totals equal DuckDB's on the
same files.  Skipped where pyspark or Java is missing; one small session for the module
(Spark starts slowly)."""
from __future__ import annotations

import os
import shutil
import sys
from decimal import Decimal
from pathlib import Path

import pytest

import loganalyze

pytest.importorskip("pyspark", reason="pyspark not installed (pip install 'loganalyze[spark]')")
if shutil.which("java") is None:
    pytest.skip("no Java runtime for Spark", allow_module_level=True)

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
FILES = [str(SAMPLES / p) for p in (
    "onednn/torch2.13_onednn_v3_all.log.gz", "onednn/dnnl_v2_timestamps_style.log", "onednn/mkldnn_v0_style.log",
    "gpu/nsys_2024_pytorch.sqlite", "gpu/nvprof_summary.txt", "gpu/nvprof_gpu_trace.txt",
    "trace/kineto_gpu_style.pt.trace.json", "trace/torch2.13_cpu_train.pt.trace.json.gz",
    "trace/mxnet_style_profile.json")]


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    with pytest.MonkeyPatch.context() as mp:
        # the executors' Python is this one unless set (not the first python on PATH, which may
        # lack pyarrow: the suite run as .venv/bin/python without the venv activated)
        if "PYSPARK_PYTHON" not in os.environ:
            mp.setenv("PYSPARK_PYTHON", sys.executable)
        session = (SparkSession.builder.master("local[2]").appName("loganalyze-tests")
                   .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
                   .getOrCreate())
        session.sparkContext.setLogLevel("ERROR")
        yield session
        session.stop()


@pytest.fixture(scope="module")
def spark_dataset(spark, tmp_path_factory):
    from loganalyze.spark.ingest import ingest_with_spark

    root = tmp_path_factory.mktemp("spark") / "ds"
    results = ingest_with_spark(spark, FILES, root, run="spark").collect()
    assert sorted(r.status for r in results) == ["ingested"] * len(FILES), results
    return root


@pytest.fixture(scope="module")
def duck():
    db = loganalyze.connect(":memory:")
    db.ingest(FILES, run="spark")
    yield db
    db.close()


def test_spark_writes_the_same_dataset(spark_dataset, duck):
    with loganalyze.connect(dataset=spark_dataset) as ds:
        for family in ("onednn", "trace", "gpu"):
            assert ds.summary(family=family, output="rows").rows == duck.summary(family=family, output="rows").rows
        assert len(ds.sources()) == len(FILES)


def test_a_second_spark_ingest_adds_nothing(spark, spark_dataset):
    from loganalyze.spark.ingest import ingest_with_spark

    before = sorted(spark_dataset.rglob("*.parquet"))
    again = ingest_with_spark(spark, FILES + [str(SAMPLES / "nosuch.log")], spark_dataset).collect()
    assert sorted(r.status for r in again) == ["duplicate"] * len(FILES) + ["error"]
    assert sorted(spark_dataset.rglob("*.parquet")) == before


def test_onednn_per_kind_equals_duckdb(spark, spark_dataset, duck):
    from loganalyze.spark.summary import onednn_by_kind

    got = [(r.kind, r.exec_count, r.exec_ms, r.create_count, r.create_ms)
           for r in onednn_by_kind(spark, spark_dataset).collect()]
    want = duck.summary(by="kind", family="onednn", output="rows").records()
    assert len(got) == len(want) > 3
    exact = {(r["kind"], r["exec_count"], Decimal(repr(r["exec_ms"])), r["create_count"],
              Decimal(repr(r["create_ms"]))) for r in want}
    assert set(got) == exact  # Decimal('2.0234368') == Decimal('2.023436800'): exact, not close


def test_gpu_per_kernel_equals_duckdb(spark, spark_dataset, duck):
    from loganalyze.spark.summary import gpu_by_kernel

    got = [tuple(r) for r in gpu_by_kernel(spark, spark_dataset).collect()]
    want = [(r["kernel"], r["count"], r["total_ns"], r["min_ns"], r["max_ns"])
            for r in duck.summary(by="kernel", family="gpu", output="rows").records()]
    assert len(got) > 3
    assert got == want


def test_trace_per_operator_equals_duckdb(spark, spark_dataset, duck):
    from loganalyze.spark.summary import trace_by_operator

    got = trace_by_operator(spark, spark_dataset).collect()
    want = duck.summary(by="op", family="trace", output="rows").records()
    assert len(got) == len(want) > 10
    for g, w in zip(got, want):
        assert (g["op"], g["count"]) == (w["op"], w["count"])
        assert float(f"{g.total_ns / 1000.0:.15g}") == w["total_us"]
        assert float(f"{g.self_ns / 1000.0:.15g}") == w["self_us"]
