"""A Parquet dataset as a second store: the same tables as a database, Hive-partitioned by run
and format, appended to by any number of independent writers.

- :func:`~loganalyze.dataset.ingest.ingest_to_dataset`: files into a dataset
  (``loganalyze ingest --to parquet DIR``);
- :func:`~loganalyze.dataset.export.export_to_dataset`: a database into a dataset
  (``loganalyze export --parquet DIR``);
- :class:`~loganalyze.dataset.reader.DatasetStore`: a dataset opened for reading
  (``loganalyze.connect(dataset=DIR)``, ``--dataset DIR``).

The layout is in :mod:`loganalyze.dataset.layout`; see docs/scaling.md.
"""
from .layout import DatasetError, dataset_source_id

__all__ = ["DatasetError", "dataset_source_id"]
