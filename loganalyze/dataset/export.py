"""Export files of a database into a Parquet dataset (``loganalyze export --parquet DIR``)."""
from __future__ import annotations

import os
from dataclasses import dataclass

from .claims import claim, known_sources, release
from .writer import SourceToWrite, WriteStats, write_sources


@dataclass
class DatasetExport:
    """What an export added: files written, files the dataset held already, part files and rows."""

    added: int
    already_there: int
    stats: WriteStats


def export_to_dataset(con, root: str | os.PathLike, source_ids: list[int] | None = None,
                      run: str | None = None) -> DatasetExport:
    """Append the chosen files of the database behind ``con`` (every file by default) to the
    dataset at ``root``; files whose content the dataset holds already are left out."""
    from ..query.filters import source_filter

    where, params = source_filter(run, source_ids)
    rows = con.execute(
        "SELECT source_id, sha256, run_label, format FROM sources"
        + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY source_id", params).fetchall()
    known = known_sources(root)
    todo = [SourceToWrite(*r) for r in rows if r[1] not in known]
    todo = [s for s in todo if claim(root, s.sha256)]
    try:
        stats = write_sources(con, root, todo)
    except BaseException:
        release(root, [s.sha256 for s in todo])
        raise
    return DatasetExport(len(todo), len(rows) - len(todo), stats)
