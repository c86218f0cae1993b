"""Progress bars (rich) for the command line: shown on a terminal for work that has taken
over a second, removed when it ends so that the report prints on a clean line."""
from __future__ import annotations

import time
from typing import Any, Callable

#: a bar appears once the work has run for this long
DELAY_S = 1.0


class LazyBar:
    """One bar for one piece of work: ``update(done)`` as it goes, ``close()`` at the end.
    Nothing is drawn for work that ends within :data:`DELAY_S`."""

    def __init__(self, description: str, total: int | None, unit: str = "bytes"):
        self.description, self.total, self.unit = description, total, unit
        self._started = time.monotonic()
        self._progress = None
        self._task = None

    def update(self, done: int) -> None:
        if self._progress is None:
            if time.monotonic() - self._started < DELAY_S:
                return
            self._start()
        self._progress.update(self._task, completed=done)

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import (BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeRemainingColumn, TransferSpeedColumn)

        amount = [DownloadColumn(), TransferSpeedColumn()] if self.unit == "bytes" else [MofNCompleteColumn()]
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), *amount, TimeRemainingColumn(),
                                  console=Console(stderr=True), transient=True)
        self._progress.start()
        self._task = self._progress.add_task(self.description, total=self.total)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
        self._progress = None
        self._task = None


class IngestProgress:
    """A progress factory for :meth:`loganalyze.Database.iter_ingest`: called with each input
    file, it returns the callback the importer reports bytes read to (the file's size is the
    total, unknown for compressed files)."""

    def __init__(self) -> None:
        self.bar: LazyBar | None = None

    def __call__(self, file: Any) -> Callable[[int], None]:
        self.file_done()
        total = file.size if getattr(file, "compression", None) is None else None
        self.bar = LazyBar(f"reading {file.name}", total)
        return self.bar.update

    def file_done(self) -> None:
        """Remove the bar of the file just finished (if it had one)."""
        if self.bar is not None:
            self.bar.close()
        self.bar = None
