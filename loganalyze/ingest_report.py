"""What an ingest did, by format: the table ``loganalyze ingest`` ends with, and its progress bar
over many files (files/s and MB/s)."""
from __future__ import annotations

import time
from typing import Iterable

from .progress import LazyBar

#: columns of :func:`by_format`
COLUMNS = ["format", "ingested", "skipped", "rejected", "lines_parsed"]
#: how a file that no importer read is counted
UNKNOWN_FORMAT = "(not recognised)"


def by_format(results: Iterable) -> tuple[list[str], list[tuple]]:
    """One row per format: files ingested, skipped (already there) and rejected (errors), and
    the lines (events, rows) parsed; a last row ``total``."""
    rows: dict[str, list[int]] = {}
    for res in results:
        fmt = res.format or UNKNOWN_FORMAT
        row = rows.setdefault(fmt, [0, 0, 0, 0])
        col = {"ingested": 0, "duplicate": 1}.get(res.status, 2)
        row[col] += 1
        if res.status == "ingested":
            row[3] += int(res.source.get("lines_parsed") or 0)
    out = [(fmt, *counts) for fmt, counts in sorted(rows.items(), key=lambda kv: (kv[0] == UNKNOWN_FORMAT, kv[0]))]
    if len(out) > 1:
        out.append(("total", *(sum(r[i] for r in out) for i in range(1, len(COLUMNS)))))
    return COLUMNS, out


class FilesBar(LazyBar):
    """One bar over every input of an ingest: bytes (with MB/s) and files (with files/s)."""

    def __init__(self, total_bytes: int, total_files: int):
        super().__init__(f"0/{total_files} files", total_bytes)
        self.total_files = total_files
        self.files = 0
        self.bytes = 0
        self._t0 = time.monotonic()

    def file_done(self, size: int) -> None:
        """One more file written (``size`` bytes of input)."""
        self.files += 1
        self.bytes += size
        self.update(self.bytes)
        if self._progress is not None:
            rate = self.files / max(time.monotonic() - self._t0, 1e-9)
            self._progress.update(self._task, description=f"{self.files}/{self.total_files} files, {rate:.1f} files/s")
