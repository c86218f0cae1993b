"""loganalyze: ML backend logs and profiles into DuckDB, and the questions asked of them.

>>> import loganalyze
>>> with loganalyze.connect("runs.duckdb") as db:          # doctest: +SKIP
...     db.ingest(["mkldnn_verbose.log"], run="nightly-42")
...     print(db.summary(by="kind"))

See docs/api.md.  Importing this package is cheap: DuckDB and pandas are loaded when a
database is opened or a DataFrame is made.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from .api import Database, LoganalyzeError, Rows


def connect(path=None, read_only: bool = False, wait: float = 60.0, on_wait=None, dataset=None) -> "Database":
    """Open (or create) a loganalyze database: a DuckDB file; ``None`` means
    ``$LOGANALYZE_DB`` or ``./loganalyze.duckdb``; ``":memory:"`` an in-memory one; waits up to
    ``wait`` seconds for another process's lock.  ``dataset=DIR`` opens a Parquet dataset
    read-only instead.  See :func:`loganalyze.api.connect`."""
    from .api import connect as _connect

    return _connect(path, read_only=read_only, wait=wait, on_wait=on_wait, dataset=dataset)


def __getattr__(name: str):
    if name in ("Database", "LoganalyzeError", "Rows", "FamilySummary"):
        from . import api

        return getattr(api, name)
    if name == "IngestResult":
        from .ingest import IngestResult

        return IngestResult
    raise AttributeError(f"module 'loganalyze' has no attribute {name!r}")


__all__ = ["connect", "Database", "LoganalyzeError", "Rows", "FamilySummary", "IngestResult", "__version__"]
