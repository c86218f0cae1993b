"""Per-kind (oneDNN), per-kernel (GPU) and per-operator (trace) totals in Spark DataFrame code,
over a loganalyze Parquet dataset.

They mirror the DuckDB query layer's definitions (``loganalyze/query``): the same rows count,
the same sums (oneDNN milliseconds as DECIMAL(38,18) per event, as loganalyze/query/onednn_summary.py sums them, GPU and trace times as integer
nanoseconds), so the totals are equal to ``loganalyze summary --dataset DIR`` digit for digit.
Only the main statistics are computed (counts, totals, min and max; no medians or shares).
"""
from __future__ import annotations

import os


def read_table(spark, root: str | os.PathLike, table: str):
    """One table of the dataset as a DataFrame (every part file; the run/format directories
    are not turned into columns: the files carry every column)."""
    from ..dataset.layout import DatasetError, has_parts

    if not has_parts(root, table):
        raise DatasetError(f"{root}: no {table} in this dataset")
    df = (spark.read.option("recursiveFileLookup", "true").option("mergeSchema", "true")
          .option("pathGlobFilter", "*.parquet").parquet(os.path.join(os.fspath(root), table)))
    if table == "onednn_shapes":  # the shared dictionary repeats across partitions
        df = df.dropDuplicates(["shape_id"])
    if table == "sources":
        df = df.dropDuplicates(["source_id"])
    return df


def onednn_by_kind(spark, root):
    """oneDNN primitives per kind: exec count and time, create count and time (ms, exact
    decimals), sorted by exec time."""
    from pyspark.sql import functions as F

    ev = read_table(spark, root, "onednn_events")
    sh = read_table(spark, root, "onednn_shapes")
    prim = (ev.join(sh, "shape_id")
            .where((F.coalesce(F.expr("nullif(component, '')"), F.lit("primitive")) == "primitive")
                   & F.col("op_class").isin("exec", "create", "create_nested", "check", "dispatch")))
    ms = F.col("time_ms").cast("decimal(38,18)")

    def of(cls, what):
        return F.when(F.col("op_class") == cls, what)

    return (prim.groupBy(F.coalesce(F.col("kind"), F.lit("")).alias("kind"))
            .agg(F.count(of("exec", F.col("time_ms"))).alias("exec_count"),
                 F.coalesce(F.sum(of("exec", ms)), F.lit(0).cast("decimal(38,18)")).alias("exec_ms"),
                 F.count(of("create", F.col("time_ms"))).alias("create_count"),
                 F.coalesce(F.sum(of("create", ms)), F.lit(0).cast("decimal(38,18)")).alias("create_ms"))
            .orderBy(F.desc("exec_ms"), F.desc("create_ms"), "kind"))


def gpu_by_kernel(spark, root):
    """GPU kernels per name as stored: count, total, min and max (ns).  A file with kernel
    instances is counted from them, a report-only file (nvprof --print-summary, nsys stats)
    from its report rows, as ``summary --by kernel`` does."""
    from pyspark.sql import functions as F

    from ..dataset.layout import DatasetError

    k = read_table(spark, root, "gpu_kernels")
    inst = k.groupBy(F.col("name").alias("kernel")).agg(
        F.count("duration_ns").alias("n"), F.sum("duration_ns").alias("total"),
        F.min("duration_ns").alias("mn"), F.max("duration_ns").alias("mx"))
    parts = inst
    try:
        rep = read_table(spark, root, "gpu_report_rows")
    except DatasetError:  # no report rows in the dataset
        rep = None
    if rep is not None:
        with_instances = k.select("source_id").distinct()
        rep = (rep.where(F.col("category") == "kernel").join(with_instances, "source_id", "left_anti")
               .groupBy(F.col("name").alias("kernel"))
               .agg(F.sum("count").alias("n"), F.sum("total_ns").alias("total"),
                    F.min("min_ns").alias("mn"), F.max("max_ns").alias("mx")))
        parts = inst.unionByName(rep)
    return (parts.groupBy("kernel")
            .agg(F.sum("n").cast("long").alias("count"), F.sum("total").cast("long").alias("total_ns"),
                 F.min("mn").cast("long").alias("min_ns"), F.max("mx").cast("long").alias("max_ns"))
            .orderBy(F.desc_nulls_last("total_ns"), "kernel"))


def trace_by_operator(spark, root):
    """Trace operators per name: count, inclusive and self time, min, max (ns), sorted by self
    time."""
    from pyspark.sql import functions as F

    ops = read_table(spark, root, "trace_events").where((F.col("role") == "op") & F.col("dur_ns").isNotNull())
    return (ops.groupBy(F.col("name").alias("op"))
            .agg(F.count(F.lit(1)).alias("count"), F.sum("dur_ns").alias("total_ns"),
                 F.sum("self_ns").alias("self_ns"), F.min("dur_ns").alias("min_ns"),
                 F.max("dur_ns").alias("max_ns"))
            .orderBy(F.desc("self_ns"), F.desc("total_ns"), "op"))
