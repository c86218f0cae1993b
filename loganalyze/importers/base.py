"""What every importer shares: the context it writes through, and how skipped input is kept.

An importer reads one :class:`~loganalyze.inputs.InputFile` and writes its family's tables
through ``ctx.con`` inside the transaction the caller opened; it reports lines it could not
use with :meth:`IngestContext.skip`, and fills the ``ctx.source`` fields it knows.  The caller
(``loganalyze.ingest``) writes the ``sources`` row and commits, or rolls everything back.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import duckdb
import pyarrow as pa

from ..inputs import InputFile


@dataclass
class IngestContext:
    con: duckdb.DuckDBPyConnection
    source_id: int
    file: InputFile
    #: columns of the ``sources`` row the importer fills (dialect, library_version, ...)
    source: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    progress: Any = None  # callable(bytes_done) or None
    _skipped: list[tuple[int, str, str]] = field(default_factory=list)
    skipped_count: int = 0

    def skip(self, line_no: int, reason: str, text: str | bytes | None = None) -> None:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        if text is not None:
            text = text.rstrip("\r\n")[:200]
        self._skipped.append((line_no, reason, text))
        self.skipped_count += 1
        if len(self._skipped) >= 50000:
            self.flush_skipped()

    def flush_skipped(self) -> None:
        if not self._skipped:
            return
        nums, reasons, texts = zip(*self._skipped)
        tbl = pa.table(
            {
                "source_id": pa.array([self.source_id] * len(nums), pa.int32()),
                "line_no": pa.array(nums, pa.int64()),
                "reason": pa.array(reasons, pa.string()),
                "text": pa.array(texts, pa.string()),
            }
        )
        self.con.execute("INSERT INTO skipped_lines SELECT * FROM tbl")  # replacement scan of ``tbl``
        self._skipped.clear()


class Importer(Protocol):
    #: value of ``sources.format``
    format: str

    def sniff(self, head: bytes, name: str) -> int:
        """How sure this importer is that it reads a file starting with ``head`` (0-100)."""

    def ingest(self, ctx: IngestContext) -> None:
        """Read ``ctx.file`` into the store; raise InputError when nothing usable is in it."""
