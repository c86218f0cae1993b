"""A scratch in-memory store that knows another store's content.

Worker processes (parallel ingest) and dataset writers parse files with the normal importers
into an in-memory DuckDB, then ship the rows elsewhere.  :class:`ScratchStore` answers
ingest's own duplicate check (size first, then hash) from a snapshot of the destination's
files, so content the destination holds is hashed once and never parsed.
"""
from __future__ import annotations

from dataclasses import dataclass

from .store import Store


@dataclass(frozen=True)
class KnownSource:
    """A file the destination store already holds."""

    source_id: int
    path: str
    run_label: str | None
    size_bytes: int
    format: str | None = None


def known_sources_of(con) -> dict[str, KnownSource]:
    """Every file of the store behind ``con`` (a database, or a dataset's views), by content hash."""
    rows = con.execute("SELECT sha256, source_id, path, run_label, size_bytes, format FROM sources").fetchall()
    return {sha: KnownSource(sid, path, run, size, fmt) for sha, sid, path, run, size, fmt in rows}


class ScratchStore(Store):
    """An in-memory store whose duplicate check also consults ``known`` (the destination's
    files, by content hash)."""

    def __init__(self, known: dict[str, KnownSource]):
        super().__init__(":memory:")
        # a worker's output is not the user's terminal: no DuckDB progress bar on it
        self.con.execute("SET enable_progress_bar = false")
        self.known = known
        self.by_id = {k.source_id: k for k in known.values()}
        self._sizes = {k.size_bytes for k in known.values()}

    def source_by_sha(self, sha256: str):
        k = self.known.get(sha256)
        if k is not None:
            return k.source_id, k.path, k.run_label
        return super().source_by_sha(sha256)

    def has_size(self, size: int) -> bool:
        return size in self._sizes or super().has_size(size)

    def remember(self, sha256: str, source: KnownSource) -> None:
        """A file written to the destination since this store was opened."""
        self.known[sha256] = source
        self.by_id[source.source_id] = source
        self._sizes.add(source.size_bytes)
