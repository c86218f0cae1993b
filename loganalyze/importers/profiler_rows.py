"""Rows of ``profiler_tables``: the aggregate tables of the MXNet, PyTorch and CNTK importers."""
from __future__ import annotations

from .base import IngestContext, RowBuffer, arrow_types


def insert_profiler_rows(ctx: IngestContext, rows: list[dict]) -> None:
    """Rows of ``profiler_tables`` (dicts keyed by column; missing keys are NULL)."""
    buf = RowBuffer(ctx, "profiler_tables", [c for c in arrow_types(ctx.con, "profiler_tables") if c != "source_id"])
    buf.extend(rows)
    buf.flush()
