"""Parse files on Spark executors into a Parquet dataset.

The driver expands the inputs (files, globs, directories) into a DataFrame of paths; each
partition runs :class:`~loganalyze.dataset.ingest.DatasetIngest` (the normal importers into a
scratch in-memory DuckDB, then new part files in the dataset) through ``mapInArrow`` and
yields one result row per file.  Executors therefore need the inputs and the dataset
directory on a file system they all see (local mode, NFS, a cluster file system mounted at
the same path); the claims in the dataset keep two tasks (or a task retried by Spark) from
adding the same content twice.
"""
from __future__ import annotations

import os
from typing import Iterator

#: the rows the Spark job returns: one per input file
RESULT_SCHEMA = ("path string, status string, message string, source_id long, format string, "
                 "lines_parsed long, size_bytes long")


class _ParseFiles:
    """The function ``mapInArrow`` runs on each partition (picklable: plain attributes)."""

    def __init__(self, root: str, run: str | None):
        self.root, self.run = root, run

    def __call__(self, batches: Iterator) -> Iterator:
        import pyarrow as pa

        from ..dataset.ingest import ingest_to_dataset

        paths = [p for b in batches for p in b.column("path").to_pylist()]
        rows = []
        for res in ingest_to_dataset(self.root, paths, run_label=self.run):
            rows.append({"path": res.path, "status": res.status, "message": res.message,
                         "source_id": res.source_id, "format": res.format,
                         "lines_parsed": res.source.get("lines_parsed"), "size_bytes": res.source.get("size_bytes")})
        if rows:
            yield pa.RecordBatch.from_pylist(rows, schema=_arrow_schema())


def _arrow_schema():
    import pyarrow as pa

    return pa.schema([("path", pa.string()), ("status", pa.string()), ("message", pa.string()),
                      ("source_id", pa.int64()), ("format", pa.string()), ("lines_parsed", pa.int64()),
                      ("size_bytes", pa.int64())])


def ingest_with_spark(spark, paths: list[str], root: str | os.PathLike, run: str | None = None,
                      partitions: int | None = None):
    """Parse ``paths`` on the executors of ``spark`` (a ``SparkSession``) into the dataset at
    ``root``; returns a DataFrame of results, one row per file (``RESULT_SCHEMA``).  The job
    runs when the DataFrame is used (``collect()``, ``count()``, a write)."""
    from ..inputs import expand_paths

    root = os.path.abspath(os.fspath(root))
    found = expand_paths([os.fspath(p) for p in paths])
    files = [os.path.abspath(c.path) for c in found if not c.error]
    errors = [(c.path, "error", c.error, None, None, None, None) for c in found if c.error]
    n = partitions or max(1, min(len(files), spark.sparkContext.defaultParallelism))
    parsed = (spark.createDataFrame([(f,) for f in files], "path string").repartition(n)
              .mapInArrow(_ParseFiles(root, run), RESULT_SCHEMA))
    if errors:
        parsed = parsed.unionByName(spark.createDataFrame(errors, RESULT_SCHEMA))
    return parsed
