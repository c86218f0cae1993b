"""The same parsers on Apache Spark (``pip install 'loganalyze[spark]'``).

- :func:`~loganalyze.spark.ingest.ingest_with_spark`: parse files on Spark executors with the
  normal importers (``mapInArrow`` over a DataFrame of paths) into a Parquet dataset, the
  same dataset ``loganalyze ingest --to parquet`` writes;
- :mod:`loganalyze.spark.summary`: the per-kind (oneDNN), per-kernel (GPU) and per-operator
  (trace) summaries as Spark DataFrame code over any loganalyze dataset.

pyspark is imported only by these modules' functions; see docs/scaling.md.
"""
