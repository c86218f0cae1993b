"""The ingest progress bar (rich): shown on a terminal for files that take over a second."""
from __future__ import annotations

import time
from typing import Any, Callable

#: a file is given a bar once it has been read for this long
DELAY_S = 1.0


class IngestProgress:
    """A progress factory for :meth:`loganalyze.Database.iter_ingest`: called with each input
    file, it returns the callback the importer reports bytes read to.  The bar (file name,
    bytes, speed, time left where the size is known) appears after :data:`DELAY_S` and is
    removed when the file is done, so that the per-file report prints on a clean line."""

    def __init__(self) -> None:
        self._progress = None
        self._task = None
        self._file: Any = None
        self._started = 0.0

    def __call__(self, file) -> Callable[[int], None]:
        self.file_done()
        self._file = file
        self._started = time.monotonic()
        return self.update

    def update(self, done: int) -> None:
        if self._task is None:
            if time.monotonic() - self._started < DELAY_S:
                return
            self._start()
        self._progress.update(self._task, completed=done)

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                                   TransferSpeedColumn)

        total = self._file.size if getattr(self._file, "compression", None) is None else None
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                                  TransferSpeedColumn(), TimeRemainingColumn(),
                                  console=Console(stderr=True), transient=True)
        self._progress.start()
        self._task = self._progress.add_task(f"reading {self._file.name}", total=total)

    def file_done(self) -> None:
        """Remove the bar of the file just finished (if it had one)."""
        if self._progress is not None:
            self._progress.stop()
        self._progress = None
        self._task = None
