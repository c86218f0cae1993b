"""Ingest files straight into a Parquet dataset (``loganalyze ingest --to parquet DIR``).

The normal importers read each file into a scratch in-memory database (the same code path as
a database ingest, one transaction per file); every :data:`FLUSH_FILES` files, or
:data:`FLUSH_ROWS` rows, the batch is appended to the dataset as new part files and dropped
from the scratch database.  Content the dataset holds already (same ``sha256``) is reported
as a duplicate and adds nothing; two writers of the same content at once are kept apart by
claims (:mod:`loganalyze.dataset.claims`).
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Callable, Iterator

from ..identity import StoredSource
from ..ingest import _duplicate
from ..scratch import KnownSource, ScratchStore
from .claims import claim, known_sources, release
from .layout import PartNamer, dataset_source_id
from .writer import SourceToWrite, write_sources

#: files parsed into the scratch database before they are written out
FLUSH_FILES = 200
#: rows (lines or events parsed) held in the scratch database before they are written out
FLUSH_ROWS = 2_000_000


class DatasetIngest:
    """One writer appending files to the dataset at ``root``."""

    def __init__(self, root: str | os.PathLike, run_meta: dict | None = None):
        self.root = root
        self.run_meta = run_meta or {}  # commit, branch, tags: recorded with the run as a database does
        self.store = ScratchStore(known_sources(root))
        self.namer = PartNamer()
        self.pending: list[SourceToWrite] = []
        self.pending_rows = 0

    def ingest(self, paths: list[str], run_label: str | None = None,
               progress_factory: Callable | None = None) -> Iterator:
        """One :class:`~loganalyze.ingest.IngestResult` per file, with dataset source ids; the
        last batch is written before the iterator ends."""
        from ..ingest import ingest_paths

        try:
            for res in ingest_paths(self.store, paths, run_label=run_label, progress_factory=progress_factory):
                res = self._take(res)
                yield res
                if len(self.pending) >= FLUSH_FILES or self.pending_rows >= FLUSH_ROWS:
                    self.flush()
            self.flush()
        except BaseException:
            release(self.root, [s.sha256 for s in self.pending])
            self.pending = []
            raise

    def _take(self, res):
        """Claim an ingested file for this writer (or give it up), and name it by its dataset id."""
        from ..query.catalog import remove_sources

        if res.status == "duplicate" and res.source_id is not None:
            return self._duplicate(res)
        if res.status != "ingested":
            return res
        sha = res.source["sha256"]
        known = self.store.known.get(sha)
        if known is not None:  # content the dataset holds: parsed for nothing, dropped again
            with self.store.transaction():
                remove_sources(self.store.con, [res.source_id])
            return replace(_duplicate(res.path, StoredSource(known.source_id, known.path, known.run_label)),
                           format=known.format)
        if not claim(self.root, sha):
            with self.store.transaction():
                remove_sources(self.store.con, [res.source_id])
            return replace(res, status="duplicate", source_id=dataset_source_id(sha),
                           message=f"{res.path}: being written to {self.root} by another writer "
                                   f"(or a killed one: remove {self.root}/_claims/{sha})")
        self.pending.append(SourceToWrite(res.source_id, sha, res.source.get("run_label"), res.format))
        self.pending_rows += int(res.source.get("lines_parsed") or 0)
        source = dict(res.source, source_id=dataset_source_id(sha))
        return replace(res, source_id=source["source_id"], source=source)

    def _duplicate(self, res):
        """A duplicate named by its dataset id and format (ingest reports scratch ids for files
        still pending, and dataset ids, the hashes, for files written)."""
        row = self.store.con.execute("SELECT sha256, format FROM sources WHERE source_id = ?",
                                     [res.source_id]).fetchone()
        if row:
            return replace(res, source_id=dataset_source_id(row[0]), format=row[1])
        known = self.store.by_id.get(res.source_id)
        return replace(res, format=known.format if known else None)

    def flush(self) -> None:
        """Write the pending files to the dataset and drop them from the scratch database."""
        from ..query.catalog import remove_sources

        from .. import runmeta

        if not self.pending:
            return
        for run in {s.run_label for s in self.pending if s.run_label is not None}:
            runmeta.record(self.store.con, run, **self.run_meta)
        write_sources(self.store.con, self.root, self.pending, self.namer)
        for s in self.pending:
            size, path = self.store.con.execute("SELECT size_bytes, path FROM sources WHERE source_id = ?",
                                                [s.source_id]).fetchone()
            self.store.remember(s.sha256, KnownSource(s.dataset_id, path, s.run_label, size, s.format))
        with self.store.transaction():
            remove_sources(self.store.con, [s.source_id for s in self.pending])
        self.pending, self.pending_rows = [], 0

    def close(self) -> None:
        self.store.close()


def ingest_to_dataset(root: str | os.PathLike, paths: list[str], run_label: str | None = None,
                      progress_factory: Callable | None = None, commit: str | None = None,
                      branch: str | None = None, tags=None) -> Iterator:
    """Ingest ``paths`` (files, globs, directories, ``-``) into the dataset at ``root``,
    yielding one :class:`~loganalyze.ingest.IngestResult` per file; a run's metadata
    (``commit``, ``branch``, ``tags`` as for a database ingest) goes into its ``runs`` part."""
    from .. import runmeta

    if tags is not None and not isinstance(tags, dict):
        tags = runmeta.parse_tags(list(tags))
    writer = DatasetIngest(root, {"commit": commit, "branch": branch, "tags": tags})
    try:
        yield from writer.ingest(paths, run_label, progress_factory)
    finally:
        writer.close()
