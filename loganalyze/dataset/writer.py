"""Write the rows of some sources from a DuckDB store into a Parquet dataset (append only).

The rows are read from any connection holding the schema's tables (a database file, or the
scratch in-memory database of a dataset ingest) and written with DuckDB's ``COPY ... TO``,
one part file per table and partition (run, format), ``source_id`` replaced by the dataset id
derived from the content hash.  Existing part files are never touched; the ``sources`` part
of each partition is renamed into place last.
"""
from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .layout import (SOURCES, Column, DatasetError, PartNamer, dataset_source_id, partition_dir,
                     schema_tables, temp_name)

#: Parquet compression of the part files (zstd: small files, fast to read; DuckDB and Spark read it)
COMPRESSION = "zstd"


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
    import pyarrow as pa

    stats = WriteStats()
    if not sources:
        return stats
    namer = namer or PartNamer()
    tables = schema_tables()
    by_partition: dict[tuple[str | None, str], list[SourceToWrite]] = defaultdict(list)
    for s in sources:
        by_partition[(s.run_label, s.format)].append(s)
    for (run, fmt), group in by_partition.items():
        id_map = pa.table({  # noqa: F841 - read by DuckDB's replacement scan
            "store_id": pa.array([s.source_id for s in group], pa.int64()),
            "dataset_id": pa.array([s.dataset_id for s in group], pa.int64()),
        })
        con.execute("CREATE OR REPLACE TEMP TABLE _ds_map AS SELECT * FROM id_map")
        try:
            written: list[tuple[Path, Path]] = []
            for table, columns in tables.items():
                if table == SOURCES:
                    continue
                query = _table_query(table, columns)
                _copy(con, query, partition_dir(root, table, run, fmt), namer, table, stats, written)
            # the sources part last: a reader sees a file's rows all at once or not at all
            _copy(con, _table_query(SOURCES, tables[SOURCES]), partition_dir(root, SOURCES, run, fmt),
                  namer, SOURCES, stats, written)
        except BaseException:
            for tmp, _ in written:
                tmp.unlink(missing_ok=True)
            raise
        finally:
            con.execute("DROP TABLE IF EXISTS temp._ds_map")
        for tmp, final in written:
            os.replace(tmp, final)
            stats.files.append(final)
        stats.sources += len(group)
    return stats


def _table_query(table: str, columns: tuple[Column, ...]) -> str:
    if not any(c.name == "source_id" for c in columns):
        if table != "onednn_shapes":
            raise DatasetError(f"table {table} has no source_id: the dataset writer does not know it")
        # the shared dictionary: the shapes this partition's events use (duplicates across
        # partitions are dropped on read)
        return (f"SELECT {_select_list(columns, 't')} FROM onednn_shapes t WHERE t.shape_id IN "
                "(SELECT e.shape_id FROM onednn_events e JOIN _ds_map m ON e.source_id = m.store_id)")
    return f"SELECT {_select_list(columns, 't')} FROM \"{table}\" t JOIN _ds_map m ON t.source_id = m.store_id"


def _copy(con, query: str, directory: Path, namer: PartNamer, table: str, stats: WriteStats,
          written: list[tuple[Path, Path]]) -> None:
    """COPY ``query`` to a new part file in ``directory`` under its temporary name (no file when
    the query has no rows)."""
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / namer.next_name()
    tmp = temp_name(final)
    written.append((tmp, final))
    count = con.execute(f"COPY ({query}) TO '{_sql_path(tmp)}' (FORMAT parquet, COMPRESSION {COMPRESSION})"
                        ).fetchone()[0]
    if not count:
        written.pop()
        tmp.unlink(missing_ok=True)
        for empty in (directory, directory.parent):  # no empty partition directories left behind
            try:
                empty.rmdir()
            except OSError:
                break
        return
    stats.rows[table] += count


def _sql_path(path: Path) -> str:
    return str(path).replace("'", "''")
