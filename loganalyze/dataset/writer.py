"""Write the rows of some sources from a DuckDB store into a Parquet dataset (append only).

The rows are read from any connection holding the schema's tables (a database file, or the
scratch in-memory database of a dataset ingest) as Arrow batches and written with pyarrow,
one part file per table and partition (run, format), ``source_id`` replaced by the dataset id
derived from the content hash.  Existing part files are never touched; the ``sources`` part
of each partition is renamed into place last.
"""
from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .layout import (RUNS, SOURCES, Column, DatasetError, PartNamer, dataset_source_id, partition_dir,
                     schema_tables, temp_name)

#: Parquet compression of the part files (zstd: small files, fast to read; DuckDB and Spark read it)
COMPRESSION = "zstd"
#: rows per Arrow batch between DuckDB and the Parquet writer (one row group per batch)
ROWS_PER_BATCH = 1 << 20


@dataclass
class SourceToWrite:
    """One file of the store to copy into the dataset."""

    source_id: int  # its id in the store the rows are read from
    sha256: str
    run_label: str | None
    format: str

    @property
    def dataset_id(self) -> int:
        return dataset_source_id(self.sha256)


@dataclass
class WriteStats:
    """What one :func:`write_sources` call wrote."""

    files: list[Path] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    sources: int = 0


def _select_list(columns: tuple[Column, ...], alias: str) -> str:
    out = []
    for c in columns:
        if c.name == "source_id":
            out.append("m.dataset_id AS source_id")
        elif c.stored_type:
            out.append(f'CAST({alias}."{c.name}" AS {c.stored_type}) AS "{c.name}"')
        else:
            out.append(f'{alias}."{c.name}"')
    return ", ".join(out)


def write_sources(con, root: str | os.PathLike, sources: list[SourceToWrite],
                  namer: PartNamer | None = None) -> WriteStats:
    """Append the rows of ``sources`` (read through ``con``) to the dataset at ``root``."""
    stats = WriteStats()
    if not sources:
        return stats
    namer = namer or PartNamer()
    tables = schema_tables()
    by_partition: dict[tuple[str | None, str], list[SourceToWrite]] = defaultdict(list)
    for s in sources:
        by_partition[(s.run_label, s.format)].append(s)
    for (run, fmt), group in by_partition.items():
        # the id map inline: a read-only database may not scan Python objects or write files
        id_map = "(VALUES " + ", ".join(f"({int(s.source_id)}, {int(s.dataset_id)})" for s in group) + \
            ") AS m(store_id, dataset_id)"
        written: list[tuple[Path, Path]] = []
        try:
            for table, columns in tables.items():
                if table == SOURCES or (table == RUNS and run is None):
                    continue
                query = _table_query(table, columns, id_map, run)
                _write_part(con, query, partition_dir(root, table, run, fmt), namer, table, stats, written)
            # the sources part last: a reader sees a file's rows all at once or not at all
            _write_part(con, _table_query(SOURCES, tables[SOURCES], id_map, run), partition_dir(root, SOURCES, run, fmt),
                        namer, SOURCES, stats, written)
        except BaseException:
            for tmp, _ in written:
                tmp.unlink(missing_ok=True)
            raise
        for tmp, final in written:
            os.replace(tmp, final)
            stats.files.append(final)
        stats.sources += len(group)
    return stats


def _table_query(table: str, columns: tuple[Column, ...], id_map: str, run: str | None) -> str:
    if table == RUNS:  # the run's metadata: one row, repeated by every writer of the run (merged on read)
        label = "'" + str(run).replace("'", "''") + "'"
        return f"SELECT {_select_list(columns, 't')} FROM runs t WHERE t.run_label = {label}"
    if not any(c.name == "source_id" for c in columns):
        if table != "onednn_shapes":
            raise DatasetError(f"table {table} has no source_id: the dataset writer does not know it")
        # the shared dictionary: the shapes this partition's events use (duplicates across
        # partitions are dropped on read)
        return (f"SELECT {_select_list(columns, 't')} FROM onednn_shapes t WHERE t.shape_id IN "
                f"(SELECT e.shape_id FROM onednn_events e JOIN {id_map} ON e.source_id = m.store_id)")
    return f'SELECT {_select_list(columns, "t")} FROM "{table}" t JOIN {id_map} ON t.source_id = m.store_id'


def _write_part(con, query: str, directory: Path, namer: PartNamer, table: str, stats: WriteStats,
                written: list[tuple[Path, Path]]) -> None:
    """Write the rows of ``query`` to a new part file in ``directory`` under its temporary
    name (no file when there are no rows).  pyarrow writes the file: DuckDB streams Arrow
    batches, so memory stays at one batch, and a read-only database can be exported too."""
    import pyarrow.parquet as pq

    from ..store import finish_results

    finish_results(con)
    reader = con.sql(query).to_arrow_reader(ROWS_PER_BATCH)
    writer = None
    count = 0
    try:
        for batch in reader:
            if not batch.num_rows:
                continue
            if writer is None:
                directory.mkdir(parents=True, exist_ok=True)
                final = directory / namer.next_name()
                tmp = temp_name(final)
                written.append((tmp, final))
                writer = pq.ParquetWriter(tmp, reader.schema, compression=COMPRESSION)
            writer.write_batch(batch)
            count += batch.num_rows
    finally:
        if writer is not None:
            writer.close()
    stats.rows[table] += count
